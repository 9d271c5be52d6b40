"""People across venues, where the records name them: an author's papers by venue and year, with their
co-authors and the affiliations their papers give. A paper whose record is anonymous (an OpenReview
submission before its decision) names nobody, so it is on no one's page.

Names are matched folded (case and accents ignored: filters.fold), the whole name: "Ada Lovelace" is not
"Ada Lovelace-Byron". A name that is no author's whole name gets the authors whose names contain it.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .corpus import Paper
from .fared import place_name, place_of
from .filters import fold


@dataclass
class Author:
    name: str                                  # the spelling most of their papers give
    papers: list[Paper]                        # newest first, then by venue and title
    coauthors: list[tuple[str, int]]           # (name, papers together), most first
    affiliations: list[tuple[str, int]]        # (institution, papers), as their papers give them, most first

    def by_place(self) -> list[tuple[str, list[Paper]]]:
        """("COLM 2025", papers) a venue-year, newest first."""
        out: dict[str, list[Paper]] = {}
        for p in self.papers:
            out.setdefault(place_name(*place_of(p)), []).append(p)
        return list(out.items())

    def to_dict(self) -> dict:
        return {"name": self.name, "papers": len(self.papers),
                "venues": [{"venue": name, "papers": [{"id": p.id, "title": p.title, "venue": place_of(p)[0],
                                                      "year": place_of(p)[1], "decision": p.decision, "authors": p.authors}
                                                     for p in papers]} for name, papers in self.by_place()],
                "coauthors": [{"name": n, "papers": c} for n, c in self.coauthors],
                "affiliations": [{"name": n, "papers": c} for n, c in self.affiliations]}


def affiliation_of(p: Paper, i: int) -> list[str]:
    """The institutions the paper gives its i-th author ("A + B": two of them), none where it gives none."""
    affs = p.affiliations
    if i >= len(affs) or not affs[i]:
        return []
    return [a.strip() for a in affs[i].split("+") if a.strip()]


def _spelling(counts: Counter) -> str:
    return max(counts, key=lambda n: (counts[n], n))


def author(papers: list[Paper], name: str, folded_names: list[str] | None = None) -> Author | None:
    """The author whose whole name (folded) is `name`, with their papers; None where no paper names them.
    `folded_names`: each paper's authors folded, one a line (the catalogue keeps them), to pass over the
    other papers without folding their names again."""
    key = fold(name)
    if not key:
        return None
    mine: list[Paper] = []
    spellings: Counter = Counter()
    together: dict[str, Counter] = {}
    affs: dict[str, Counter] = {}
    rows = range(len(papers)) if folded_names is None else (
        r for r, names in enumerate(folded_names) if key in names and key in names.split("\n"))
    for r in rows:
        p = papers[r]
        folded = [fold(a) for a in p.authors]
        if key not in folded:
            continue
        mine.append(p)
        for i, (a, f) in enumerate(zip(p.authors, folded)):
            if f == key:
                spellings[a] += 1
                for inst in affiliation_of(p, i):
                    affs.setdefault(fold(inst), Counter())[inst] += 1
            else:
                together.setdefault(f, Counter())[a] += 1
    if not mine:
        return None
    mine.sort(key=lambda p: (-(place_of(p)[1] or 0), place_of(p)[0], p.title))
    coauthors = sorted(((_spelling(c), sum(c.values())) for c in together.values()), key=lambda x: (-x[1], x[0]))
    institutions = sorted(((_spelling(c), sum(c.values())) for c in affs.values()), key=lambda x: (-x[1], x[0]))
    return Author(_spelling(spellings), mine, coauthors, institutions)


def names_like(papers: Iterable[Paper], part: str, n: int = 10) -> list[str]:
    """Up to n authors' names that contain `part` (folded), those with most papers first."""
    key = fold(part)
    counts: dict[str, Counter] = {}
    if key:
        for p in papers:
            for a in p.authors:
                f = fold(a)
                if key in f:
                    counts.setdefault(f, Counter())[a] += 1
    ranked = sorted(counts.values(), key=lambda c: (-sum(c.values()), _spelling(c)))
    return [_spelling(c) for c in ranked[:n]]
