"""What narrows and orders a list of papers: one typed object, and one declaration per filter and per sort.

Each filter of FILTERS declares all that concerns it: its `Filters` field (name, type and default: `Filters` is
made from the declarations), how its value is read from a page's address and from its CLI flag (a boolean's
flag is bare), checked (`Filters.__post_init__`: what a value may be), fitted to an index (`Filters.known`:
what the index can apply, the rest named), the catalogue columns it reads and the index facts it needs (only
those hide it), how it is applied (`Catalog.mask`) and written back (`Filters.to_address`), its help and its
widget on the page (`Widget`, data: search/ draws nothing). Each sort of SORT_LIST declares its key, its label
on the page, its words under a list and the facts it needs. A new filter or sort is one declaration here;
docs/architecture.md says what else, if anything, changes.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, make_dataclass, replace
from functools import lru_cache

import numpy as np

from .corpus import Paper
from .parts.history import EPSILON, move

SUB_SCORE = re.compile(r"[a-z][a-z_]{0,39}")
# what a decision filter may name: a group of decisions or one of them
DECISION_GROUPS = {"accepted": ("Oral", "Spotlight", "Poster", "Accepted"), "rejected": ("Rejected", "Desk rejected", "Workshop track"),
                   "withdrawn": ("Withdrawn",), "undecided": ("Under review",), "oral": ("Oral",),
                   "spotlight": ("Spotlight",), "poster": ("Poster",)}
# every submission still in the running or decided: all but the withdrawn
DECISION_GROUPS["active"] = DECISION_GROUPS["accepted"] + DECISION_GROUPS["rejected"] + DECISION_GROUPS["undecided"]
DECISION_CHOICES = (*DECISION_GROUPS, "all")
DECISION_LABELS = {"accepted": "accepted papers", "all": "every submission", "rejected": "rejected",
                   "withdrawn": "withdrawn", "undecided": "no decision yet", "oral": "orals", "spotlight": "spotlights",
                   "poster": "posters", "active": "every submission not withdrawn"}
SORT_POOL = 30   # a sorted list re-orders this many of the most relevant papers (or k if more)
# No acceptance rate from fewer decided papers: a fetch made while decisions were coming out had areas with
# 1 to 4 decided of hundreds, whose "100%" said nothing of the area.
MIN_DECIDED = 20
LAST = float("inf")   # the key of a paper without the value a sort wants: after every paper with it


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


@lru_cache(maxsize=1 << 16)
def fold(name: str) -> str:
    """A name for matching: lower case, accents dropped ("Müller" -> "muller"). ASCII names take the short way
    and every name is remembered: affiliations repeat ("Stanford University" on thousands of papers), and
    folding character by character took 0.95 s of a 2,743-paper catalogue's 2.9 s (cProfile)."""
    if name.isascii():
        return " ".join(name.lower().split())
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def spread(p: Paper) -> float | None:
    """How far the reviewers disagree: the standard deviation of the ratings (None under two ratings)."""
    if len(p.ratings) < 2:
        return None
    return _std(tuple(p.ratings))


@lru_cache(maxsize=65536)
def _std(ratings: tuple[float, ...]) -> float:
    """np.std of each distinct list of ratings once: the statistics' most controversial papers and the sort by
    spread ask it of every paper (0.7 s of CPU at 19,632 papers; a few thousand distinct lists)."""
    return float(np.std(ratings))


