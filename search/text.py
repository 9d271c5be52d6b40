"""Text for the model and for matching: markup cleaned away (LaTeX by latex.py's table, Markdown emphasis),
the keys and ids made from it, and a word's English stem (what BM25 and the topics' labels compare)."""
from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from functools import lru_cache

from . import latex

_STARS = re.compile(r"\*+")
_EMPH_UNDERSCORE = re.compile(r"(?<![\w])_+(?=\S)|(?<=\S)_+(?![\w])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def strip_control(text: str) -> str:
    """Drop control and bidi-override characters; keep tabs and newlines."""
    return _CONTROL.sub("", text)


# reading a corpus cleans each abstract several times (merge key, id, text); at 19,630 abstracts a cache
# of 16,384 thrashed and cleaning took a fifth of the read (cProfile of load_corpus)
@lru_cache(maxsize=65_536)
def clean_for_model(text: str) -> str:
    """Plain text for the embedding model and BM25: no LaTeX, no Markdown emphasis.

    Applied to a fixed point, so cleaning clean text changes nothing (a pass can expose new markup,
    as in "\\\\textbf{x}").
    """
    for _ in range(8):
        cleaned = _clean_once(text)
        if cleaned == text:
            break
        text = cleaned
    return text


def _clean_once(text: str) -> str:
    text = strip_control(unicodedata.normalize("NFC", text))

    def math(m: re.Match) -> str:
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        return latex.to_plain(inner).replace("^", "").replace("_", "")

    text = latex.MATH.sub(math, text)
    text = latex.to_plain(text).replace("---", "—").replace("--", "–")
    # the `in` tests skip regex scans that find nothing in most abstracts (a million-paper build reads faster)
    if "*" in text:
        text = _STARS.sub("", text)                         # **bold**, *it*, ***Dro**pping*
    if "_" in text:
        text = _EMPH_UNDERSCORE.sub("", text)               # _emphasis_, not snake_case
    text = text.replace("$", "")
    return " ".join(text.split())  # str.split and re's \s agree on what whitespace is


def match_key(text: str) -> str:
    """A normal form that is equal for the same abstract written with different markup."""
    plain = clean_for_model(text).casefold()
    return re.sub(r"[\W_]+", "", plain)


def content_id(text: str) -> str:
    """A stable id from an abstract's content, independent of markup and position."""
    return id_from_digest(match_digest(text))


def match_digest(text: str) -> str:
    """sha1 of match_key: as good a key for grouping, and 40 characters instead of the abstract's length."""
    return hashlib.sha1(match_key(text).encode("utf-8")).hexdigest()


def id_from_digest(digest: str) -> str:
    return "p" + digest[:10]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# the tags a venue list's abstracts and titles carry ("<i>", "<p>", "<br/>"); "<Subject, Verb, Object>" in an
# abstract is text (seen in COLING, NAACL and WACV lists), so only these names are tags
_HTML_TAG = re.compile(r"</?(p|br|div|span|a|i|em|b|strong|u|sub|sup|tt|code|font|small|big|li|ul|ol)"
                       r"(\s[^<>]*)?/?>", re.IGNORECASE)
_HTML_EMPHASIS = {"i": "*", "em": "*", "b": "**", "strong": "**"}


def from_html(text: str) -> str:
    """HTML in a text (entities, tags) as the project's other abstracts write it: entities as characters
    ("&mdash;" -> "—"), emphasis as Markdown's (which the page shows and the model's text drops), other tags
    as a space or nothing. Text without "<" or "&" is returned as it is."""
    if "&" not in text and "<" not in text:
        return text

    def tag(m: re.Match) -> str:
        name = m.group(1).lower()
        if name in _HTML_EMPHASIS:
            return _HTML_EMPHASIS[name]
        return " " if name in ("p", "br", "div", "li", "ul", "ol") else ""

    return html.unescape(_HTML_TAG.sub(tag, text))


@lru_cache(maxsize=1)
def stemmer():
    """The English Snowball stemmer (PyStemmer), made once."""
    import Stemmer

    return Stemmer.Stemmer("english")


def stem_of(word: str) -> str:
    """A word's Snowball stem, lower-cased: "Caches" -> "cach"."""
    return stemmer().stemWord(word.lower())
