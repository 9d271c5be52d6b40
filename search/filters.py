"""What narrows and orders a list of papers: one typed object. The page builds it from its address, the
CLI from its flags; it is checked in one place and handed to every Engine and Catalog method. A new
filter is a field here, a line in `Catalog.mask`, a widget and a flag."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

# relevance; mean review rating; orals first, then rating; spread of the ratings; most reviews. A sub-score
# a venue's reviews have ("soundness") sorts too: `known` checks it against the index.
SORTS = ("relevance", "rating", "oral", "controversy", "reviews")
SUB_SCORE = re.compile(r"[a-z][a-z_]{0,39}")
# what a decision filter may name: a group of decisions or one of them
DECISION_GROUPS = {"accepted": ("Oral", "Spotlight", "Poster", "Accepted"), "rejected": ("Rejected", "Desk rejected"),
                   "withdrawn": ("Withdrawn",), "undecided": ("Under review",), "oral": ("Oral",),
                   "spotlight": ("Spotlight",), "poster": ("Poster",)}
# every submission still in the running or decided: all but the withdrawn
DECISION_GROUPS["active"] = DECISION_GROUPS["accepted"] + DECISION_GROUPS["rejected"] + DECISION_GROUPS["undecided"]
DECISION_CHOICES = (*DECISION_GROUPS, "all")
# No acceptance rate from fewer decided papers: a fetch made while decisions were coming out had areas with
# 1 to 4 decided of hundreds, whose "100%" said nothing of the area.
MIN_DECIDED = 20


def default_decisions(decisions: Iterable[str]) -> tuple[str, ...]:
    """The list an index opens on, from the decisions its papers carry: the conference's programme once
    some paper is accepted; in the review season (nothing accepted yet) every submission not withdrawn,
    since the accepted papers would be none. () where the index holds no decisions at all."""
    decisions = set(decisions)
    if not decisions:
        return ()
    return ("accepted",) if decisions & set(DECISION_GROUPS["accepted"]) else ("active",)


def decisions_of(choices: Iterable[str]) -> set[str] | None:
    """The decisions a filter's choices allow; None for all of them."""
    choices = tuple(choices)
    if not choices or "all" in choices:
        return None
    return {d for c in choices for d in DECISION_GROUPS[c]}


def decision_group(decision: str) -> str:
    """"accepted", "rejected", "withdrawn" or "undecided" ("" where the index does not know)."""
    for group in ("accepted", "rejected", "withdrawn", "undecided"):
        if decision in DECISION_GROUPS[group]:
            return group
    return ""


