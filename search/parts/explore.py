"""The topics and the map as a part of the index folder: computed at build time (topics.py, papermap.py), or a
few new papers placed onto the previous build's, written, and loaded for the page. When nothing they depend on
changed (`key`), the build takes the previous build's files whole and `adopt` gives each paper its topic. `PART`
declares it (parts.part.Part)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import index as ix
from .. import papermap
from .. import topics as tp
from ..corpus import Paper
from ..manifest import ExploreEntry
from .part import Context, Part, announce

FILES = (tp.TOPICS, papermap.MAP)
# Topics and map are computed again when more than this share of the papers is new, edited or gone since
# they last were; below it each such paper is placed among its nearest neighbours (a second, where
# computing them again takes about a minute at 19,630 papers), and the manifest's explore entry counts them (`placed`).
PLACE_UP_TO = 0.02
NEIGHBOURS = 10


@dataclass
class Explore:
    """The part as the build holds it before writing: topics and map points."""
    entry: ExploreEntry
    topics: list[tp.Topic]
    xy: np.ndarray


def key(papers: list[Paper], corpus_fingerprint: str, vectors_key: str) -> str:
    """Topics and map depend on the corpus (keywords too, for labels), the vectors and the methods only."""
    keywords = sorted(f"{p.id}\t{'; '.join(p.keywords)}" for p in papers if p.keywords)
    text = "\n".join([corpus_fingerprint, vectors_key, tp.METHOD, papermap.METHOD, *keywords])
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Changes:
    """How the papers differ from those an earlier build's topics and map were computed from."""
    kept: dict[str, tuple[float, float, int | None]]  # id -> x, y, topic of each paper unchanged since
    topics: list[tp.Topic]
    placed: int           # papers placed (or removed) since the topics and map were computed, these included


