"""The one table of LaTeX an abstract may hold: which commands vanish with their argument, which leave it
as plain text or as emphasis, which stand for a symbol, and which are never drawn. Cleaning for the model
(text.py) and drawing for the page (display.py) both read it."""
from __future__ import annotations

import re

# the command and its argument vanish: citations, cross-references, notes, links' targets, graphics
DROP = frozenset("""cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum nocite ref eqref
label footnote url includegraphics""".split())
BOLD = frozenset({"textbf", "mathbf"})       # the argument stays, in bold on the page
ITALIC = frozenset({"textit", "emph"})       # the argument stays, in italics on the page
PLAIN = frozenset({"texttt", "textrm", "textsf", "text", "mathrm"})  # the argument stays as it is
# symbols that carry meaning for a reader or the model
SYMBOLS = {"times": "×", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
           "approx": "≈", "sim": "~", "to": "→", "rightarrow": "→", "infty": "∞",
           "pm": "±", "ldots": "...", "dots": "...", "cdots": "...", "%": "%", "&": "&",
           "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", "~": "~", "sqrt": "sqrt"}
GREEK = frozenset("""alpha beta gamma delta epsilon varepsilon zeta eta theta iota kappa lambda mu nu xi pi
rho sigma tau phi varphi chi psi omega Gamma Delta Theta Lambda Pi Sigma Phi Psi Omega""".split())
# never drawn as math: links, files, styling hooks and macro definitions
UNSAFE = re.compile(r"\\(?:href|url|includegraphics|htmlClass|htmlId|htmlStyle|htmlData|"
                    r"input|include|def|newcommand|renewcommand)\b")

# a command's name, and the spaces after a word's (as TeX takes them); a symbol's (\\% ) keeps the space after it
CMD = re.compile(r"\\(?:([A-Za-z]+)\s*|([%&_#${}~]))")
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def _alternatives(names: frozenset[str]) -> str:
    return "|".join(sorted(names, key=lambda n: (-len(n), n)))  # longest first: \\citep before \\cite


# $\\textbf{C}$omics: emphasis dressed up as math, which reads better as text
STYLED_MATH = re.compile(rf"\s*\\({_alternatives(BOLD | ITALIC | {'texttt'})})\{{([\w\s.,:;+-]*)\}}\s*")
_BOLD = re.compile(rf"\\(?:{_alternatives(BOLD)})\{{([^{{}}]*)\}}")
_ITALIC = re.compile(rf"\\(?:{_alternatives(ITALIC)})\{{([^{{}}]*)\}}")
_DROPPED = re.compile(rf"\\(?:{_alternatives(DROP)})(?:\[[^\]]*\])?\{{[^{{}}]*\}}")
_PLAIN = re.compile(rf"\\(?:{_alternatives(PLAIN)})\{{([^{{}}]*)\}}")


def skip_group(text: str, i: int) -> tuple[str, int]:
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


def to_plain(text: str) -> str:
    """LaTeX commands as plain text: \\textbf{X} -> X, \\citep{..} -> '', \\% -> %."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find("\\", i)
        # plain runs between commands are copied whole; only their group braces go
        out.append((text[i:] if j == -1 else text[i:j]).replace("{", "").replace("}", ""))
        if j == -1:
            return "".join(out)
        m = CMD.match(text, j)
        if not m:  # a lone backslash
            out.append("\\")
            i = j + 1
            continue
        name = m.group(1) or m.group(2)
        i = m.end()
        if name in DROP:
            out[-1] = out[-1].rstrip(" ")  # "25\% \citep{x}." reads "25%."
            if i < len(text) and text[i] == "[":  # optional argument, e.g. \\citep[p.~3]{x}
                close = text.find("]", i)
                i = close + 1 if close != -1 else i
            if i < len(text) and text[i] == "{":
                _, i = skip_group(text, i)
            continue
        if name == "href" and i < len(text) and text[i] == "{":
            _, i = skip_group(text, i)  # drop the target, keep the link text that follows
            continue
        if name in SYMBOLS:
            out.append(SYMBOLS[name])
        elif name in GREEK:
            out.append(name)
        # any other command (\\textbf, \\emph, \\mathrm, ...) disappears and its group's text stays


def to_markdown(text: str) -> str:
    """Prose outside math for the page: emphasis as Markdown, dropped commands gone, plain ones their text."""
    text = _BOLD.sub(r"**\1**", text)
    text = _ITALIC.sub(r"*\1*", text)
    text = _DROPPED.sub("", text)
    text = re.sub(r"\\href\{[^{}]*\}", "", text)  # the target; the link text that follows stays
    text = re.sub(r"\\([%&_#$])", r"\1", text)
    return _PLAIN.sub(r"\1", text)


_SUPER = str.maketrans("0123456789+-=()niT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵀ")
_SUB = str.maketrans("0123456789+-=()aeioxnmtk", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢₒₓₙₘₜₖ")
_SCRIPT = re.compile(r"([\^_])(\{([^{}]*)\}|([0-9A-Za-z+\-]))")


def _script(m: re.Match) -> str:
    body = m.group(3) if m.group(3) is not None else m.group(4)
    table = _SUPER if m.group(1) == "^" else _SUB
    mapped = body.translate(table)
    # only when every character has a raised (or lowered) form; x^{ab} stays x^ab rather than half-raised
    return mapped if all(c != o or not c.strip() for c, o in zip(mapped, body)) and body.strip() else m.group(0)


def to_unicode(text: str) -> str:
    """A title's LaTeX as plain Unicode for places that show no math (tables, hover text, exports):
    $\\pi^3$ -> π³, Sch\\"{o}lkopf -> Schölkopf, $\\mathcal{O}(n^{2})$ -> 𝒪(n²); a title without a
    backslash or dollar is returned as it is."""
    if "\\" not in text and "$" not in text:
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    # scripts first, while their braces still mark what is raised
    inner = MATH.sub(lambda m: _SCRIPT.sub(_script, m.group(0)), text)
    try:
        plain = LatexNodes2Text(math_mode="text", strict_latex_spaces=True).latex_to_text(inner)
    except Exception:  # pylatexenc raises several kinds on malformed input; the cleaned text still reads
        plain = to_plain(inner.replace("$", ""))
    return " ".join(plain.split())
