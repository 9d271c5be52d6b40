"""Saved searches: a query with its ranking and filters, kept in a small JSON file beside the index (so a
restart keeps them; each one's own address is its shareable link), and what is new for each since the
previous fetch: papers that newly match it, and matching papers whose rating or decision moved."""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from .engine import Engine, Hit
from .filters import Filters
from .parts.history import moved

# how deep a saved search looks for news: a page of results and more, above the relevance floor the engine
# applies anyway (a new paper at rank 40 of a precise query is still a match worth telling)
DEPTH = 50
MAX_SAVED = 100


class SavedError(ValueError):
    """The saved searches' file cannot be read or a search cannot be saved; the message says why."""


@dataclass(frozen=True)
class Saved:
    query: str
    mode: str
    address: dict = field(default_factory=dict)   # the filters as a page's address holds them (Filters.to_address)
    saved_at: str = ""

    @property
    def filters(self) -> Filters:
        return Filters.from_address(self.address)[0]

    def link(self) -> str:
        """The page's address of this search ("?q=...&mode=...&decision=..."): what a shared link keeps."""
        return "?" + urlencode({"q": self.query, "mode": self.mode, **self.address}, doseq=True)

    def words_of_search(self) -> str:
        """"“kv cache compression” (decision all, sort improved)": the query and its filters, to tell two apart."""
        given = "; ".join(f"{k} {', '.join(v)}" for k, v in self.address.items())
        return f"“{self.query}”" + (f" ({given})" if given else "")

    def same(self, other: Saved) -> bool:
        return (self.query, self.mode, self.address) == (other.query, other.mode, other.address)


def saved_file(index: Path) -> Path:
    """Beside the index, not in it: a rebuild publishes a new folder, and the searches outlive it."""
    return index.parent / f".{index.name}.saved.json"


def load(path: Path) -> list[Saved]:
    """The saved searches ([] when there is no file); SavedError names a damaged file, which is left as is."""
    if not path.is_file():
        return []
    try:
        items = json.loads(path.read_text(encoding="utf-8"))["searches"]
        return [Saved(str(s["query"]), str(s["mode"]), {str(k): [str(x) for x in v] for k, v in s["address"].items()},
                      str(s.get("saved_at", ""))) for s in items]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise SavedError(f"{path}: the saved searches cannot be read ({e.__class__.__name__}: {e}); fix or "
                         "remove the file") from None


def _write(path: Path, searches: list[Saved]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"searches": [asdict(s) for s in searches]}, indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)  # whole or not at all: a crash mid-write keeps the previous list


def add(path: Path, query: str, mode: str, filters: Filters) -> list[Saved]:
    """Save a search (once: saving it again keeps the first); SavedError for an empty query or a full list."""
    query = " ".join(query.split())
    if not query:
        raise SavedError("a saved search needs a query")
    searches = load(path)
    new = Saved(query, mode, filters.to_address(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if any(s.same(new) for s in searches):
        return searches
    if len(searches) >= MAX_SAVED:
        raise SavedError(f"{path} holds {MAX_SAVED} saved searches already; remove one first")
    searches.append(new)
    _write(path, searches)
    return searches


def remove(path: Path, query: str) -> list[Saved]:
    """Remove the saved searches of this query (any filters); SavedError where none is saved."""
    query = " ".join(query.split())
    searches = load(path)
    kept = [s for s in searches if s.query != query]
    if len(kept) == len(searches):
        raise SavedError(f"no saved search {query!r}")
    _write(path, kept)
    return kept


def forget(path: Path, saved: Saved) -> list[Saved]:
    """Remove this one saved search (its query and filters); the others stay."""
    searches = load(path)
    kept = [s for s in searches if not s.same(saved)]
    _write(path, kept)
    return kept


@dataclass
class News:
    saved: Saved
    new: list[Hit]          # papers new since the previous fetch that match
    moved: list[Hit]        # matching papers whose mean rating or decision moved since the previous fetch
    matched: int            # papers the search returned (up to DEPTH)
    dropped: list[str] = field(default_factory=list)   # filters this index cannot apply, in words

    def words(self) -> str:
        """"“kv cache compression”: 3 new papers match; 2 moved"."""
        n, m = len(self.new), len(self.moved)
        if not (n or m):
            return f"{self.saved.words_of_search()}: nothing new"
        new = f"{n} new paper{'s' if n != 1 else ''} match{'es' if n == 1 else ''}" if n else "no new paper"
        return f"{self.saved.words_of_search()}: {new}" + (f"; {m} moved" if m else "")

    def to_dict(self) -> dict:
        return {"query": self.saved.query, "mode": self.saved.mode, "filters": self.saved.address,
                "link": self.saved.link(), "matched": self.matched,
                "new": [h.to_dict() for h in self.new], "moved": [h.to_dict() for h in self.moved],
                **({"not_applied": self.dropped} if self.dropped else {})}


def changed(hit: Hit) -> bool:
    p = hit.paper
    return moved(p) or bool(p.decision_from and p.decision_from != p.decision)


def news(engine: Engine, saved: Saved, depth: int = DEPTH) -> News:
    """What is new for a saved search in this index since its previous fetch."""
    filters = engine.catalog.known(saved.filters)
    if saved.mode == "reviews" and engine.reviews and engine.reviews.searchable:
        result = engine.search_reviews(saved.query, depth, filters)
    else:
        result = engine.search(saved.query, depth, saved.mode if saved.mode != "reviews" else "hybrid", filters)
    return News(saved, [h for h in result.hits if h.paper.new],
                [h for h in result.hits if not h.paper.new and changed(h)], len(result.hits), list(filters.unknown))
