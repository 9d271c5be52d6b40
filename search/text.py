"""Text handling: markup cleaning for the model, safe Markdown for display, titles, sentences."""
from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

# LaTeX commands whose argument is dropped entirely (citations and cross-references).
_DROP_ARG = ("cite", "citep", "citet", "citealp", "citeauthor", "citeyear", "ref", "eqref",
             "label", "footnote", "url", "includegraphics")
# Symbols that carry meaning for a reader or the model.
_SYMBOLS = {"times": "×", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
            "approx": "≈", "sim": "~", "to": "→", "rightarrow": "→", "infty": "∞",
            "pm": "±", "ldots": "...", "dots": "...", "cdots": "...", "%": "%", "&": "&",
            "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", "~": "~", "sqrt": "sqrt"}
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
          "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi",
          "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Pi", "Sigma",
          "Phi", "Psi", "Omega"}

_CMD = re.compile(r"\\([A-Za-z]+|[%&_#${}~])\s*")
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_STARS = re.compile(r"\*+")
_EMPH_UNDERSCORE = re.compile(r"(?<![\w])_+(?=\S)|(?<=\S)_+(?![\w])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def strip_control(text: str) -> str:
    """Drop control and bidi-override characters; keep tabs and newlines."""
    return _CONTROL.sub("", text)


def _skip_group(text: str, i: int) -> tuple[str, int]:
    """Return the content of the brace group starting at text[i] == '{' and the index after it."""
    depth, j = 0, i
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
        j += 1
    return text[i + 1:], len(text)  # unbalanced: take the rest


def _delatex(text: str) -> str:
    """Turn LaTeX commands into plain text: \\textbf{X} -> X, \\citep{..} -> '', \\% -> %."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find("\\", i)
        # plain runs between commands are copied whole; only their group braces go
        out.append((text[i:] if j == -1 else text[i:j]).replace("{", "").replace("}", ""))
        if j == -1:
            return "".join(out)
        m = _CMD.match(text, j)
        if not m:  # a lone backslash
            out.append("\\")
            i = j + 1
            continue
        name = m.group(1)
        i = m.end()
        if name in _DROP_ARG:
            if i < len(text) and text[i] == "[":  # optional argument, e.g. \\citep[p.~3]{x}
                close = text.find("]", i)
                i = close + 1 if close != -1 else i
            if i < len(text) and text[i] == "{":
                _, i = _skip_group(text, i)
            continue
        if name == "href" and i < len(text) and text[i] == "{":
            _, i = _skip_group(text, i)  # drop the target, keep the link text that follows
            continue
        if name in _SYMBOLS:
            out.append(_SYMBOLS[name])
        elif name in _GREEK:
            out.append(name)
        # any other command (\\textbf, \\emph, \\mathrm, ...) disappears and its group's text stays


@lru_cache(maxsize=16_384)  # reading a corpus cleans each abstract several times (merge key, id, text)
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
        return _delatex(inner).replace("^", "").replace("_", "")

    text = _MATH.sub(math, text)
    text = _delatex(text).replace("---", "—").replace("--", "–")
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


# ---------------------------------------------------------------- display

_MD_ESCAPE = re.compile(r"([\\`<>\[\]()!&#|{}])")


def _escape_md(text: str) -> str:
    return _MD_ESCAPE.sub(r"\\\1", text)


def _display_latex_text(text: str) -> str:
    """Outside math: LaTeX text commands become Markdown emphasis, citations vanish."""
    text = re.sub(r"\\(?:textbf|mathbf)\{([^{}]*)\}", r"**\1**", text)
    text = re.sub(r"\\(?:textit|emph)\{([^{}]*)\}", r"*\1*", text)
    text = re.sub(r"\\(?:cite[a-z]*|ref|eqref|label|footnote)(?:\[[^\]]*\])?\{[^{}]*\}", "", text)
    text = re.sub(r"\\(?:href|url)\{[^{}]*\}", "", text)
    text = re.sub(r"\\([%&_#$])", r"\1", text)
    text = re.sub(r"\\(?:texttt|textrm|textsf|text|mathrm)\{([^{}]*)\}", r"\1", text)
    return text


_UNSAFE_TEX = re.compile(r"\\(?:href|url|includegraphics|htmlClass|htmlId|htmlStyle|htmlData|"
                         r"input|include|def|newcommand|renewcommand)\b")


def _segments(text: str):
    """Split display text into ("prose", text), ("emph", tag, text), ("math", tex, delimiter) and ("raw", text)."""
    text = strip_control(text)
    pos = 0
    for m in _MATH.finditer(text):
        yield "prose", text[pos:m.start()]
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        styled = re.fullmatch(r"\s*\\(textbf|textit|emph|texttt|mathbf)\{([\w\s.,:;+-]*)\}\s*", inner)
        if styled:  # $\textbf{C}$omics: emphasis dressed as math reads better as text
            if styled.group(2).strip():
                yield "emph", "b" if styled.group(1) in ("textbf", "mathbf") else "em", styled.group(2)
        elif _UNSAFE_TEX.search(inner) or "\n" in inner:
            yield "raw", clean_for_model(m.group(0))
        else:
            yield "math", inner.strip(), "$$" if m.group(1) is not None else "$"
        pos = m.end()
    yield "prose", text[pos:]


def to_html(text: str, mark: Callable[[str], bool] | None = None) -> str:
    """Safe inline HTML of the same text: emphasis kept, math as MathML, any HTML in the text shown as text."""
    parts: list[str] = []
    for kind, *rest in _segments(text):
        if kind == "prose":
            parts.append(_inline_markdown().renderInline(_markdown_prose(rest[0], mark)))
        elif kind == "emph":
            tag, words = rest
            parts.append(f"<{tag}>{html.escape(words)}</{tag}>")
        elif kind == "raw":
            parts.append(html.escape(rest[0]))
        else:
            tex, delimiter = rest
            parts.append(mathml(tex, display=delimiter == "$$") or html.escape(clean_for_model(f"${tex}$")))
    return "".join(parts)


@lru_cache(maxsize=1)
def _inline_markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).disable(["link", "image", "autolink", "backticks"])


# MathML elements and attributes a browser draws and that carry no links, styles or scripts
_MATHML_TAGS = frozenset("math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mover munder "
                         "munderover mtable mtr mtd mstyle mpadded mphantom menclose".split())
_MATHML_ATTRS = frozenset("display mathvariant stretchy fence separator accent accentunder movablelimits "
                          "displaystyle scriptlevel linethickness lspace rspace width height depth columnalign "
                          "rowspacing columnspacing notation largeop symmetric minsize maxsize form".split())


@lru_cache(maxsize=4096)
def mathml(tex: str, display: bool = False) -> str | None:
    """LaTeX math as MathML, or None when it does not convert to a tree of known, inert elements."""
    import xml.etree.ElementTree as ET

    from latex2mathml.converter import convert

    try:
        root = ET.fromstring(convert(tex, display="block" if display else "inline"))
    except Exception:  # latex2mathml raises many kinds on bad input; any of them means "show the source"
        return None
    for el in root.iter():
        el.tag = el.tag.rpartition("}")[2]
        if el.tag not in _MATHML_TAGS or not _MATHML_ATTRS.issuperset(el.attrib):
            return None
    return ET.tostring(root, encoding="unicode")


def _markdown_prose(text: str, mark: Callable[[str], bool] | None = None) -> str:
    """Prose as inline Markdown source: LaTeX text commands become emphasis; all but * and _ escaped."""
    text = _escape_md(re.sub(r"\\(?=[A-Za-z ])", "", _display_latex_text(text)))
    if mark:
        text = re.sub(r"(?<![\w*])([^\W\d_][\w-]*)", lambda m: f"**{m.group(1)}**" if mark(m.group(1))
                      else m.group(1), text)
    return text


def plain_markdown(text: str) -> str:
    """Escape text so Markdown shows it verbatim (queries, titles, labels)."""
    text = strip_control(text)
    return re.sub(r"([\\`*_\[\]()<>!&#|{}$~+\-=.])", r"\\\1", text)


# ---------------------------------------------------------------- titles

_INTRO = re.compile(
    r"\b(?:we|this paper|this work|here we)\s+(?:also\s+)?(?:propose|introduce|present|develop|"
    r"design|build|call|term|dub|name|release|construct|contribute|curate|offer)s?d?\b"
    r"(?P<rest>[^.;:]{0,200})", re.I)
_NAME = re.compile(r"(?<![\w-])((?:[A-Za-z0-9]+[-+]?)*[A-Za-z0-9]*[A-Z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)"
                   r"(?![\w-])")
_STOP_NAMES = {"A", "An", "The", "We", "In", "LLM", "LLMs", "AI", "ML", "RL", "GPU", "I", "To", "Our",
               "This", "It", "For", "On", "By", "As", "VLM", "VLMs", "NLP", "CNN", "MLLM", "MLLMs"}


def _is_method_name(tok: str, plain: str, at: int) -> bool:
    """ETAP, GMsFEM-NO, PG-Occ, ThinkMorph, C3B; not Text-Aware, nor an acronym defined earlier."""
    if tok in _STOP_NAMES or len(tok) < 2:
        return False
    if f"({tok})" in plain[:at]:  # "partial differential equations (PDEs)": a field, not a method
        return False
    parts = re.split(r"[-+]", tok)
    return any(re.search(r"[A-Z]", p[1:]) or (p[:1].isupper() and re.search(r"\d", p)) for p in parts)


def derive_title(abstract: str, max_words: int = 14) -> str:
    """A short display title: the method the abstract names, else its leading clause."""
    plain = clean_for_model(abstract)
    for m in _INTRO.finditer(plain):
        rest = m.group("rest")
        named = re.match(r"\s*(?:(?:a|an|the)\s+)?([A-Z][A-Za-z0-9-]{2,})\s*[,:]", rest)
        for tok in ([named.group(1)] if named else []) + _NAME.findall(rest):
            if tok == (named.group(1) if named else None) or _is_method_name(tok, plain, m.start()):
                at = rest.find(tok)
                before, after = rest[:at], rest[at + len(tok):]
                desc = ""
                paren = re.search(r"\(([^()]{3,80})\)", after[:90])
                if paren and len(paren.group(1).split()) > 1:
                    desc = paren.group(1)
                elif before.rstrip().endswith("(") and before.strip(" ,(").split():
                    desc = before.rstrip(" (")
                else:
                    tail = re.match(r"\s*[,(:]\s*(?:(?:an?|the)\s+)?([^()]{8,160})", after)
                    if tail:
                        desc = re.split(r"\s(?:that|which|to|where|whose)\s", tail.group(1))[0]
                desc = re.sub(r"^(?:a|an|the|novel|new)\s+", "", desc.strip(" ,"), flags=re.I)
                desc = " ".join(_whole_phrase(desc.split()))
                desc = _shorten(desc, max_words - 1)
                return f"{tok}: {desc[0].upper() + desc[1:]}" if len(desc.split()) > 1 else tok
    # "... by Dropping the Positional Embeddings after training (DroPE)": a coined name in parentheses
    for m in re.finditer(r"\(([A-Za-z0-9][\w+-]*)\)", plain):
        tok = m.group(1)
        coined = re.search(r"[a-z]", tok) and not re.fullmatch(r"[A-Z0-9]+s", tok)  # DroPE, not PDEs
        if coined and _is_method_name(tok, plain, m.start()) and plain.count(tok) > 1:
            window = plain[max(0, m.start() - 120):m.start()].split(" ", 1)[-1]
            lead = re.split(r"(?:\b(?:by|we|We|via|called|namely|design|propose|introduce|present|termed)\b"
                            r"|[,.;:])", window)[-1].strip()
            if len(lead.split()) >= 2:
                return f"{tok}: {_shorten(lead[:1].upper() + lead[1:], max_words - 1)}"
    first = re.split(r"(?<=[.!?])\s+", plain, maxsplit=1)[0]
    clauses = [c for c in re.split(r"[,;:]\s|\s[-–—]+\s", first) if c.strip()]
    clause = next((c for c in clauses if len(c.split()) >= 4), first).strip()
    cut = clause.rstrip(".") != first.rstrip(".") and clause.split()[-1].lower() in _DANGLING
    return _shorten(clause[:1].upper() + clause[1:], max_words, cut)


# a cut title must not end on a word that needs the next one ("… in New York can")
_DANGLING = frozenset("""a an the of to in on at by for from with into onto over under and or but nor as than
that which who whom whose where when while if because so can could may might must shall should will would
is are was were be been being has have had do does did not its their our his her this these those such
very more most less least both either each every via using through without within between across
designed used based aimed intended built developed proposed tailored able""".split())


def _shorten(text: str, max_words: int, cut: bool = False) -> str:
    """At most max_words words; a text cut here (or `cut` already, a clause of a longer sentence) ends
    on a word that can end a phrase, then "…"."""
    words = text.split()
    if len(words) <= max_words and not cut:
        return text.strip().rstrip(".")
    return " ".join(_whole_phrase(words[:max_words])).rstrip(",;:.") + " …"


def _whole_phrase(words: list[str]) -> list[str]:
    """The words without those at the end that need a next one ("framework designed", "in New York can")."""
    words = list(words)
    while len(words) > 2 and words[-1].lower().strip(",;:.") in _DANGLING:
        words.pop()
    return words


# ---------------------------------------------------------------- sentences

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[$\\*])")


def split_sentences(text: str) -> list[str]:
    """Split an abstract into sentences; abbreviations like 'e.g.' do not end one."""
    guarded = re.sub(r"\b(e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|resp)\.", lambda m: m.group(0).replace(".", "\x00"),
                     text)
    return [s.replace("\x00", ".").strip() for s in _SENT_SPLIT.split(guarded) if s.strip()]