class FilterError(ValueError):
    """A filter's value makes no sense (a sort that does not exist, a rating outside 0-10); `field` names it."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


# ---------------------------------------------------------------- sorts

@dataclass(frozen=True)
class Sort:
    name: str
    label: str                                   # the page's choice: "rating, best first"
    words: str                                   # a sorted list in words: "best rated first"
    key: Callable[[Paper], tuple] | None = None  # best first; None: the ranking's own order (relevance)
    needs: str = "has_ratings"                   # the IndexFacts it needs ("": none); without it, by relevance
    lacks: Callable[[Paper], bool] | None = None  # a paper without the value it sorts by (last in the list)
    lacks_words: str = ""                        # such papers in words: "without a citation count"
    # the value a list sorted so shows beside each paper, and its name (None: the mean rating)
    shows: Callable[[Paper], float | None] | None = None
    shows_name: str = "mean review rating"

    def offered(self, facts: IndexFacts) -> bool:
        return not self.needs or bool(getattr(facts, self.needs))


def _rating(p: Paper) -> float:
    return -p.avg_rating if p.avg_rating is not None else LAST


def _spread(p: Paper) -> float:
    s = spread(p)
    return -s if s is not None else LAST


def is_oral(p: Paper) -> bool:
    """An oral by its decision, or by its venue where the records carry no decision ("ICLR 2026 Oral")."""
    return p.decision == "Oral" or "oral" in p.venue.lower().split()


def in_programme(p: Paper) -> bool:
    """Known to be in the conference's programme: accepted by its decision, or by its venue's word."""
    return decision_group(p.decision) == "accepted" or bool({"oral", "poster", "spotlight"}
                                                             & set(p.venue.lower().split()))


def _oral(p: Paper) -> int:
    return 0 if is_oral(p) else 1


def _improved(p: Paper) -> float:
    m = move(p)
    return -m if m is not None else LAST


def _dropped(p: Paper) -> float:
    m = move(p)
    return m if m is not None else LAST


# Each sort but relevance breaks ties by the mean rating; papers without reviews go last.
def _cited(p: Paper) -> float:
    return -p.citations if p.citations is not None else LAST


SORT_LIST = (
    Sort("relevance", "relevance", "", needs=""),
    Sort("rating", "rating, best first", "best rated first", lambda p: (_rating(p),)),
    Sort("oral", "orals first, then rating", "orals first, then best rated", lambda p: (_oral(p), _rating(p))),
    Sort("controversy", "controversy (spread of ratings)", "most controversial first (spread of the ratings)",
         lambda p: (_spread(p), _rating(p)), shows=spread, shows_name="spread of the ratings (standard deviation)"),
    Sort("reviews", "most reviewed", "most reviewed first",
         lambda p: (-(p.n_ratings or len(p.ratings) or 0), _rating(p))),
    # the move since the previous fetch (parts.history.mark; with one fetch, since the reviews were first posted)
    Sort("improved", "most improved rating", "most improved rating first", lambda p: (_improved(p), _rating(p))),
    Sort("dropped", "most dropped rating", "most dropped rating first", lambda p: (_dropped(p), _rating(p))),
    # Google Scholar's count, where a venue list gives one
    Sort("cited", "most cited", "most cited first", lambda p: (_cited(p), _rating(p)), needs="has_citations",
         lacks=lambda p: p.citations is None, lacks_words="without a citation count",
         shows=lambda p: p.citations, shows_name="citations"),
)
SORTS = tuple(s.name for s in SORT_LIST)


def sub_score_sort(name: str) -> Sort:
    """A sub-score of the reviews ("soundness") as a sort: best mean first."""
    def key(p: Paper) -> tuple:
        value = p.sub_scores.get(name)
        return (-value if value is not None else LAST, _rating(p))

    return Sort(name, f"{name}, best first", f"best {name} first", key)


def sort_named(name: str, sub_scores: Iterable[str] = ()) -> Sort:
    """The sort of that name, a declared one or one of the index's sub-scores; ValueError otherwise."""
    for s in SORT_LIST:
        if s.name == name:
            return s
    sub_scores = list(sub_scores)
    if name in sub_scores:
        return sub_score_sort(name)
    raise ValueError(f"unknown sort {name!r}; choose one of {', '.join([*SORTS, *sub_scores])}")


def sort_choices(sub_scores: Iterable[str] = (), facts: IndexFacts | None = None) -> list[Sort]:
    """Every sort an index offers: the declared ones (with `facts`, those it has what they need for), then its
    reviews' sub-scores."""
    return [*(s for s in SORT_LIST if facts is None or s.offered(facts)), *(sub_score_sort(n) for n in sub_scores)]


# ---------------------------------------------------------------- filters

@dataclass(frozen=True)
class IndexFacts:
    """What an index holds that decides which filters it can apply (Catalog.facts)."""
    areas: frozenset = frozenset()
    venues: frozenset = frozenset()
    decisions: frozenset = frozenset()
    sub_scores: tuple = ()
    has_authors: bool = True
    has_ratings: bool = True
    fetches: int = 0          # fetches in the index's history (history.py): 2 or more to compare two
    # the venues of its papers: (conference, year) pairs and (conference folded, year, word) of their tracks and
    # decisions (venue_parts); the years; whether any paper names an affiliation, a citation count
    venue_years: frozenset = frozenset()
    venue_words: frozenset = frozenset()
    has_affiliations: bool = False
    has_citations: bool = False
    baseline: str = ""        # what a rating's move is measured from (the history's), "" without a history
    declared: frozenset = frozenset()   # the facts that filters declare (Filter.facts) which these papers have

    def has(self, name: str) -> bool:
        return name in self.declared or bool(getattr(self, name, False))

    @property
    def years(self) -> list[int]:
        return sorted({y for _, y in self.venue_years if y is not None})

    @property
    def conferences(self) -> list[str]:
        return sorted({c for c, _ in self.venue_years if c}, key=str.casefold)


def _texts(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))


def _last(params: Mapping[str, list[str]], key: str) -> str:
    values = params.get(key) or [""]
    return values[-1].strip()


def _score(raw, what: str) -> float:
    value = float(raw)
    if not 0 <= value <= 10:
        raise ValueError(f"{what} is from 0 to 10")
    return value


@dataclass(frozen=True)
class Widget:
    """A filter's widget in the page's sidebar, as data (search/ draws nothing). Its kind: "choices", several of
    what the index offers (Filter.options); "choice", one of them; "text", a box for part of a name (the first
    value); "number", a number from 0 to 10 or none; "numbers", one such number per name the index offers
    (sub-scores); "flag", a checkbox. A choice of fewer than two options is not drawn."""
    kind: str
    label: str
    help: str = ""
    placeholder: str = ""
    step: float = 0.5     # a number's step


