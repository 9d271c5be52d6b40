"""The filters and sorts in words, drawn from their declarations (filters.FILTERS, SORT_LIST): the README's and
docs/usage.md's lists are these texts between marker comments, so a declaration added or changed reaches them
with `python -m search.reference --write` (a test says when they are stale)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .filters import FILTERS, SORT_LIST, SORT_POOL, Filter

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/usage.md")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _needs(needs: tuple[str, ...] | str) -> str:
    """IndexFacts' names in words: ("has_ratings", "sub_scores") -> "ratings, sub scores"."""
    needs = needs if isinstance(needs, tuple) else ((needs,) if needs else ())
    return ", ".join(n.removeprefix("has_").replace("_", " ") for n in needs) or "—"


def _flag(f: Filter) -> str:
    if f.annotation == "bool":
        return f"`--{f.flag}`"
    return f"`--{f.flag} {f.metavar or f.key.upper()}`"


def _address(f: Filter) -> str:
    if f.annotation == "bool":
        return f"`{f.key}=1`"
    return f"`{f.key}NAME=X`" if f.key.endswith("_") else f"`{f.key}=…`"


def filters_table() -> str:
    """Each filter: its address key, CLI flag, sidebar widget, what it does and what an index needs for it."""
    rows = ["| filter | address | CLI | sidebar | what it does | the index needs |", "|---|---|---|---|---|---|"]
    for f in FILTERS:
        widget = f.widget.label.replace("{name}", "NAME") if f.widget else "—"
        rows.append(f"| {f.field} | {_address(f)} | {_flag(f)} | {_cell(widget)} | {_cell(f.help)} | "
                    f"{_needs(f.needs)} |")
    return "\n".join(rows)


def sorts_line() -> str:
    """The sorts in one sentence, as the README gives them."""
    groups: dict[str, list[str]] = {}
    for s in SORT_LIST:
        groups.setdefault(s.needs, []).append(f"`{s.name}`" + (f", {s.words}" if s.words else ""))
    said = "; ".join(("" if not needs else f"where the index has {_needs(needs)}: ")
                     + "; ".join(names) for needs, names in groups.items())
    return (f"Sorts: {said}; or a sub-score of the reviews (`soundness`, `presentation`, ...), best first. Each but "
            f"relevance re-orders the {SORT_POOL} papers most relevant to a query.")


def filters_line() -> str:
    """The sidebar's filters in one sentence."""
    return ("The sidebar filters by " + ", ".join(f.widget.label.replace("{name}", "sub-score").lower()
                                                 for f in FILTERS if f.widget and f.field != "sort")
            + ", each where the index has what it needs.")


BLOCKS = {"filters-table": filters_table, "sorts": sorts_line, "filters": filters_line}
MARKED = re.compile(r"(<!-- (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /(?P=name) -->)", re.DOTALL)


def refreshed(text: str) -> str:
    """A document with each marked block (<!-- name --> ... <!-- /name -->) drawn afresh from the registries."""
    return MARKED.sub(lambda m: m.group(1) + BLOCKS[m.group("name")]() + "\n" + m.group(4)
                      if m.group("name") in BLOCKS else m.group(0), text)


def stale(root: Path = ROOT) -> list[str]:
    """The documents whose marked blocks differ from the registries'."""
    return [name for name in DOCS if (text := (root / name).read_text(encoding="utf-8")) != refreshed(text)]


def main(argv: list[str]) -> int:
    if argv[1:] != ["--write"]:
        print("\n\n".join(f"{name}:\n{make()}" for name, make in BLOCKS.items()))
        return 0
    for name in DOCS:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        if refreshed(text) != text:
            path.write_text(refreshed(text), encoding="utf-8")
            print(f"rewrote the lists in {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
