"""What narrows and orders a list of papers: one typed object. The page builds it from its address, the
CLI from its flags; it is checked in one place and handed to every Engine and Catalog method. A new
filter is a field here, a line in `Catalog.mask`, a widget and a flag."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

SORTS = ("relevance", "rating", "oral")  # relevance; mean review rating; orals first, then rating


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
    sort: str = "relevance"           # one of SORTS
    unknown: tuple[str, ...] = field(default=(), compare=False)  # what `known` dropped, in words

    def __post_init__(self) -> None:
        for name in ("areas", "venues", "authors"):
            object.__setattr__(self, name, _texts(getattr(self, name)))
        if self.sort not in SORTS:
            raise FilterError(f"unknown sort {self.sort!r}; choose one of {', '.join(SORTS)}", "sort")
        if self.min_rating is not None and not 0 <= float(self.min_rating) <= 10:
            raise FilterError(f"a minimum rating is from 0 to 10, not {self.min_rating:g}", "min_rating")

    @property
    def narrows(self) -> bool:
        """Whether any filter (not the sort) leaves papers out."""
        return bool(self.areas or self.venues or self.authors or self.min_rating is not None)

    def known(self, areas: Iterable[str], venues: Iterable[str]) -> Filters:
        """These filters without the areas and venues an index lacks, which `unknown` names."""
        areas, venues = set(areas), set(venues)
        unknown = [f"area {a!r}" for a in self.areas if a not in areas]
        unknown += [f"venue {v!r}" for v in self.venues if v not in venues]
        return replace(self, areas=tuple(a for a in self.areas if a in areas),
                       venues=tuple(v for v in self.venues if v in venues), unknown=tuple(unknown))

    @classmethod
    def from_address(cls, params: Mapping[str, list[str]]) -> tuple[Filters, list[str]]:
        """The filters in a page's address (each key's values), and what did not parse, in words; a value
        that does not parse is left out and the default used."""
        ignored: list[str] = []

        def one(name: str) -> str:
            values = params.get(name) or [""]
            return values[-1].strip()

        sort = one("sort") or "relevance"
        if sort not in SORTS:
            ignored.append(f"sort={sort[:40]} (use {', '.join(SORTS)})")
            sort = "relevance"
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
                   authors=(author,) if author else (), min_rating=min_rating, sort=sort), ignored


NO_FILTERS = Filters()
