"""Saved searches: a query with its ranking and filters, kept in a small JSON file beside the index (so a
restart keeps them; each one's own address is its shareable link), and what is new for each since the
previous fetch: papers that newly match it, and matching papers whose rating or decision moved."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlencode

from .engine import MODES, Engine, Hit
from .filters import Filters, address_key
from .parts.history import moved

# how deep a saved search looks for news: a page of results and more, above the relevance floor the engine
# applies anyway (a new paper at rank 40 of a precise query is still a match worth telling)
DEPTH = 50
MAX_SAVED = 100
SAVED_MODES = (*MODES, "reviews")   # what a saved search's `mode` may hold: the engine's modes, never their labels


class SavedError(ValueError):
    """The saved searches' file cannot be read or a search cannot be saved; the message says why."""


@dataclass(frozen=True)
class Saved:
    query: str
    mode: str
    address: dict = field(default_factory=dict)   # the filters as a page's address holds them (Filters.to_address)
    saved_at: str = ""
    # why the engine cannot run this entry ("" when it can): such an entry is named and skipped, and kept in the
    # file as it was (`raw`) until it is removed, so one bad entry never costs the others or itself
    problem: str = ""
    raw: object = field(default=None, compare=False, repr=False)

    def to_json(self) -> object:
        """The entry as the file holds it: a damaged one exactly as it was read."""
        if self.problem:
            return self.raw
        return {"query": self.query, "mode": self.mode, "address": self.address, "saved_at": self.saved_at}

    def skipped(self) -> str:
        """A damaged entry in one line: "saved search “x” cannot be run (unknown mode 'y'): skipped"."""
        return f"saved search {self.words_of_search() if self.query else '(no query)'} cannot be run " \
               f"({self.problem}): skipped"

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
        if self.problem or other.problem:
            return self.to_json() == other.to_json()
        return (self.query, self.mode, self.address) == (other.query, other.mode, other.address)


def saved_file(index: Path) -> Path:
    """Beside the index, not in it: a rebuild publishes a new folder, and the searches outlive it."""
    return index.parent / f".{index.name}.saved.json"


def entry(raw: object) -> Saved:
    """One entry of the file as a Saved: runnable, or with its `problem` named (a mode that is no mode, a
    filter no index knows, a value that does not parse, an entry that is no search at all)."""
    if not isinstance(raw, dict):
        return Saved("", "", problem=f"not a search: {json.dumps(raw, ensure_ascii=False)[:60]}", raw=raw)
    query = raw.get("query")
    query = " ".join(query.split()) if isinstance(query, str) else ""
    mode, address = raw.get("mode"), raw.get("address", {})
    if not isinstance(address, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                for v in address.values()):
        return Saved(query, str(mode), {}, problem="its filters are not a list of values per key", raw=raw)
    saved = Saved(query, str(mode), {str(k): list(v) for k, v in address.items()}, str(raw.get("saved_at", "")),
                  raw=raw)
    if not query:
        problem = "it has no query"
    elif mode not in SAVED_MODES:
        problem = f"unknown mode {str(mode)[:60]!r}; one of {', '.join(SAVED_MODES)}"
    else:
        problem = "; ".join([f"unknown filter {k[:40]!r}" for k in address if not address_key(k)] + _unread(address))
    return replace(saved, problem=problem) if problem else saved


def _unread(address: dict) -> list[str]:
    """What of a saved address the filters cannot read, in words."""
    try:
        return Filters.from_address(address)[1]
    except ValueError as e:  # a value every index refuses (filters.FilterError)
        return [str(e)]


def load(path: Path) -> list[Saved]:
    """The saved searches ([] when there is no file), damaged entries among them with their `problem`;
    SavedError names a file that is not a list of searches at all, which is left as is."""
    if not path.is_file():
        return []
    try:
        items = json.loads(path.read_text(encoding="utf-8"))["searches"]
        if not isinstance(items, list):
            raise TypeError("'searches' is not a list")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise SavedError(f"{path}: the saved searches cannot be read ({e.__class__.__name__}: {e}); fix or "
                         "remove the file") from None
    return [entry(item) for item in items]


def _write(path: Path, searches: list[Saved]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"searches": [s.to_json() for s in searches]}, indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)  # whole or not at all: a crash mid-write keeps the previous list


def add(path: Path, query: str, mode: str, filters: Filters) -> list[Saved]:
    """Save a search (once: saving it again keeps the first); SavedError for an empty query or a full list."""
    query = " ".join(query.split())
    if not query:
        raise SavedError("a saved search needs a query")
    if mode not in SAVED_MODES:  # a label in place of the mode would break every later listing
        raise SavedError(f"unknown mode {mode[:60]!r}; one of {', '.join(SAVED_MODES)}")
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
    problem: str = ""       # why it was skipped: the entry or this index cannot run it ("" when it ran)

    def words(self) -> str:
        """"“kv cache compression”: 3 new papers match; 2 moved"."""
        if self.problem:
            return replace(self.saved, problem=self.problem).skipped()
        n, m = len(self.new), len(self.moved)
        if not (n or m):
            return f"{self.saved.words_of_search()}: nothing new"
        new = f"{n} new paper{'s' if n != 1 else ''} match{'es' if n == 1 else ''}" if n else "no new paper"
        return f"{self.saved.words_of_search()}: {new}" + (f"; {m} moved" if m else "")

    def to_dict(self) -> dict:
        if self.problem:
            return {"query": self.saved.query, "entry": self.saved.to_json(), "skipped": self.problem}
        return {"query": self.saved.query, "mode": self.saved.mode, "filters": self.saved.address,
                "link": self.saved.link(), "matched": self.matched,
                "new": [h.to_dict() for h in self.new], "moved": [h.to_dict() for h in self.moved],
                **({"not_applied": self.dropped} if self.dropped else {})}


def changed(hit: Hit) -> bool:
    p = hit.paper
    return moved(p) or bool(p.decision_from and p.decision_from != p.decision)


def news(engine: Engine, saved: Saved, depth: int = DEPTH) -> News:
    """What is new for a saved search in this index since its previous fetch; a search the entry or this index
    cannot run comes back with its `problem` (and no papers), never as an exception."""
    if saved.problem:
        return News(saved, [], [], 0, problem=saved.problem)
    try:
        filters = engine.catalog.known(saved.filters)
        if saved.mode == "reviews" and engine.reviews and engine.reviews.searchable:
            result = engine.search_reviews(saved.query, depth, filters)
        else:
            result = engine.search(saved.query, depth, saved.mode if saved.mode != "reviews" else "hybrid", filters)
    except ValueError as e:  # a sort or filter this index cannot give: named, the other searches still listed
        return News(saved, [], [], 0, problem=str(e))
    return News(saved, [h for h in result.hits if h.paper.new],
                [h for h in result.hits if not h.paper.new and changed(h)], len(result.hits), list(filters.unknown))
