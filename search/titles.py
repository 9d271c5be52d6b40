"""A display title for a paper that has none: the method its abstract names, else its leading clause."""
from __future__ import annotations

import re

from .text import clean_for_model

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