class Filter:
    """One way of narrowing (or ordering) a list: the Filters field it fills (`field`, of type `annotation` with
    `default`), its address key, and its CLI flag (--key, repeatable; its values read as the address's). The
    defaults fit a tuple of texts; each kind below changes what differs."""
    field: str
    key: str
    help: str = ""
    metavar: str | None = None
    widget: Widget | None = None   # how the page's sidebar asks for it (None: not on the page)
    needs: tuple[str, ...] = ()    # the IndexFacts it needs: where one is false the page hides it
    annotation = "tuple[str, ...]"
    default: object = ()

    def shown(self, facts: IndexFacts) -> bool:
        """Whether the index has what this filter needs (the sidebar draws its widget only then)."""
        return all(facts.has(n) for n in self.needs)

    @property
    def flag(self) -> str:
        return self.key.replace("_", "-")

    def add_flag(self, parser) -> None:
        """Its flag on an argparse parser: repeatable, each value read as the address's."""
        parser.add_argument(f"--{self.flag}", action="append", default=[], dest=self.field, metavar=self.metavar,
                            help=self.help)

    def from_flag(self, values) -> dict[str, list[str]]:
        """A flag's values as address keys and values (what `read` takes)."""
        return {self.key: list(values)} if values else {}

    def offers(self, facts: IndexFacts) -> list[str]:
        """What an index offers this filter (named where the CLI refuses a value); [] for free values."""
        return []

    def options(self, value, facts: IndexFacts) -> list[str]:
        """The choices its widget lists: what the index offers, then any asked for that it does not."""
        return list(dict.fromkeys([*self.offers(facts), *value]))

    def label(self, choice: str) -> str:
        """A choice in words, as its widget lists it."""
        return choice

    def widget_for(self, facts: IndexFacts) -> Widget | None:
        """Its widget on this index (None where it lacks what the filter needs)."""
        return self.widget if self.shown(facts) else None

    def columns(self) -> dict[str, Callable[[list[Paper]], object]]:
        """The catalogue columns it reads that no other filter makes: name -> maker from the papers."""
        return {}

    def declared_facts(self) -> dict[str, Callable[[list[Paper]], bool]]:
        """The index facts it needs that IndexFacts does not declare: name -> whether the papers have it."""
        return {}

    def read(self, params: Mapping[str, list[str]]) -> tuple[object, list[str]]:
        """Its value in a page's address (each key's values), and what did not parse, in words."""
        return tuple(params.get(self.key) or ()), []

    def check(self, value):
        """The value cleaned; FilterError when it makes no sense in any index."""
        return _texts(value)

    def fit(self, value, facts: IndexFacts) -> tuple[object, list[str]]:
        """The value as an index can apply it, and what it left out, in words."""
        return value, []

    def mask(self, value, catalog) -> np.ndarray | None:
        """The rows it allows (None: all)."""
        return None

    def narrows(self, value) -> bool:
        return bool(value)

    def write(self, value) -> dict[str, list[str]]:
        return {self.key: list(value)} if value else {}


@dataclass(frozen=True)
class Facet(Filter):
    """Papers with any of the given values of a field the index lists (areas, venues)."""
    field: str
    key: str
    facet: str   # the IndexFacts set of its values and the Catalog column of each paper's
    help: str = ""
    widget: Widget | None = None

    def offers(self, facts):
        return sorted(getattr(facts, self.facet))

    def fit(self, value, facts):
        known = getattr(facts, self.facet)
        return tuple(v for v in value if v in known), [f"{self.key} {v!r}" for v in value if v not in known]

    def mask(self, value, catalog):
        return np.isin(catalog.columns[self.facet], list(value)) if value else None


@dataclass(frozen=True)
class Authors(Filter):
    """Papers with an author whose name contains any of the given parts (case and accents ignored)."""
    field: str = "authors"
    key: str = "author"
    help: str = "only papers with an author whose name contains this, e.g. 'LeCun' (repeatable; every venue)"
    widget: Widget | None = Widget("text", "Author", "papers with an author whose name contains this (case and "
                                   "accents ignored)", "part of a name, e.g. LeCun")
    needs: tuple[str, ...] = ("has_authors",)
    column: str = "authors"    # the Catalog column of each paper's names, folded, one a line
    what: str = "authors' names"

    def read(self, params):
        return tuple(a.strip()[:200] for a in params.get(self.key) or () if a.strip()), []

    def fit(self, value, facts):
        if value and not self.shown(facts):
            return (), [f"{self.key} {a!r} (this index has no {self.what})" for a in value]
        return value, []

    def mask(self, value, catalog):
        names = [n for n in (fold(a) for a in value) if n]
        if not names:
            return None
        column = catalog.columns[self.column]
        return np.fromiter((any(n in a for n in names) for a in column), bool, len(column))


@dataclass(frozen=True)
class Affiliations(Authors):
    """Papers with an author at an institution whose name contains any of the given parts (folded as names)."""
    field: str = "affiliations"
    key: str = "affiliation"
    help: str = "only papers with an author at an institution whose name contains this, e.g. 'Stanford' " \
                "(repeatable; case and accents ignored)"
    widget: Widget | None = Widget("text", "Affiliation", "papers with an author at an institution whose name "
                                   "contains this (case and accents ignored)", "part of a name, e.g. Stanford")
    needs: tuple[str, ...] = ("has_affiliations",)
    column: str = "affiliations"
    what: str = "affiliations"


YEAR = re.compile(r"((?:19|20)\d\d)(?:\s*(?:-|–|\.\.)\s*((?:19|20)\d\d))?")


