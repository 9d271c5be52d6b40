"""The record's history: what each fetch said about each paper, kept across re-fetches, and what changed.

A part of the index of two files. `fetches.json` lists the fetches whose records changed something (the date,
the inputs' digest, the papers tracked); `history.jsonl` holds, per paper a fetch ever brought (a decision,
a rating or reviews), its states: the decision, the mean rating and each review's numbers, one state per
fetch that changed them. The build reads the previous build's files, adds the new fetch's states and marks
each paper with where it stood before (`mark`: the rating, decision and reviews at the previous fetch), so
sorts, filters and cards read a paper's move from papers.jsonl; the history itself is read only for a
paper's page and `changes`.

With one fetch only, the reviews' own versions stand in for a previous fetch: OpenReview lists a review
edited after it was posted once per version (openreview.records.review keeps the earlier ones), so a paper's rating
"as first posted" is known, and the moves made during the discussion show from the first fetch on.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..corpus import JSONL_SUFFIXES, Paper
from ..manifest import HistoryEntry
from .reviews import scores_of

FETCHES = "fetches.json"
HISTORY = "history.jsonl"
FILES = (FETCHES, HISTORY)
RATING = "rating"
FIRST_POSTED = "as first posted"   # the baseline of an index with one fetch
# a mean rating that moved by less is rounding, not a move (the records give means to 4 decimals)
EPSILON = 1e-6


class HistoryError(ValueError):
    """The history files of an index cannot be read; the message says which and why."""


@dataclass
class History:
    fetches: list[dict] = field(default_factory=list)      # {"at", "inputs_digest", "papers"}, oldest first
    papers: dict[str, dict] = field(default_factory=dict)  # id -> {"id", "title", "states": [...]}

    @property
    def latest(self) -> int:
        return len(self.fetches) - 1


def state(p: Paper) -> dict | None:
    """What a fetch says of a paper: its decision, mean rating and each review's numbers (None for a paper
    no fetch describes, a seed line)."""
    if not (p.decision or p.avg_rating is not None or p.reviews):
        return None
    reviews = {str(r.get("reviewer") or f"review {n + 1}"): scores_of(r) for n, r in enumerate(p.reviews)}
    return {"decision": p.decision, "mean": p.avg_rating, "reviews": reviews}


def _same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "fetch"} == {k: v for k, v in b.items() if k != "fetch"}


def fetched_at(files: list[Path]) -> str:
    """When the inputs were fetched: the newest file's modification time (a fetch publishes its file by
    one rename, so that is when it landed), in UTC."""
    records = [f for f in files if f.suffix.lower() in JSONL_SUFFIXES] or files  # a fetch's, not a seed list's
    newest = max((f.stat().st_mtime for f in records), default=0.0)
    return datetime.fromtimestamp(newest, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def load(path: Path | None) -> History:
    """The history of the index folder at `path` (empty where it has none: built before histories were kept,
    or never); HistoryError where its files are damaged."""
    if path is None or not (path / FETCHES).is_file():
        return History()
    fetches = load_fetches(path)
    try:
        papers = {}
        with open(path / HISTORY, encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    entry = json.loads(line)
                    papers[entry["id"]] = entry
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise HistoryError(f"{path / HISTORY} cannot be read ({e})") from None
    return History(fetches, papers)


def update(previous: History, papers: list[Paper], at: str, digest: str) -> History:
    """The previous history with this fetch's states added; unchanged (no new fetch) when no paper's state
    changed, appeared or went away, so a rebuild of the same records keeps "the previous fetch" as it was."""
    now = {p.id: s for p in papers if (s := state(p)) is not None}
    titles = {p.id: p.title for p in papers}
    added: dict[str, dict] = {}
    for pid, s in now.items():
        entry = previous.papers.get(pid)
        if entry is None or entry["states"][-1].get("absent") or not _same(entry["states"][-1], s):
            added[pid] = s
    gone = [pid for pid, e in previous.papers.items() if pid not in now and not e["states"][-1].get("absent")]
    if previous.fetches and not added and not gone:
        return previous
    if not now and not previous.fetches:
        return History()
    fetch = len(previous.fetches)
    out = History([*previous.fetches, {"at": at, "inputs_digest": digest, "papers": len(now)}],
                  {pid: {**e, "states": list(e["states"])} for pid, e in previous.papers.items()})
    for pid, s in added.items():
        entry = out.papers.setdefault(pid, {"id": pid, "title": titles[pid], "states": []})
        entry["title"] = titles[pid]
        entry["states"].append({"fetch": fetch, **s})
    for pid in gone:
        out.papers[pid]["states"].append({"fetch": fetch, "absent": True})
    return out


def at_fetch(entry: dict | None, fetch: int) -> dict | None:
    """A paper's state as fetch number `fetch` saw it (None: not there yet, or gone)."""
    found = None
    for s in (entry or {}).get("states", ()):
        if s["fetch"] <= fetch:
            found = s
    return None if found is None or found.get("absent") else found


