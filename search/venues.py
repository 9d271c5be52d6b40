"""The venues of an index: each venue and year with its papers, the decisions its record holds and what else
it carries (`python -m search venues`, and the views per venue built on it)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .corpus import Paper
from .filters import decision_group, venue_parts

CARRIED = ("abstracts", "reviews", "authors", "affiliations", "citations")


@dataclass
class VenueYear:
    conference: str
    year: int | None
    papers: int = 0
    accepted: int = 0
    rejected: int = 0
    withdrawn: int = 0
    undecided: int = 0
    # of its papers, how many carry each (CARRIED): an abstract to search by, review ratings, authors' names,
    # affiliations, a citation count
    carries: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CARRIED, 0))

    @property
    def label(self) -> str:
        return f"{self.conference} {self.year}" if self.year else self.conference or "(no venue)"

    @property
    def accepted_only(self) -> bool:
        """Its record holds only accepted papers (a published list): no acceptance rate can be told."""
        return self.accepted == self.papers and not (self.rejected or self.withdrawn)

    def decisions_said(self) -> str:
        if not (self.accepted or self.rejected or self.withdrawn or self.undecided):
            return "no decisions"
        if self.accepted_only:
            return "accepted papers only (the list names no rejections)"
        bits = [f"{n:,} {what}" for n, what in ((self.accepted, "accepted"), (self.rejected, "rejected"),
                                                 (self.withdrawn, "withdrawn"), (self.undecided, "undecided")) if n]
        return ", ".join(bits)

    def to_dict(self) -> dict:
        return {"venue": self.label, **asdict(self), "accepted_only": self.accepted_only}


def venue_years(papers: list[Paper]) -> list[VenueYear]:
    """Each venue and year of the papers (by venue name, then year; papers of no venue last)."""
    out: dict[tuple[str, int | None], VenueYear] = {}
    for p in papers:
        conference, year, _ = venue_parts(p)
        v = out.setdefault((conference, year), VenueYear(conference, year))
        v.papers += 1
        group = decision_group(p.decision)
        if group:
            setattr(v, group, getattr(v, group) + 1)
        for name, has in (("abstracts", bool(p.abstract.strip())), ("reviews", bool(p.ratings or p.n_ratings)),
                          ("authors", bool(p.authors)), ("affiliations", any(p.affiliations)),
                          ("citations", p.citations is not None)):
            v.carries[name] += has
    return sorted(out.values(), key=lambda v: (not v.conference, v.conference.casefold(), v.year or 0))


def table(rows: list[VenueYear]) -> str:
    """The venues as a text table: papers, decisions, and what the record carries (counts of its papers)."""
    head = f"{'venue':<16} {'papers':>7}  " + " ".join(f"{c:>12}" for c in CARRIED) + "  decisions"
    lines = [head]
    for v in rows:
        lines.append(f"{v.label:<16} {v.papers:>7,}  " + " ".join(f"{v.carries[c]:>12,}" for c in CARRIED)
                     + f"  {v.decisions_said()}")
    return "\n".join(lines)