def year_range(text: str) -> tuple[int, int]:
    """"2024" -> (2024, 2024), "2017-2019" -> (2017, 2019); ValueError otherwise."""
    m = YEAR.fullmatch(text.strip())
    if not m:
        raise ValueError(text)
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    return (lo, hi) if lo <= hi else (hi, lo)


def _span(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


@dataclass(frozen=True)
class Years(Filter):
    """Papers of any of the given years or ranges ("2024", "2017-2019")."""
    field: str = "years"
    key: str = "year"
    help: str = "only papers of this year or range of years, e.g. 2024 or 2017-2019 (repeatable)"
    metavar: str = "YEAR"
    widget: Widget | None = Widget("choices", "Year", "papers of any of these years")
    needs: tuple[str, ...] = ("years",)

    def read(self, params):
        kept, ignored = [], []
        for raw in params.get(self.key) or ():
            for part in raw.split(","):
                if not part.strip():
                    continue
                try:
                    kept.append(_span(*year_range(part)))
                except ValueError:
                    ignored.append(f"{self.key}={part.strip()[:40]} (use a year such as 2024 or a range such "
                                   "as 2017-2019)")
        return tuple(dict.fromkeys(kept)), ignored

    def check(self, value):
        out = []
        for v in _texts(str(x) for x in value):
            try:
                out.append(_span(*year_range(v)))
            except ValueError:
                raise FilterError(f"unknown year {v!r}: use a year such as 2024 or a range such as 2017-2019",
                                  self.key) from None
        return tuple(dict.fromkeys(out))

    def offers(self, facts):
        return [str(y) for y in facts.years]

    def fit(self, value, facts):
        years = facts.years
        kept = tuple(v for v in value if any(lo <= y <= hi for y in years for lo, hi in [year_range(v)]))
        has = f"its papers are of {_years_said(years)}" if years else "its papers have no year"
        return kept, [f"year {v} (this index has no paper of {v}: {has})" for v in value if v not in kept]

    def mask(self, value, catalog):
        if not value:
            return None
        years = catalog.columns["year"]
        return np.logical_or.reduce([(years >= lo) & (years <= hi) for lo, hi in map(year_range, value)])


def _years_said(years: list[int]) -> str:
    """2013, 2014, 2017-2019: runs of years as ranges."""
    runs: list[list[int]] = []
    for y in years:
        if runs and y == runs[-1][1] + 1:
            runs[-1][1] = y
        else:
            runs.append([y, y])
    return ", ".join(_span(lo, hi) for lo, hi in runs)


VENUE_LABEL = re.compile(r"(?:submitted to\s+)?(.+?)\s+((?:19|20)\d\d)\b\s*(.*)", re.IGNORECASE)


def venue_parts(p: Paper) -> tuple[str, int | None, str]:
    """A paper's conference, year and track: its fields, or where an older index has none, read from its venue's
    words ("ICLR 2026 Oral", "Submitted to ICLR 2026")."""
    if p.conference:
        return p.conference, p.year, p.track
    label = _label(p.venue)
    return label if label else ("", p.year, p.track)


@lru_cache(maxsize=4096)
def _label(venue: str) -> tuple[str, int, str] | None:
    # an index holds a few venue labels for thousands of papers: read each once (0.38 s of a cold start at 19,632)
    m = VENUE_LABEL.fullmatch(venue.strip())
    return (m.group(1), int(m.group(2)), m.group(3)) if m else None


def venue_words(p: Paper, parts: tuple[str, int | None, str] | None = None) -> frozenset[str]:
    """The words a venue filter's track part may name of a paper (its venue_parts, where known): its track's,
    decision's and venue's."""
    return _words(f"{(parts or venue_parts(p))[2]} {p.decision} {p.venue}")


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(fold(text).split())


def venue_facts(labels: Iterable[tuple[tuple[str, int | None, str], frozenset[str]]]) -> dict:
    """IndexFacts' venue_years and venue_words of papers given as (venue_parts, venue_words) pairs: an index's
    thousands of papers share a few pairs, so pass them as a set."""
    years, words = set(), set()
    for (conference, year, _), said in labels:
        if conference:
            years.add((conference, year))
            words.update((fold(conference), year, w) for w in said)
    return {"venue_years": frozenset(years), "venue_words": frozenset(words)}


def parse_venue(text: str) -> tuple[str, int | None, tuple[str, ...]]:
    """"ACL 2022 Findings" -> ("acl", 2022, ("findings",)); "COLM" -> ("colm", None, ()); "colm2024" too."""
    words = []
    for w in text.split():
        m = re.fullmatch(r"([^\d\s]+)((?:19|20)\d\d)", w)
        words += [m.group(1), m.group(2)] if m else [w]
    at = next((n for n, w in enumerate(words) if re.fullmatch(r"(19|20)\d\d", w)), None)
    if at is None:
        return fold(" ".join(words[:1])), None, tuple(fold(w) for w in words[1:])
    return fold(" ".join(words[:at])), int(words[at]), tuple(fold(w) for w in words[at + 1:])


@dataclass(frozen=True)
class Venues(Filter):
    """Papers of any of the given venues: a venue's name, with or without its year and track ("COLM",
    "COLM 2024", "ACL 2022 Findings", "ICLR 2026 Oral"); case ignored."""
    field: str = "venues"
    key: str = "venue"
    help: str = "only this venue, with or without its year or track: 'COLM', 'COLM 2024', 'ACL 2022 Findings' " \
                "(repeatable; case ignored)"
    widget: Widget | None = Widget("choices", "Venue", "papers of any of these venues and years")
    needs: tuple[str, ...] = ("venue_years",)

    def read(self, params):
        return tuple(v.strip()[:100] for v in params.get(self.key) or () if v.strip()), []

    def offers(self, facts):
        return [f"{c} {y}" if y else c for c, y in sorted(facts.venue_years, key=lambda cy: (cy[0].casefold(),
                                                                                            cy[1] or 0))]

    def fit(self, value, facts):
        kept, dropped = [], []
        names = {fold(c): c for c in facts.conferences}
        for v in value:
            name, year, words = parse_venue(v)
            if name not in names:
                close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
                if not names:
                    dropped.append(f"venue {v!r} (this index names no venues)")
                    continue
                said = f"; close: {', '.join(names[c] for c in close)}" if close else \
                    f"; it has {', '.join(facts.conferences[:12])}{' ...' if len(names) > 12 else ''}"
                dropped.append(f"venue {v!r} (no venue of that name in this index{said})")
                continue
            years = sorted(y for c, y in facts.venue_years if fold(c) == name and y is not None)
            if year is not None and year not in years:
                dropped.append(f"venue {v!r} (this index has {names[name]} of {_years_said(years) or 'no year'})")
                continue
            known = {w for c, y, w in facts.venue_words if c == name and (year is None or y == year)}
            missing = [w for w in words if w not in known]
            if missing:
                close = difflib.get_close_matches(missing[0], sorted(known), n=3, cutoff=0.6)
                dropped.append(f"venue {v!r} (no {missing[0]!r} among its tracks and decisions"
                               + (f"; close: {', '.join(close)})" if close else ")"))
                continue
            kept.append(v)
        return tuple(kept), dropped

    def mask(self, value, catalog):
        if not value:
            return None
        c = catalog.columns
        masks = []
        for v in value:
            name, year, words = parse_venue(v)
            m = c["conference"] == name
            if year is not None:
                m &= c["year"] == year
            if words:
                m &= np.fromiter((all(w in have for w in words) for have in c["venue_words"]), bool, len(m))
            masks.append(m)
        return np.logical_or.reduce(masks)


@dataclass(frozen=True)
class Choices(Filter):
    """Any of a fixed list of words (`choices`), repeatable or comma-separated; `noun` names one in messages."""
    choices: tuple = ()
    noun: str = ""

    def read(self, params):
        chosen, ignored = [], []
        for raw in params.get(self.key) or ():
            for word in raw.lower().split(","):
                if word.strip() in self.choices:
                    chosen.append(word.strip())
                elif word.strip():
                    ignored.append(f"{self.key}={word.strip()[:40]} (use {', '.join(self.choices)})")
        return tuple(chosen), ignored

    def check(self, value):
        value = _texts(v.lower() for v in value)
        bad = [v for v in value if v not in self.choices]
        if bad:
            raise FilterError(f"unknown {self.noun} {bad[0]!r}; choose from {', '.join(self.choices)}", self.key)
        return value

    def write(self, value):
        return {self.key: [",".join(value)]} if value else {}


@dataclass(frozen=True)
class Decisions(Choices):
    """Submissions whose decision is in any of the groups (DECISION_CHOICES); () is the index's default."""
    field: str = "decisions"
    key: str = "decision"
    help: str = ("accepted (the default once any paper is accepted), active (every submission not withdrawn: the "
                 "default before the decisions), rejected, withdrawn, undecided, oral, spotlight, poster, or all "
                 "(repeatable, or comma-separated)")
    metavar: str = "D"
    choices: tuple = DECISION_CHOICES
    noun: str = "decision"
    widget: Widget | None = Widget(
        "choice", "Submissions", "Which submissions to search: the accepted papers by default once decisions are "
        "out (every submission not withdrawn before), or every submission (related work often sits among the "
        "rejected)")
    needs: tuple[str, ...] = ("decisions",)
    listed: tuple = ("accepted", "active", "rejected", "withdrawn", "undecided", "oral", "spotlight", "poster")

    def options(self, value, facts):
        """The index's default first, then every submission, then each group some paper is in; one choice
        (which may join several groups, as the address can) at a time."""
        default = (default_decisions(facts.decisions) or ("all",))[0]
        present = [g for g in self.listed if set(DECISION_GROUPS[g]) & set(facts.decisions)]
        return list(dict.fromkeys([default, "all", *present, ",".join(value) or default]))

    def label(self, choice):
        return " + ".join(DECISION_LABELS.get(c, c) for c in choice.split(","))

    def fit(self, value, facts):
        default = default_decisions(facts.decisions)
        if not default:
            return (), [f"decision {d!r} (this index holds no decisions)" for d in value if d != "all"]
        return value or default, []

    def mask(self, value, catalog):
        allowed = decisions_of(value)
        return None if allowed is None else np.isin(catalog.columns["decisions"], list(allowed))

    def narrows(self, value):
        return decisions_of(value) is not None


@dataclass(frozen=True)
class Minimum(Filter):
    """A number from 0 to 10 that a paper's value must reach; `noun` names it in messages."""
    noun: str = ""
    annotation = "float | None"
    default: object = None

    def options(self, value, facts):
        return []

    def read(self, params):
        raw = _last(params, self.key)
        if not raw:
            return None, []
        try:
            return _score(raw, f"a {self.noun}"), []
        except ValueError:
            return None, [f"{self.key}={raw[:40]} (use a {self.noun} from 0 to 10)"]

    def check(self, value):
        if value is not None and not 0 <= float(value) <= 10:
            raise FilterError(f"a minimum {self.noun} is from 0 to 10, not {value:g}", self.key)
        return value

    def narrows(self, value):
        return value is not None

    def write(self, value):
        return {} if value is None else {self.key: [f"{value:g}"]}


@dataclass(frozen=True)
class MinRating(Minimum):
    """Reviewed papers whose mean rating is at least this."""
    field: str = "min_rating"
    key: str = "min_rating"
    help: str = "only papers whose reviews' mean rating is at least X"
    metavar: str = "X"
    noun: str = "rating"
    widget: Widget | None = Widget("number", "Minimum rating", "only reviewed papers whose mean rating is at least "
                                   "this", "any")
    needs: tuple[str, ...] = ("has_ratings",)

    def fit(self, value, facts):
        if value is not None and not facts.has_ratings:  # every paper would fail it: "no paper matches" misled
            return None, [f"min_rating={value:g} (this index has no review ratings)"]
        return value, []

    def mask(self, value, catalog):
        return None if value is None else catalog.columns["rating"] >= float(value)  # NaN compares False


@dataclass(frozen=True)
class MinScores(Filter):
    """Reviewed papers whose mean sub-score is at least the given one, for each given (min_soundness=3)."""
    field: str = "min_scores"
    key: str = "min_"   # a prefix: one key per sub-score
    help: str = "only papers whose reviews' mean sub-score is at least X, e.g. soundness=3 (repeatable)"
    metavar: str = "NAME=X"
    annotation = "tuple[tuple[str, float], ...]"
    widget: Widget | None = Widget("numbers", "Minimum {name}", "only papers whose reviews' mean {name} is at least "
                                   "this", "any")
    needs: tuple[str, ...] = ("sub_scores",)

    @property
    def flag(self) -> str:
        return "min-score"

    def options(self, value, facts):
        return list(facts.sub_scores)

    def from_flag(self, values):
        out = {}
        for item in values:
            name, _, value = item.partition("=")
            out[f"{self.key}{name.strip()}"] = [value]
        return out

    def keys(self, params: Mapping) -> list[str]:
        return sorted(k for k in params if k.startswith(self.key) and k != MinRating.key)

    def read(self, params):
        scores, ignored = [], []
        for name in self.keys(params):
            score, raw = name[len(self.key):], _last(params, name)
            try:
                if not SUB_SCORE.fullmatch(score):
                    raise ValueError(score)
                scores.append((score, _score(raw, "a score")))
            except ValueError:
                ignored.append(f"{name[:40]}={raw[:40]} (use a score from 0 to 10)")
        return tuple(scores), ignored

    def check(self, value):
        for name, score in value:
            if not SUB_SCORE.fullmatch(name) or not 0 <= float(score) <= 10:
                raise FilterError(f"a minimum sub-score is a name and a number from 0 to 10 (soundness=3), "
                                  f"not {name}={score}", "min_score")
        return tuple(value)

    def offers(self, facts):
        return list(facts.sub_scores)

    def fit(self, value, facts):
        return (tuple((n, v) for n, v in value if n in facts.sub_scores),
                [f"sub-score {n!r}" for n, _ in value if n not in facts.sub_scores])

    def mask(self, value, catalog):
        masks = [catalog.columns["sub_scores"][n] >= float(v) for n, v in value if n in catalog.columns["sub_scores"]]
        return np.logical_and.reduce(masks) if masks else None

    def write(self, value):
        return {f"{self.key}{n}": [f"{v:g}"] for n, v in value}


_SORT_HELP = (f"{SORT_LIST[0].name} (default); "
              + "; ".join(f"{s.name}: {s.words}" for s in SORT_LIST[1:])
              + f"; or a sub-score of the reviews (soundness, presentation, ...), best first. Each keeps, of the "
                f"{SORT_POOL} most relevant papers, those close to the best match, and re-orders them")


@dataclass(frozen=True)
class SortOrder(Filter):
    """The order of the list: a SORT_LIST name or a sub-score of the reviews; it leaves no paper out."""
    field: str = "sort"
    key: str = "sort"
    help: str = _SORT_HELP
    metavar: str = "SORT"
    widget: Widget | None = Widget(
        "choice", "Sort by", f"A sort keeps, of the {SORT_POOL} papers most relevant to a query, those close to the "
        "best match, and re-orders them (a topic or reading list: all of it); it never fetches other papers.")
    annotation = "str"
    default: object = "relevance"

    def options(self, value, facts):
        return [s.name for s in sort_choices(facts.sub_scores, facts)]

    def label(self, choice):
        return sort_named(choice, [choice]).label

    def read(self, params):
        sort = _last(params, self.key) or "relevance"
        if sort not in SORTS and not SUB_SCORE.fullmatch(sort):
            return "relevance", [f"sort={sort[:40]} (use {', '.join(SORTS)} or a sub-score)"]
        return sort, []

    def check(self, value):
        if value not in SORTS and not SUB_SCORE.fullmatch(value):
            raise FilterError(f"unknown sort {value!r}; choose one of {', '.join(SORTS)} or a sub-score "
                              "of the reviews (soundness, ...)", "sort")
        return value

    def offers(self, facts):
        return [*SORTS, *facts.sub_scores]

    def fit(self, value, facts):
        if value not in SORTS and value not in facts.sub_scores:
            return "relevance", [f"sort {value!r}"]
        return value, []

    def narrows(self, value):
        return False

    def write(self, value):
        return {} if value == "relevance" else {self.key: [value]}


def has_moves(papers: list[Paper]) -> bool:
    """Whether any paper's mean rating has a value to have moved from (a previous fetch's, or its reviews' as
    first posted): a venue list's records have none."""
    return any(p.rating_from is not None for p in papers)


# What changed since the previous fetch, as the `changed` filter names it: what each needs of the history
CHANGES = {"new": "new submissions", "moved": "rating moved", "up": "rating moved up", "down": "rating moved down",
           "decision": "decision changed", "withdrawn": "withdrawn", "reviews": "new reviews"}
NEED_TWO_FETCHES = ("new", "decision", "withdrawn", "reviews")   # the rest compare with the first posted, too


@dataclass(frozen=True)
class Changed(Choices):
    """Papers that changed since the previous fetch in any of the given ways (CHANGES)."""
    field: str = "changed"
    key: str = "changed"
    help: str = ("only papers that changed since the previous fetch: "
                 + ", ".join(f"{c} ({w})" for c, w in CHANGES.items()) + "; repeatable or comma-separated, any of them")
    metavar: str = "WHAT"
    choices: tuple = tuple(CHANGES)
    noun: str = "change"
    widget: Widget | None = Widget("choices", "Changed since the previous fetch", "papers that changed in any of "
                                   "these ways")
    needs: tuple[str, ...] = ("fetches",)

    def offers(self, facts):
        return [c for c in CHANGES if facts.fetches > 1 or c not in NEED_TWO_FETCHES]

    def options(self, value, facts):
        return self.offers(facts)

    def label(self, choice):
        return CHANGES.get(choice, choice)

    def declared_facts(self):
        return {"moves": has_moves}

    def widget_for(self, facts):
        # with one fetch, only the moves since the reviews were first posted: none where no record dates its
        # reviews' versions (a venue list's), and the widget would only ever find nothing
        if not self.shown(facts) or (facts.fetches < 2 and not facts.has("moves")):
            return None
        return self.widget if facts.fetches > 1 else replace(self.widget, label="Changed since first posted")

    def fit(self, value, facts):
        if facts.fetches >= 2:
            return value, []
        why = "this index has no fetch history" if facts.fetches == 0 else \
            "this index has one fetch: nothing to compare with yet"
        kept = () if facts.fetches == 0 else tuple(c for c in value if c not in NEED_TWO_FETCHES)
        return kept, [f"changed={c} ({why})" for c in value if c not in kept]

    def mask(self, value, catalog):
        if not value:
            return None
        c = catalog.columns
        move = np.nan_to_num(c["move"], nan=0.0)
        masks = {"new": c["new"], "moved": np.abs(move) > EPSILON, "up": move > EPSILON, "down": move < -EPSILON,
                 "decision": (c["decision_from"] != "") & (c["decision_from"] != c["decisions"])
                 & (c["decisions"] != "Withdrawn"),
                 "withdrawn": (c["decision_from"] != "") & (c["decision_from"] != "Withdrawn")
                 & (c["decisions"] == "Withdrawn"),
                 "reviews": c["reviews_added"] > 0}
        return np.logical_or.reduce([masks[v] for v in value])


@dataclass(frozen=True)
class MinMove(Minimum):
    """Papers whose mean rating moved (up or down) by at least this since the previous fetch."""
    field: str = "min_move"
    key: str = "moved"
    help: str = "only papers whose mean rating moved, up or down, by at least X since the previous fetch"
    metavar: str = "X"
    noun: str = "move"
    widget: Widget | None = Widget("number", "Rating moved by at least", "up or down, since {baseline}", "any",
                                   step=0.25)
    needs: tuple[str, ...] = ("fetches", "moves")

    def declared_facts(self):
        return {"moves": has_moves}

    def widget_for(self, facts):
        if not self.shown(facts):
            return None
        since = facts.baseline[:10] if facts.fetches > 1 else "the reviews were first posted"
        return replace(self.widget, help=self.widget.help.format(baseline=since))

    def fit(self, value, facts):
        if value is not None and (facts.fetches == 0 or not facts.has_ratings or not facts.has("moves")):
            return None, [f"moved={value:g} (this index has no rating history)"]
        return value, []

    def mask(self, value, catalog):
        # a hair under: 5.25 -> 5.75 is a move of 0.5 in floats that print as 0.4999999
        return None if value is None else np.abs(catalog.columns["move"]) >= float(value) - EPSILON


@dataclass(frozen=True)
class Flag(Filter):
    """Papers for which `test` holds, asked for by a bare flag (--key) and `key=1` in the address; nothing
    written where it is off."""
    field: str
    key: str
    test: Callable[[Paper], bool]
    help: str = ""
    widget: Widget | None = None
    needs: tuple[str, ...] = ()
    annotation = "bool"
    default: object = False

    def add_flag(self, parser):
        parser.add_argument(f"--{self.flag}", action="store_true", dest=self.field, help=self.help)

    def from_flag(self, values):
        return {self.key: ["1"]} if values else {}

    def read(self, params):
        if self.key not in params:
            return False, []
        raw = _last(params, self.key).lower()
        if raw in ("", "1", "true", "yes", "on"):
            return True, []
        if raw in ("0", "false", "no", "off"):
            return False, []
        return False, [f"{self.key}={raw[:40]} (use {self.key}=1, or leave it out)"]

    def check(self, value):
        return bool(value)

    def options(self, value, facts):
        return []

    def columns(self):
        test = self.test
        return {self.field: lambda papers: np.fromiter((bool(test(p)) for p in papers), bool, len(papers))}

    def mask(self, value, catalog):
        return catalog.columns[self.field] if value else None

    def write(self, value):
        return {self.key: ["1"]} if value else {}


# In the order the page's sidebar draws them, and names what it ignored or could not apply.
FILTERS: tuple[Filter, ...] = (
    Decisions(),
    Facet("areas", "area", "areas", "only this primary area (repeatable)", widget=Widget("choices", "Primary area")),
    Venues(), Years(), Authors(), Affiliations(), SortOrder(), MinRating(), MinScores(), Changed(), MinMove())


@dataclass(frozen=True, kw_only=True)
class FilterSet:
    """What every `Filters` does with its values; its fields are the filters' (FILTERS)."""
    unknown: tuple[str, ...] = field(default=(), compare=False)  # what `known` dropped, in words

    def __post_init__(self) -> None:
        for f in FILTERS:
            object.__setattr__(self, f.field, f.check(getattr(self, f.field)))

    @property
    def narrows(self) -> bool:
        """Whether any filter (not the sort) leaves papers out."""
        return any(f.narrows(getattr(self, f.field)) for f in FILTERS)

    def known(self, areas: Iterable[str], venues: Iterable[str], decisions: Iterable[str] = (),
              sub_scores: Iterable[str] = (), has_authors: bool = True, has_ratings: bool = True) -> Filters:
        """These filters as an index can apply them: without the areas, venues, decisions, authors and
        sub-scores it lacks (which `unknown` names), and on `default_decisions` of the decisions its
        papers carry where no decision is asked for."""
        venues = frozenset(venues)
        labels = [Paper(id="", abstract="", text="", title="", title_derived=False, venue=v) for v in venues]
        return self.fitted(IndexFacts(frozenset(areas), venues, frozenset(decisions), tuple(sub_scores),
                                      has_authors, has_ratings,
                                      **venue_facts({(venue_parts(p), venue_words(p)) for p in labels})))

    def fitted(self, facts: IndexFacts) -> Filters:
        values, unknown = {}, []
        for f in FILTERS:
            values[f.field], dropped = f.fit(getattr(self, f.field), facts)
            unknown += dropped
        return replace(self, **values, unknown=tuple(unknown))

    @classmethod
    def from_address(cls, params: Mapping[str, list[str]]) -> tuple[Filters, list[str]]:
        """The filters in a page's address (each key's values), and what did not parse, in words; a value
        that does not parse is left out and the default used."""
        values, ignored = {}, []
        for f in FILTERS:
            values[f.field], bad = f.read(params)
            ignored += bad
        return cls(**values), ignored

    def to_address(self) -> dict[str, list[str]]:
        """The address keys and values that give these filters back (`from_address`)."""
        out: dict[str, list[str]] = {}
        for f in FILTERS:
            out.update(f.write(getattr(self, f.field)))
        return out

    def mask(self, catalog) -> np.ndarray | None:
        """The rows of a catalogue these filters allow (its `columns`), or None when nothing is filtered."""
        masks = [m for f in FILTERS if (m := f.mask(getattr(self, f.field), catalog)) is not None]
        return np.logical_and.reduce(masks) if masks else None


def filters_class(filters: tuple[Filter, ...]) -> type:
    """The values of these filters as one frozen, hashable object: a field per filter, of its declared type and
    default (Filters(sort="rating", venues=("COLM",)))."""
    cls = make_dataclass("Filters", [(f.field, f.annotation, field(default=f.default)) for f in filters],
                         bases=(FilterSet,), frozen=True, kw_only=True)
    cls.__module__, cls.__doc__ = __name__, "The filters and sort of a list: " + ", ".join(f.field for f in filters)
    return cls


Filters = filters_class(FILTERS)


def address_key(key: str) -> bool:
    """Whether an address key is a filter's (the page keeps them when it moves between views)."""
    return any(key == f.key or (isinstance(f, MinScores) and key.startswith(f.key)) for f in FILTERS)


NO_FILTERS = Filters()
