"""The papers of an index as a catalogue: ids and aliases, facets and filters, sorting, topics and the map."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import cached_property, lru_cache

import numpy as np

from .corpus import FIELDS, RECORD_ONLY, Paper
from .filters import (DECISION_GROUPS, FILTERS, NO_FILTERS, SORTS, Filters, IndexFacts, fold, sort_named,
                      sub_score_sort, venue_facts, venue_parts, venue_words)
from .parts.history import move
from .text import strip_control
from .topics import Topic


class UnknownPaper(LookupError):
    """One or more ids name no paper in the index."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        super().__init__(f"no paper with id {', '.join(repr(i) for i in ids)} in this index")


def ordered(rows: Iterable[int], papers: list[Paper], sort: str) -> list[int]:
    """Rows re-ordered by `sort` (a stable sort: equal keys keep their relevance order); a name no sort of
    filters.SORT_LIST has is a sub-score of the reviews, whose papers without one go last."""
    rows = [int(r) for r in rows]
    key = (sort_named(sort) if sort in SORTS else sub_score_sort(sort)).key
    return rows if key is None else sorted(rows, key=lambda r: key(papers[r]))


# The rating scales venues use, by their top: 1-4 (CoRL 2024), 1-5 (ICML 2025), 1-6 (NeurIPS 2025), 1-10 (ICLR,
# COLM, NeurIPS before 2025); a venue-year whose reviews never gave the top of its scale still reads as it
RATING_TOPS = (4, 5, 6, 10)


def scale_of(top: float) -> float:
    """The top of the rating scale that holds this rating (the top itself above every known scale)."""
    return next((t for t in RATING_TOPS if top <= t), float(np.ceil(top)))


def scales_words(labels: list[str], names: int = 4) -> str:
    """Catalog.mixed_scales's labels by scale, largest first: "up to 10: COLM 2024, ICLR 2017 and 3 more; up to
    4: CoRL 2024" ("" for none)."""
    by_top: dict[str, list[str]] = {}
    for label in labels:
        name, top = label.rsplit(" up to ", 1)
        by_top.setdefault(top, []).append(name)
    return "; ".join(f"up to {top}: " + ", ".join(said[:names]) + (f" and {len(said) - names} more"
                                                                   if len(said) > names else "")
                     for top, said in sorted(by_top.items(), key=lambda kv: -float(kv[0])))


MASKS_KEPT = 32  # distinct filters' masks a catalogue keeps (70,130 papers: 70 KB each)


class _Columns(Mapping):
    """Columns by name, each made by its maker at its first use."""

    def __init__(self, makers: dict[str, Callable[[], object]]):
        self._makers, self._made = makers, {}

    def __getitem__(self, name: str):
        if name not in self._made:
            self._made[name] = self._makers[name]()
        return self._made[name]

    def __iter__(self):
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


