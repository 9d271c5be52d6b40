"""How papers like this fared: the decisions and ratings of a group of submissions, in numbers and words.

It describes; it does not predict. Left out of its own neighbours, a submission's 50 nearest neighbours'
accepted share separates accepted from rejected ICLR 2026 submissions with a ROC AUC of 0.57, about its
primary area's rate, where its own mean rating reaches 0.90 (benchmarks/results/fared.md).
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from .corpus import Paper
from .filters import MIN_DECIDED, decision_group

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
        return text


def tally(papers: Iterable[Paper]) -> Fate:
    papers = list(papers)
    counts = dict.fromkeys(GROUPS, 0)
    for p in papers:
        group = decision_group(p.decision)
        if group:
            counts[group] += 1
    ratings = sorted(p.avg_rating for p in papers if p.avg_rating is not None)
    out = Fate(len(papers), counts, len(ratings))
    if ratings:
        out.median = round(statistics.median(ratings), 3)
        q = statistics.quantiles(ratings, n=4, method="inclusive") if len(ratings) > 1 else [ratings[0]] * 3
        out.q1, out.q3 = round(q[0], 3), round(q[2], 3)
    return out


@dataclass
class Fared:
    neighbours: Fate
    ids: list[str]                          # the neighbours, nearest first
    venue: Fate
    area: str = ""                          # the paper's primary area (or most of the neighbours')
    area_fate: Fate | None = None

    @property
    def has_decisions(self) -> bool:
        return any(self.venue.counts[g] for g in ("accepted", "rejected", "withdrawn"))

    def rows(self) -> list[tuple[str, Fate]]:
        rows = [(f"the {self.neighbours.papers} nearest submissions", self.neighbours)]
        if self.area_fate:
            rows.append((f"its area ({self.area})", self.area_fate))
        return rows + [("the whole venue", self.venue)]

    def to_dict(self) -> dict:
        return {"neighbours": {**self.neighbours.to_dict(), "ids": self.ids}, "area": self.area,
                "area_fate": self.area_fate.to_dict() if self.area_fate else None, "venue": self.venue.to_dict()}

    def text(self) -> str:
        return "\n".join(f"{name}: {fate.words()}" for name, fate in self.rows())