def changes(previous: Path | None, papers: list[Paper], vectors_key: str) -> Changes | None:
    """What placing `papers` onto the previous build's topics and map would keep, when few enough of them
    are new, edited or gone (PLACE_UP_TO, counted since the map was last computed); None otherwise."""
    if previous is None:
        return None
    try:
        manifest = ix.read_manifest(previous)
        entry = manifest.explore
        if not (entry and entry.vectors_key == vectors_key and entry.topics_method == tp.METHOD
                and entry.map_method == papermap.METHOD):
            return None
        ix.verify_files(previous, {n: m for n, m in manifest.files.items() if n in FILES or n == ix.PAPERS})
        before = {}
        with open(previous / ix.PAPERS, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                before[row["id"]] = row["text"]
        points = papermap.read_map(previous / papermap.MAP)
        topics = tp.read_topics(previous / tp.TOPICS)
    except (ix.IndexLoadError, OSError, ValueError, KeyError):
        return None
    now = {p.id: p.text for p in papers}
    kept = {r["id"]: (r["x"], r["y"], r["topic"]) for r in points if now.get(r["id"], "\x00") == before.get(r["id"])}
    placed = entry.placed + (len(papers) - len(kept)) + (len(points) - len(kept))
    return Changes(kept, topics, placed) if placed <= PLACE_UP_TO * len(papers) and kept else None


def place(papers: list[Paper], vectors: np.ndarray, found: Changes) -> tuple[list[tp.Topic], np.ndarray]:
    """The previous topics and map with each new or edited paper placed among its nearest kept papers
    (by cosine): at the median of their points, in the topic most of them are in."""
    kept_rows = [row for row, p in enumerate(papers) if p.id in found.kept]
    new_rows = [row for row, p in enumerate(papers) if p.id not in found.kept]
    xy = np.zeros((len(papers), 2), dtype=np.float64)
    topic_of: dict[str, int | None] = {}
    for row in kept_rows:
        x, y, topic_of[papers[row].id] = found.kept[papers[row].id]
        xy[row] = (x, y)
    if new_rows:
        near = np.argsort(-(vectors[new_rows] @ vectors[kept_rows].T), axis=1)[:, :NEIGHBOURS]
        for row, neighbours in zip(new_rows, near):
            rows = [kept_rows[i] for i in neighbours]
            xy[row] = np.median(xy[rows], axis=0)
            votes = [topic_of[papers[r].id] for r in rows if topic_of[papers[r].id] is not None]
            topic_of[papers[row].id] = max(set(votes), key=votes.count) if votes else None
    members: dict[int, list[str]] = {t.id: [] for t in found.topics}
    for t in found.topics:  # the kept papers in their order (closest to the centre first), the placed after
        members[t.id] = [i for i in t.papers if i in found.kept]
    for row in new_rows:
        if topic_of[papers[row].id] is not None:
            members[topic_of[papers[row].id]].append(papers[row].id)
    topics = [replace(t, papers=members[t.id], size=len(members[t.id])) for t in found.topics]
    return topics, xy


def compute(papers: list[Paper], vectors: np.ndarray, wanted: str,
            announce: Callable[[str], None] = lambda stage: None, vectors_key: str = "",
            found: Changes | None = None) -> Explore:
    """Topics and map of the papers: the new and edited papers placed onto the previous build's when they are
    few (`found`: what `changes` gave), else computed; sets each paper's topic."""
    placed = 0
    if found is not None:
        announce("placing new papers on the map")
        topics, xy = place(papers, vectors, found)
        placed = found.placed
    else:
        announce("topics")
        topics = tp.compute_topics(papers, vectors)
        announce("map")
        xy = papermap.coordinates(vectors)
    _assign(papers, topics)
    entry = ExploreEntry(wanted, len(topics), tp.METHOD, papermap.METHOD, False, vectors_key, placed)
    return Explore(entry, topics, xy)


def adopt(papers: list[Paper], previous: Path) -> None:
    """The previous build's topics and map taken whole (the same key): each paper's topic, from its topics."""
    _assign(papers, tp.read_topics(previous / tp.TOPICS))


def carried(entry: ExploreEntry) -> ExploreEntry:
    """The previous build's entry, as the entry of a build that took its topics and map whole."""
    return replace(entry, reused=True)


def _assign(papers: list[Paper], topics: list[tp.Topic]) -> None:
    topic_of = tp.assignments(topics)
    for p in papers:
        p.topic = topic_of.get(p.id)


def write(build_dir: Path, part: Explore, papers: list[Paper]) -> ExploreEntry:
    tp.write_topics(build_dir / tp.TOPICS, part.topics)
    papermap.write_map(build_dir / papermap.MAP, [p.id for p in papers], part.xy, tp.assignments(part.topics))
    return part.entry


def load(path: Path, entry: ExploreEntry | None) -> tuple[list[tp.Topic], list[dict]]:
    """The topics and map points of the index at `path` (none when it was built without them)."""
    if entry is None:
        return [], []
    return tp.read_topics(path / tp.TOPICS), papermap.read_map(path / papermap.MAP)


# ---------------------------------------------------------------- the part, as the build and the engine see it

@dataclass
class State:
    """What the topics and map stage holds in one build."""
    # the previous build's topics and map to place a few new papers onto (`changes`), read once a build: the
    # stage's check for work reads it (it tells a second's placing from a minute's computing) and compute uses it
    found: Changes | None = None
    looked: bool = False
    computed: Explore | None = None


def _found(ctx: Context, state: State) -> Changes | None:
    if not state.looked:
        state.found, state.looked = changes(ctx.previous, ctx.papers, ctx.vectors_key), True
    return state.found


def _key(ctx: Context, state: State) -> list[str]:
    return [key(ctx.papers, ctx.corpus_fingerprint, ctx.vectors_key)]


def _compute(ctx: Context, state: State) -> None:
    state.computed = compute(ctx.papers, ctx.vectors, _key(ctx, state)[0], lambda stage: announce(ctx.progress, stage),
                             ctx.vectors_key, _found(ctx, state))


def _has_work(ctx: Context, state: State) -> bool:
    """A few new papers placed onto the previous build's topics and map: a second; computed again otherwise.
    (Taken whole when nothing they depend on changed: build.reusable.)"""
    return _found(ctx, state) is None


PART = Part(
    "topics and map", enabled=lambda o, r: o.explore, costs=lambda o: {"topics": 4.0, "map": 5.0},
    compute=_compute, write=lambda ctx, state, build_dir: write(build_dir, state.computed, ctx.papers),
    state=State, has_work=_has_work, files=FILES, key=_key, rows=False,
    adopt=lambda ctx, state: adopt(ctx.papers, ctx.previous), carry=lambda ctx, entry: carried(entry),
    entry="explore", load=lambda data, entry: load(data.path, entry),
    report=lambda state, reused: {"explore_reused": reused})
