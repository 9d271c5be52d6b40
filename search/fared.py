"""How papers like this fared: the decisions and ratings of a group of submissions, in numbers and words;
and where work like this appears: the venues and years of the nearest papers (`Place`), with how they fared
there where that venue-year's record has its rejections (a list of accepted papers only tells nothing of
the papers it left out, so it gives no rate).

It describes; it does not predict. Left out of its own neighbours, a submission's 50 nearest neighbours'
accepted share separates accepted from rejected ICLR 2026 submissions with a ROC AUC of 0.57, about its
primary area's rate, where its own mean rating reaches 0.90 (benchmarks/results/fared.md).
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

from .corpus import Paper
from .filters import MIN_DECIDED, decision_group, venue_parts

GROUPS = ("accepted", "rejected", "withdrawn", "undecided")
COLOURS = {"accepted": "#2e7d32", "rejected": "#c62828", "withdrawn": "#9e9e9e", "undecided": "#90a4ae"}


@dataclass
class Fate:
    papers: int
    counts: dict[str, int]                   # GROUPS -> papers
    rated: int = 0
    median: float | None = None              # of the papers' mean ratings
    q1: float | None = None
    q3: float | None = None
    # accepted papers from lists of accepted papers only (a venue-year whose record holds no rejection): left
    # out of the counts, where their "accepted" would make a rate of the lists' own choosing (that venue-year's
    # other papers too, and their ratings)
    listed_only: int = 0

    @property
    def decided(self) -> int:
        return self.counts["accepted"] + self.counts["rejected"]

    @property
    def accepted_share(self) -> float | None:
        """Accepted of the decided (accepted or rejected); None where fewer than MIN_DECIDED are decided."""
        return self.counts["accepted"] / self.decided if self.decided >= MIN_DECIDED else None

    def to_dict(self) -> dict:
        d = asdict(self)
        share = self.accepted_share
        d["accepted_share"] = None if share is None else round(share, 4)
        return d

    def words(self) -> str:
        """"12 accepted, 30 rejected, 8 withdrawn (29% of the 42 decided were accepted); ratings median 4.50 (3.75-5.25)"."""
        bits = [f"{self.counts[g]:,} {g}" for g in GROUPS if self.counts[g]]
        text = ", ".join(bits) or "no decisions"
        if self.accepted_share is not None:
            text += f" ({self.accepted_share:.0%} of the {self.decided:,} decided were accepted)"
        elif self.decided:
            text += f" (no rate from {self.decided} decided, fewer than {MIN_DECIDED})"
        if self.median is not None:
            text += f"; mean ratings' median {self.median:.2f} (middle half {self.q1:.2f}-{self.q3:.2f})"
        if self.listed_only:
            text += (f"; {self.listed_only:,} more from lists of accepted papers only, left out (those lists "
                     "hold no rejections)")
        return text


def tally(papers: Iterable[Paper], known: Callable[[Paper], bool] | None = None) -> Fate:
    """The papers' decisions and ratings; `known(paper)`: whether its venue-year's record holds rejections
    (where given, the papers of the others are only counted, in `listed_only`)."""
    papers = list(papers)
    listed_only, total = 0, len(papers)
    if known is not None:
        left = [p for p in papers if not known(p)]
        listed_only = sum(decision_group(p.decision) == "accepted" for p in left)
        papers = [p for p in papers if known(p)]
    counts = dict.fromkeys(GROUPS, 0)
    for p in papers:
        group = decision_group(p.decision)
        if group:
            counts[group] += 1
    ratings = sorted(p.avg_rating for p in papers if p.avg_rating is not None)
    out = Fate(total, counts, len(ratings), listed_only=listed_only)
    if ratings:
        out.median = round(statistics.median(ratings), 3)
        q = statistics.quantiles(ratings, n=4, method="inclusive") if len(ratings) > 1 else [ratings[0]] * 3
        out.q1, out.q3 = round(q[0], 3), round(q[2], 3)
    return out


def place_of(p: Paper) -> tuple[str, int | None]:
    """A paper's (conference, year): its fields, or an older index's venue words (filters.venue_parts)."""
    return venue_parts(p)[:2]


def place_name(conference: str, year: int | None) -> str:
    """"COLM 2025"; "COLM" without a year; "no venue" where the record names none."""
    return " ".join(x for x in (conference, str(year) if year else "") if x) or "no venue"


def rejections_known(whole: Fate) -> bool:
    """Whether a venue-year's record holds its rejections (or withdrawals): only then is a share of its
    papers accepted a rate; a list of accepted papers only would give 100%."""
    return bool(whole.counts["rejected"] or whole.counts["withdrawn"])


def places_with_rejections(papers: Iterable[Paper]) -> set[tuple[str, int | None]]:
    """The (conference, year) of every venue-year whose record holds a rejection or withdrawal."""
    return {place_of(p) for p in papers if decision_group(p.decision) in ("rejected", "withdrawn")}


@dataclass
class Place:
    """One venue-year among the nearest papers: how many of them appear there and, where its record has
    rejections, how they fared beside the whole venue-year."""
    conference: str
    year: int | None
    papers: int                              # of the nearest papers
    whole: Fate                              # the venue-year's every paper
    fate: Fate | None = None                 # the nearest papers there, where rejections are known

    @property
    def name(self) -> str:
        return place_name(self.conference, self.year)

    @property
    def rejections_known(self) -> bool:
        return rejections_known(self.whole)

    def words(self) -> str:
        """"ICLR 2026: 23 papers; of them 3 accepted, 12 rejected (...); the whole ICLR 2026: ..."."""
        head = f"{self.name}: {self.papers:,} paper{'s' if self.papers != 1 else ''}"
        if self.fate is None and not self.conference:  # the seed lists: no venue, no decisions
            return head + " (no venue or decision in its record)"
        if self.fate is None:
            return head + (f" (its record lists only accepted papers, {self.whole.papers:,} of them: how others "
                           "fared there is not known)")
        return f"{head}; of them {self.fate.words()}; the whole {self.name}: {self.whole.words()}"

    def to_dict(self) -> dict:
        return {"venue": self.conference, "year": self.year, "name": self.name, "papers": self.papers,
                "rejections_known": self.rejections_known, "fate": self.fate.to_dict() if self.fate else None,
                "whole": self.whole.to_dict()}


def places(neighbours: list[Paper], whole: Callable[[str, int | None], Fate]) -> list[Place]:
    """The venue-years of `neighbours`, most papers first (then newest); `whole(conference, year)` is a
    venue-year's every paper, tallied."""
    groups: dict[tuple[str, int | None], list[Paper]] = {}
    for p in neighbours:
        groups.setdefault(place_of(p), []).append(p)
    out = []
    for (conference, year), papers in groups.items():
        every = whole(conference, year)
        out.append(Place(conference, year, len(papers), every, tally(papers) if rejections_known(every) else None))
    return sorted(out, key=lambda x: (-x.papers, -(x.year or 0), x.conference))