def first_posted_mean(p: Paper) -> float | None:
    """The mean rating of the paper's reviews as each was first posted (its earliest version)."""
    ratings = []
    for r in p.reviews:
        first = (r.get("versions") or [r])[0]
        value = first.get(RATING, r.get(RATING))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            ratings.append(float(value))
    return round(sum(ratings) / len(ratings), 4) if ratings else None


def mark(papers: list[Paper], history: History) -> None:
    """Set where each paper stood before (Paper.rating_from, decision_from, reviews_added, new): at the
    previous fetch where there is one; with one fetch, its rating as its reviews were first posted."""
    for p in papers:
        p.rating_from, p.decision_from, p.reviews_added, p.new = None, "", 0, False
        entry = history.papers.get(p.id)
        if entry is None:
            continue
        if history.latest >= 1:
            before, now = at_fetch(entry, history.latest - 1), at_fetch(entry, history.latest)
            if before is None:
                p.new = now is not None
                continue
            p.rating_from, p.decision_from = before["mean"], before["decision"]
            p.reviews_added = len(set((now or before)["reviews"]) - set(before["reviews"]))
        else:
            p.rating_from = first_posted_mean(p) if any(r.get("versions") for r in p.reviews) else p.avg_rating


def move(p: Paper) -> float | None:
    """How far the mean rating moved since the baseline (None where either is unknown)."""
    if p.avg_rating is None or p.rating_from is None:
        return None
    return round(p.avg_rating - p.rating_from, 4)


def moved(p: Paper) -> bool:
    m = move(p)
    return m is not None and abs(m) > EPSILON


def write(build_dir: Path, history: History) -> HistoryEntry | None:
    """The history's files in a build; its manifest entry (None where no fetch described any paper)."""
    if not history.fetches:
        return None
    (build_dir / FETCHES).write_text(json.dumps({"fetches": history.fetches}, indent=1) + "\n", encoding="utf-8")
    with open(build_dir / HISTORY, "w", encoding="utf-8") as f:
        for entry in history.papers.values():
            f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
    return HistoryEntry(len(history.fetches), len(history.papers), history.fetches[-1]["at"],
                        history.fetches[-2]["at"] if len(history.fetches) > 1 else FIRST_POSTED)


# ---------------------------------------------------------------- what changed

@dataclass
class Changes:
    """What changed between two fetches (or, with one fetch, since the reviews were first posted)."""
    since: str                  # the earlier fetch's date, or FIRST_POSTED
    until: str                  # the later fetch's date
    fetches: int
    new: list[dict] = field(default_factory=list)          # {"id", "title"}
    new_reviews: list[dict] = field(default_factory=list)  # {"id", "title", "reviews": added, "from", "to"}
    moved: list[dict] = field(default_factory=list)        # {"id", "title", "from", "to", "move"}, largest first
    decisions: list[dict] = field(default_factory=list)    # {"id", "title", "from", "to"}
    withdrawn: list[dict] = field(default_factory=list)    # {"id", "title", "from"}
    removed: list[dict] = field(default_factory=list)      # {"id", "title"}: no longer listed

    @property
    def first_posted(self) -> bool:
        return self.since == FIRST_POSTED

    @property
    def up(self) -> list[dict]:
        return [m for m in self.moved if m["move"] > 0]

    @property
    def down(self) -> list[dict]:
        return sorted((m for m in self.moved if m["move"] < 0), key=lambda m: m["move"])

    def to_dict(self) -> dict:
        return {"since": self.since, "until": self.until, "fetches": self.fetches, "new": self.new,
                "new_reviews": self.new_reviews, "moved": self.moved, "decisions": self.decisions,
                "withdrawn": self.withdrawn, "removed": self.removed}

    @property
    def empty(self) -> bool:
        return not (self.new or self.new_reviews or self.moved or self.decisions or self.withdrawn or self.removed)


def since_fetch(history: History, since: str | None) -> int:
    """The fetch to compare the latest with: the last one on or before `since` (an ISO date or time), or
    the one before the latest; HistoryError where `since` precedes every fetch or is not a date."""
    if since is None:
        return history.latest - 1
    try:
        datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        raise HistoryError(f"--since {since!r} is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)") from None
    before = [n for n, f in enumerate(history.fetches) if f["at"][:len(since)] <= since]
    if not before:
        raise HistoryError(f"no fetch on or before {since}: the first is of {history.fetches[0]['at']}")
    return min(before[-1], history.latest - 1)


