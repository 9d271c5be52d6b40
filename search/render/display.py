"""Text for the page: an abstract as safe inline HTML (emphasis kept, math as MathML, any HTML in it shown
as text), a review's named texts as safe HTML blocks, and Markdown that shows a string verbatim."""
from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from .. import latex
from ..text import clean_for_model, strip_control

_MD_ESCAPE = re.compile(r"([\\`<>\[\]()!&#|{}])")


def _escape_md(text: str) -> str:
    return _MD_ESCAPE.sub(r"\\\1", text)


def _segments(text: str):
    """Split display text into ("prose", text), ("emph", tag, text), ("math", tex, delimiter) and ("raw", text)."""
    text = strip_control(text)
    pos = 0
    for m in latex.MATH.finditer(text):
        yield "prose", text[pos:m.start()]
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        styled = latex.STYLED_MATH.fullmatch(inner)
        if styled:  # $\textbf{C}$omics: emphasis dressed as math reads better as text
            if styled.group(2).strip():
                yield "emph", "b" if styled.group(1) in latex.BOLD else "em", styled.group(2)
        elif latex.UNSAFE.search(inner) or "\n" in inner:
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
    text = _escape_md(re.sub(r"\\(?=[A-Za-z ])", "", latex.to_markdown(text)))
    if mark:
        text = re.sub(r"(?<![\w*])([^\W\d_][\w-]*)", lambda m: f"**{m.group(1)}**" if mark(m.group(1))
                      else m.group(1), text)
    return text


def plain_title(title: str) -> str:
    """A title as plain text, its LaTeX as Unicode (for links and captions that draw no maths)."""
    return latex.to_unicode(title)


def plain_markdown(text: str) -> str:
    """Escape text so Markdown shows it verbatim (queries, titles, labels)."""
    text = strip_control(text)
    return re.sub(r"([\\`*_\[\]()<>!&#|{}$~+\-=.])", r"\\\1", text)


def inline_markdown(text: str) -> str:
    """Escape text for a line of a Markdown file (the reading list's export), keeping it readable there:
    only what inline Markdown (and GitHub's math and strike-through) acts on, so "6.50" stays "6.50"."""
    return re.sub(r"([\\`*_\[\]<>|$~])", r"\\\1", strip_control(text))


_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def block_html(text: str, mark: Callable[[str], bool] | None = None) -> str:
    """A longer text a person wrote (a review) as safe HTML: paragraphs and list items, each line drawn as
    an abstract is (emphasis, math), any HTML in it shown as text."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", strip_control(text).strip()):
        lines: list[str] = []   # the paragraph's lines before any list item
        items: list[str] = []
        for line in (x.strip() for x in para.splitlines() if x.strip()):
            if _ITEM.match(line):
                items.append(to_html(_ITEM.sub("", line, count=1), mark))
            elif items:  # a wrapped list item goes on
                items[-1] += " " + to_html(line, mark)
            else:
                lines.append(to_html(line, mark))
        if lines:
            out.append("<p>" + "<br>".join(lines) + "</p>")
        if items:
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
    return "".join(out)


def field_label(name: str) -> str:
    """A review form's field name as words: "summary_of_contributions" -> "Summary of contributions"."""
    return strip_control(name).replace("_", " ").strip().capitalize()


def fields_html(fields: Iterable[tuple[str, str]], heading: str = "h6") -> str:
    """A review's (or meta-review's) named texts as one block of safe HTML: each field's name as a heading
    over its text as `block_html` draws it. The names come from the venue's review form, so they are
    escaped like any other text. Meant for the page's HTML component (as the cards are), not `st.html`:
    Streamlit sanitizes `st.html` to the HTML profile, which deletes MathML and so every formula."""
    return '<div class="ps-review">' + "".join(
        f"<{heading}>{html.escape(field_label(name))}</{heading}>{block_html(text)}" for name, text in fields) + "</div>"