@dataclass
class Fared:
    neighbours: Fate
    ids: list[str]                          # the neighbours, nearest first
    venue: Fate
    area: str = ""                          # the paper's primary area (or most of the neighbours')
    area_fate: Fate | None = None
    places: list[Place] = field(default_factory=list)   # where the neighbours appear, most first
    whole: str = "the whole venue"          # what `venue` tallies: an index of many venues is not one venue

    @property
    def has_decisions(self) -> bool:
        return any(self.venue.counts[g] for g in ("accepted", "rejected", "withdrawn"))

    def rows(self) -> list[tuple[str, Fate]]:
        rows = [(f"the {self.neighbours.papers} nearest submissions", self.neighbours)]
        if self.area_fate:
            rows.append((f"its area ({self.area})", self.area_fate))
        return rows + [(self.whole, self.venue)]

    def to_dict(self) -> dict:
        return {"neighbours": {**self.neighbours.to_dict(), "ids": self.ids}, "area": self.area,
                "area_fate": self.area_fate.to_dict() if self.area_fate else None, "venue": self.venue.to_dict(),
                "places": [x.to_dict() for x in self.places]}

    def where_text(self) -> str:
        """Where the nearest papers appear, a line a venue-year."""
        return "\n".join(x.words() for x in self.places)

    def text(self) -> str:
        return "\n".join(f"{name}: {fate.words()}" for name, fate in self.rows())