class Catalog:
    """What is known of the papers without any query: rows by id, facets, filters, topics, map points;
    `fetches`: how many fetches the index's history holds (the filters on changes need two)."""

    def __init__(self, papers: list[Paper], topics: Iterable[Topic] = (), map_points: Iterable[dict] = (),
                 fetches: int = 0, explored: Callable[[], tuple[Iterable[Topic], Iterable[dict]]] | None = None,
                 baseline: str = ""):
        """`explored`: the topics and map points read when first asked for, instead of `topics` and `map_points`
        (a search that shows no topic label reads neither file); `baseline`: what the history measures a rating's
        move from."""
        self.papers = papers
        self.areas = sorted({p.primary_area for p in papers if p.primary_area})
        self.venues = sorted({p.venue for p in papers if p.venue})
        self.derived = np.array([p.title_derived for p in papers], dtype=bool)
        self._rating = np.array([np.nan if p.avg_rating is None else p.avg_rating for p in papers], float)
        self.has_ratings = bool(np.isfinite(self._rating).any())
        rated = self._rating[np.isfinite(self._rating)]
        self.rating_summary = f"mean {rated.mean():.2f}, median {np.median(rated):.2f}" if len(rated) else ""
        self.has_authors = any(p.authors for p in papers)
        self.decisions = sorted({p.decision for p in papers if p.decision})
        self.has_decisions = bool(self.decisions)
        self.has_reviews = any(p.ratings for p in papers)
        # what each filter reads of a paper (filters.FILTERS), each column made at its first use: a command reads
        # a few of them (a cold `query` made all of them in 0.34 s of 1.6 s at 19,632 papers). The makers close
        # over the papers, never over the catalogue: a cycle back to it would outlive a dropped engine
        rating = self._rating
        names = tuple(dict.fromkeys(n for p in papers for n in p.sub_scores))  # in the first reviewed paper's order
        parts = lru_cache(maxsize=1)(lambda: [venue_parts(p) for p in papers])
        self.columns = _Columns({
            "areas": lambda: np.array([p.primary_area for p in papers], dtype=object),
            "venues": lambda: np.array([p.venue for p in papers], dtype=object),
            "authors": lambda: ["\n".join(fold(a) for a in p.authors) for p in papers],
            "rating": lambda: rating,
            "decisions": lambda: np.array([p.decision for p in papers], dtype=object),
            "sub_scores": lambda: {n: np.array([p.sub_scores.get(n, np.nan) for p in papers], float) for n in names},
            "move": lambda: np.array([np.nan if (m := move(p)) is None else m for p in papers], float),
            "new": lambda: np.array([p.new for p in papers], bool),
            "decision_from": lambda: np.array([p.decision_from for p in papers], dtype=object),
            "reviews_added": lambda: np.array([p.reviews_added for p in papers], int),
            "conference": lambda: np.array([fold(c) for c, _, _ in parts()], dtype=object),
            "year": lambda: np.array([np.nan if y is None else y for _, y, _ in parts()], float),
            "venue_words": lambda: [venue_words(p, part) for p, part in zip(papers, parts())],
            "affiliations": lambda: ["\n".join(fold(a) for a in p.affiliations if a) for p in papers],
            "citations": lambda: np.array([np.nan if p.citations is None else p.citations for p in papers], float),
            # a filter's own columns (Filter.columns): a new filter brings its column with its declaration
            **{name: (lambda make=make: make(papers)) for f in FILTERS for name, make in f.columns().items()}})
        self._fields: dict[str, list] = {}
        self._masks: dict[Filters, np.ndarray | None] = {}
        self.fetches = fetches
        # the venue labels of thousands of papers are a few: their venue facts are read once each
        labels = {(venue_parts(p), venue_words(p)) for p in {(p.venue, p.conference, p.year, p.track, p.decision):
                                                                p for p in papers}.values()}
        self.facts = IndexFacts(frozenset(self.areas), frozenset(self.venues), frozenset(self.decisions), names,
                                self.has_authors, self.has_ratings, fetches,
                                has_affiliations=any(a for p in papers for a in p.affiliations),
                                has_citations=any(p.citations is not None for p in papers), baseline=baseline,
                                declared=frozenset(name for f in FILTERS for name, has in f.declared_facts().items()
                                                   if has(papers)),
                                **venue_facts(labels))
        self._explored = explored
        if explored is None:
            self._explore(topics, map_points)

    @cached_property
    def _row(self) -> dict[str, int]:
        row_of: dict[str, int] = {}
        for row, p in enumerate(self.papers):
            for pid in [p.id, *p.aliases]:
                row_of.setdefault(pid, row)
        return row_of

    @cached_property
    def _scales(self) -> tuple[np.ndarray, list[str]]:
        """Each row's rating scale, as an index into the labels ("CoRL 2024 up to 4"; -1: no rating): the
        scale that holds the top rating any review of its venue-year gave. Venue lists do not name their
        scales, and they differ (CoRL 2024 rates 1 to 4, COLM and ICLR 1 to 10)."""
        places = [venue_parts(p)[:2] for p in self.papers]
        top: dict = {}
        for place, p in zip(places, self.papers):
            said = [*p.ratings, *([p.avg_rating] if p.avg_rating is not None else [])]
            if said:
                top[place] = max(top.get(place, 0.0), *said)
        said = {(c, y): f"{' '.join(x for x in (c, str(y or '')) if x) or 'no venue'} up to {scale_of(v):g}"
                for (c, y), v in top.items()}
        labels = sorted(set(said.values()))
        label_of = {place: labels.index(label) for place, label in said.items()}
        return np.array([label_of.get(pl, -1) for pl in places], dtype=np.int32), labels

    def mixed_scales(self, rows: Iterable[int] | np.ndarray | None = None) -> list[str]:
        """The venue-years and their rating scales among these rows (a mask, row numbers, or None: all), where
        they differ: ratings on different scales compared as numbers mislead a sort or a minimum. [] where one."""
        column, labels = self._scales
        picked = column if rows is None else column[np.asarray(list(rows) if not isinstance(rows, np.ndarray)
                                                              else rows)]
        found = [labels[i] for i in np.unique(picked) if i >= 0]
        tops = {label.rsplit(" up to ", 1)[1] for label in found}
        return found if len(tops) > 1 else []

    def scales_said(self, rows: Iterable[int] | np.ndarray | None = None) -> str:
        """`mixed_scales` in words, by scale ("up to 10: COLM 2024 ...; up to 4: CoRL 2024"); "" where one."""
        return scales_words(self.mixed_scales(rows))

    @property
    def sub_scores(self) -> dict[str, np.ndarray]:
        """Each sub-score every venue's form gives (in the order the first reviewed paper lists them): its mean by
        row, NaN where a paper has none."""
        return self.columns["sub_scores"]

    @property
    def citations(self) -> np.ndarray:
        return self.columns["citations"]

    @cached_property
    def undecided(self) -> dict[str, int]:
        """Papers with no decision yet, by primary area: a partial fetch leaves whole areas undecided."""
        out: dict[str, int] = {}
        for p in self.papers:
            if p.decision in DECISION_GROUPS["undecided"]:
                out[p.primary_area] = out.get(p.primary_area, 0) + 1
        return out

    def _explore(self, topics: Iterable[Topic], map_points: Iterable[dict]) -> None:
        self._topics = {t.id: t for t in topics}
        self._map_xy = self._map(list(map_points))
        self._explored = None

    @property
    def topics(self) -> dict[int, Topic]:
        """The topics by id ({} for an index built without them)."""
        if self._explored is not None:
            self._explore(*self._explored())
        return self._topics

    @property
    def map_xy(self) -> np.ndarray | None:
        """Each row's map coordinates (None for an index built without the map)."""
        if self._explored is not None:
            self._explore(*self._explored())
        return self._map_xy

    def _map(self, points: list[dict]) -> np.ndarray | None:
        """Map coordinates by row (None for an index built without the map); KeyError names a missing paper."""
        if not points:
            return None
        xy = np.full((len(self.papers), 2), np.nan, dtype=np.float32)
        for point in points:
            row = self._row.get(point["id"])
            if row is not None:
                xy[row] = (point["x"], point["y"])
        missing = np.flatnonzero(np.isnan(xy[:, 0]))
        if len(missing):
            raise KeyError(self.papers[int(missing[0])].id)
        return xy

    def field(self, name: str) -> list:
        """Each paper's value of a declared field (corpus.Fields), in row order: made when first asked for."""
        if name not in self._fields:
            if name not in {f.name for f in FIELDS} - set(RECORD_ONLY):
                raise KeyError(f"no paper field {name!r}")
            self._fields[name] = [getattr(p, name) for p in self.papers]
        return self._fields[name]

    def paper(self, pid: str) -> Paper | None:
        row = self._row.get(pid.strip())
        return None if row is None else self.papers[row]

    def row(self, pid: str) -> int | None:
        return self._row.get(pid.strip())

    def rows(self, ids: Iterable[str]) -> list[int]:
        """The rows of ids, sorted and once each; UnknownPaper names any id no paper answers to."""
        ids = [i.strip() for i in ids if i.strip()]
        unknown = [i for i in ids if self.row(i) is None]
        if unknown or not ids:
            raise UnknownPaper(unknown or ids)
        return sorted({self._row[i] for i in ids})

    def split_ids(self, ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """Known ids (once each, in order, as the paper's main id) and unknown ones."""
        known: dict[str, None] = {}
        unknown: list[str] = []
        for raw in ids:
            pid = raw.strip()
            if not pid:
                continue
            paper = self.paper(pid)
            if paper is None:
                unknown.append(pid)
            else:
                known.setdefault(paper.id)
        return list(known), unknown

    def mask(self, filters: Filters = NO_FILTERS) -> np.ndarray | None:
        """Rows allowed by the filters (read-only), or None when nothing is filtered. Each distinct filters'
        mask is made once: at 70,130 papers the decisions' alone took 150 ms of every query (np.isin over
        strings, benchmarks/results/page_many.md), and a page's queries mostly share their filters."""
        key = replace(filters, sort="relevance")  # the order is not the rows
        if key not in self._masks:
            if len(self._masks) >= MASKS_KEPT:
                self._masks.pop(next(iter(self._masks)))
            mask = filters.mask(self)
            if mask is not None:
                mask.flags.writeable = False
            self._masks[key] = mask
        return self._masks[key]

    def count(self, filters: Filters = NO_FILTERS) -> int:
        """How many papers the filters allow."""
        mask = self.mask(filters)
        return len(self.papers) if mask is None else int(mask.sum())

    def known(self, filters: Filters) -> Filters:
        """The filters as this index can apply them (Filters.known with what the index has)."""
        return filters.fitted(self.facts)

    def listed(self, raw: str) -> tuple[list[str], list[str]]:
        """A reading list as an address gives it (ids separated by commas or spaces): its known ids and the
        unknown ones. Control characters (a %00 in a pasted link) are part of no id."""
        return self.split_ids(strip_control(raw).replace(",", " ").split())

    def in_order(self, ids: Iterable[str], sort: str) -> list[Paper]:
        """Known papers in a sort's order (a reading list sorted as the page's sort asks)."""
        rows = [r for r in (self.row(i) for i in ids) if r is not None]
        return [self.papers[r] for r in ordered(rows, self.papers, sort)]

    def browse(self, filters: Filters = NO_FILTERS) -> list[Paper]:
        """Every paper the filters allow, in the filters' order (the records' order for relevance): a list
        without a query, as the changes since the previous fetch are browsed."""
        mask = self.mask(filters)
        rows = range(len(self.papers)) if mask is None else np.flatnonzero(mask)
        return [self.papers[r] for r in ordered(rows, self.papers, filters.sort)]

    def topic_label(self, paper: Paper) -> str:
        t = self.topics.get(paper.topic) if paper.topic is not None else None
        return t.label if t else ""

    def topic_labels(self, papers: Iterable[Paper]) -> dict[str, str]:
        """Paper id -> its topic's label (for exports)."""
        return {p.id: self.topic_label(p) for p in papers}

    def topic_papers(self, tid: int, filters: Filters = NO_FILTERS) -> list[Paper]:
        """A topic's papers under the filters, closest to its centre first (or by the filters' sort)."""
        mask = self.mask(filters)
        rows = [self._row[pid] for pid in self.topics[tid].papers]
        return [self.papers[r] for r in ordered((r for r in rows if mask is None or mask[r]), self.papers,
                                                filters.sort)]