def changes(history: History, papers: list[Paper], since: str | None = None) -> Changes:
    """What changed from fetch `since` (since_fetch) to the latest; with one fetch, the moves of the
    reviews edited after they were first posted."""
    if not history.fetches:
        return Changes("", "", 0)
    until = history.fetches[-1]["at"]
    if history.latest == 0:  # the moves `mark` found since the reviews were first posted
        out = Changes(FIRST_POSTED, until, 1)
        out.moved = [{"id": p.id, "title": p.title, "from": p.rating_from, "to": p.avg_rating, "move": move(p)}
                     for p in papers if moved(p)]
        out.moved.sort(key=lambda m: -m["move"])
        return out
    start = since_fetch(history, since)
    out = Changes(history.fetches[start]["at"], until, len(history.fetches))
    for pid, entry in history.papers.items():
        a, b = at_fetch(entry, start), at_fetch(entry, history.latest)
        item = {"id": pid, "title": entry.get("title", "")}
        if b is None:
            if a is not None:
                out.removed.append(item)
            continue
        if a is None:
            out.new.append(item)
            continue
        added = len(set(b["reviews"]) - set(a["reviews"]))
        if added:
            out.new_reviews.append({**item, "reviews": added, "from": len(a["reviews"]), "to": len(b["reviews"])})
        if a["mean"] is not None and b["mean"] is not None and abs(b["mean"] - a["mean"]) > EPSILON:
            out.moved.append({**item, "from": a["mean"], "to": b["mean"], "move": round(b["mean"] - a["mean"], 4)})
        if a["decision"] != b["decision"]:
            if b["decision"] == "Withdrawn":
                out.withdrawn.append({**item, "from": a["decision"]})
            else:
                out.decisions.append({**item, "from": a["decision"], "to": b["decision"]})
    out.moved.sort(key=lambda m: -m["move"])
    return out


# ---------------------------------------------------------------- one paper's history

@dataclass(frozen=True)
class Point:
    at: str                     # ISO date or time
    ratings: dict               # reviewer -> rating at that time
    mean: float | None
    source: str                 # "posted", "edited" or "fetch"


def timeline(entry: dict | None, fetches: list[dict], reviews: list[dict]) -> list[Point]:
    """A paper's ratings over time: each review as posted and as edited (its versions), and what each fetch
    said; a reviewer's rating at a time is the last one known then."""
    events: list[tuple[str, str, float, str]] = []   # (at, reviewer, rating, source)
    for n, r in enumerate(reviews):
        who = str(r.get("reviewer") or f"review {n + 1}")
        versions = [*(r.get("versions") or ()), r]
        for k, v in enumerate(versions):
            value = v.get(RATING)
            at = r.get("date", "") if k == 0 else v.get("modified", "")  # each later version from its edit
            if at and isinstance(value, (int, float)) and not isinstance(value, bool):
                events.append((at, who, float(value), "posted" if k == 0 else "edited"))
    for s in (entry or {}).get("states", ()):
        if s.get("absent") or s["fetch"] >= len(fetches):
            continue
        for who, numbers in s["reviews"].items():
            if isinstance(numbers.get(RATING), (int, float)):
                events.append((fetches[s["fetch"]]["at"], who, float(numbers[RATING]), "fetch"))
    events.sort(key=lambda e: e[0])
    points: list[Point] = []
    current: dict[str, float] = {}
    for at, who, rating, source in events:
        current[who] = rating
        point = Point(at, dict(current), round(sum(current.values()) / len(current), 4), source)
        if points and points[-1].at == at:
            points[-1] = point
        elif not points or points[-1].ratings != point.ratings or source == "fetch":
            points.append(point)
    return points


def load_fetches(path: Path) -> list[dict]:
    """The fetches of an index's history ([] without one)."""
    if not (path / FETCHES).is_file():
        return []
    try:
        fetches = json.loads((path / FETCHES).read_text(encoding="utf-8"))["fetches"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise HistoryError(f"{path / FETCHES} cannot be read ({e})") from None
    if not isinstance(fetches, list):
        raise HistoryError(f"{path / FETCHES}: 'fetches' is not a list")
    return fetches


def paper_entry(path: Path, pid: str) -> dict | None:
    """One paper's line of history.jsonl (None where it has none); read on demand, not at load."""
    if not (path / HISTORY).is_file():
        return None
    needle = json.dumps(pid)
    with open(path / HISTORY, encoding="utf-8") as lines:
        for line in lines:
            if needle in line[:len(needle) + 10]:
                entry = json.loads(line)
                if entry.get("id") == pid:
                    return entry
    return None