class FilterError(ValueError):
    """A filter's value makes no sense (a sort that does not exist, a rating outside 0-10); `field` names it."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def _texts(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))


@dataclass(frozen=True)
class Filters:
    areas: tuple[str, ...] = ()       # primary areas, any of them
    venues: tuple[str, ...] = ()      # "ICLR 2026 Oral", any of them
    authors: tuple[str, ...] = ()     # parts of names, any of them (case and accents ignored)
    min_rating: float | None = None   # reviewed papers whose mean rating is at least this
    sort: str = "relevance"           # one of SORTS, or a sub-score's name
    decisions: tuple[str, ...] = ()   # DECISION_CHOICES; () is the index's default (`known` sets it)
    min_scores: tuple[tuple[str, float], ...] = ()   # ("soundness", 3.0): reviewed papers whose mean is at least
    unknown: tuple[str, ...] = field(default=(), compare=False)  # what `known` dropped, in words

    def __post_init__(self) -> None:
        for name in ("areas", "venues", "authors"):
            object.__setattr__(self, name, _texts(getattr(self, name)))
        if self.sort not in SORTS and not SUB_SCORE.fullmatch(self.sort):
            raise FilterError(f"unknown sort {self.sort!r}; choose one of {', '.join(SORTS)} or a sub-score "
                              "of the reviews (soundness, ...)", "sort")
        if self.min_rating is not None and not 0 <= float(self.min_rating) <= 10:
            raise FilterError(f"a minimum rating is from 0 to 10, not {self.min_rating:g}", "min_rating")
        decisions = _texts(d.lower() for d in self.decisions)
        bad = [d for d in decisions if d not in DECISION_CHOICES]
        if bad:
            raise FilterError(f"unknown decision {bad[0]!r}; choose from {', '.join(DECISION_CHOICES)}", "decision")
        object.__setattr__(self, "decisions", decisions)
        for name, value in self.min_scores:
            if not SUB_SCORE.fullmatch(name) or not 0 <= float(value) <= 10:
                raise FilterError(f"a minimum sub-score is a name and a number from 0 to 10 (soundness=3), "
                                  f"not {name}={value}", "min_score")

    @property
    def narrows(self) -> bool:
        """Whether any filter (not the sort) leaves papers out."""
        return bool(self.areas or self.venues or self.authors or self.min_rating is not None or self.min_scores
                    or decisions_of(self.decisions) is not None)

    def known(self, areas: Iterable[str], venues: Iterable[str], decisions: Iterable[str] = (),
              sub_scores: Iterable[str] = (), has_authors: bool = True, has_ratings: bool = True) -> Filters:
        """These filters as an index can apply them: without the areas, venues, decisions, authors and
        sub-scores it lacks (which `unknown` names), and on `default_decisions` of the decisions its
        papers carry where no decision is asked for."""
        areas, venues, sub_scores = set(areas), set(venues), set(sub_scores)
        unknown = [f"area {a!r}" for a in self.areas if a not in areas]
        unknown += [f"venue {v!r}" for v in self.venues if v not in venues]
        default = default_decisions(decisions)
        decisions = self.decisions
        if not default:
            unknown += [f"decision {d!r}" for d in decisions if d != "all"]
            decisions = ()
        elif not decisions:
            decisions = default
        min_rating = self.min_rating
        if min_rating is not None and not has_ratings:  # every paper would fail it: "no paper matches" misled
            unknown.append(f"min_rating={min_rating:g} (this index has no review ratings)")
            min_rating = None
        authors = self.authors
        if authors and not has_authors:
            unknown += [f"author {a!r} (this index has no authors' names)" for a in authors]
            authors = ()
        unknown += [f"sub-score {n!r}" for n, _ in self.min_scores if n not in sub_scores]
        sort = self.sort
        if sort not in SORTS and sort not in sub_scores:
            unknown.append(f"sort {sort!r}")
            sort = "relevance"
        return replace(self, areas=tuple(a for a in self.areas if a in areas),
                       venues=tuple(v for v in self.venues if v in venues), decisions=decisions, sort=sort,
                       authors=authors, min_rating=min_rating,
                       min_scores=tuple((n, v) for n, v in self.min_scores if n in sub_scores),
                       unknown=tuple(unknown))

    @classmethod
    def from_address(cls, params: Mapping[str, list[str]]) -> tuple[Filters, list[str]]:
        """The filters in a page's address (each key's values), and what did not parse, in words; a value
        that does not parse is left out and the default used."""
        ignored: list[str] = []

        def one(name: str) -> str:
            values = params.get(name) or [""]
            return values[-1].strip()

        sort = one("sort") or "relevance"
        if sort not in SORTS and not SUB_SCORE.fullmatch(sort):
            ignored.append(f"sort={sort[:40]} (use {', '.join(SORTS)} or a sub-score)")
            sort = "relevance"
        decisions = []
        for raw in params.get("decision") or ():
            for d in raw.lower().split(","):
                if d.strip() in DECISION_CHOICES:
                    decisions.append(d.strip())
                elif d.strip():
                    ignored.append(f"decision={d.strip()[:40]} (use {', '.join(DECISION_CHOICES)})")
        min_scores = []
        for name in sorted(k for k in params if k.startswith("min_") and k != "min_rating"):
            score, raw = name[4:], one(name)
            try:
                value = float(raw)
                if not (SUB_SCORE.fullmatch(score) and 0 <= value <= 10):
                    raise ValueError
                min_scores.append((score, value))
            except ValueError:
                ignored.append(f"{name[:40]}={raw[:40]} (use a score from 0 to 10)")
        min_rating = None
        if one("min_rating"):
            try:
                min_rating = float(one("min_rating"))
                if not 0 <= min_rating <= 10:
                    raise ValueError
            except ValueError:
                ignored.append(f"min_rating={one('min_rating')[:40]} (use a rating from 0 to 10)")
                min_rating = None
        author = one("author")[:200]
        return cls(areas=tuple(params.get("area") or ()), venues=tuple(params.get("venue") or ()),
                   authors=(author,) if author else (), min_rating=min_rating, sort=sort,
                   decisions=tuple(decisions), min_scores=tuple(min_scores)), ignored


NO_FILTERS = Filters()
