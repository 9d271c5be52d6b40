"""The topics and the map as a part of the index folder: computed at build time (topics.py, layout.py),
reused from the previous build when nothing they depend on changed, written, and loaded for the page."""
from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import index as ix
from . import layout
from . import topics as tp
from .corpus import Paper
from .manifest import ExploreEntry

FILES = (tp.TOPICS, layout.MAP)


@dataclass
class Explore:
    """The part as the build holds it before writing: topics, and map points unless reused."""
    entry: ExploreEntry
    topics: list[tp.Topic]
    xy: np.ndarray | None          # None when the files are copied from `reused_from`
    reused_from: Path | None = None


def key(papers: list[Paper], corpus_fingerprint: str, vectors_key: str) -> str:
    """Topics and map depend on the corpus (keywords too, for labels), the vectors and the methods only."""
    keywords = sorted(f"{p.id}\t{'; '.join(p.keywords)}" for p in papers if p.keywords)
    text = "\n".join([corpus_fingerprint, vectors_key, tp.METHOD, layout.METHOD, *keywords])
    return hashlib.sha256(text.encode()).hexdigest()


def reusable(previous: Path | None, wanted: str) -> Path | None:
    """`previous` (a published build folder) when its topics and map can be reused as they are."""
    if previous is None:
        return None
    try:
        manifest = ix.read_manifest(previous)
        ix.verify_files(previous, {n: m for n, m in manifest.files.items() if n in FILES})
    except (ix.IndexLoadError, OSError):
        return None
    ok = manifest.explore is not None and manifest.explore.key == wanted
    return previous if ok and all((previous / name).is_file() for name in FILES) else None


def compute(papers: list[Paper], vectors: np.ndarray, wanted: str, previous: Path | None,
            announce: Callable[[str], None] = lambda stage: None) -> Explore:
    """Topics and map of the papers (reused from the `previous` build folder when its key matches);
    sets each paper's topic."""
    reused_from = reusable(previous, wanted)
    xy = None
    if reused_from is not None:
        topics = tp.read_topics(reused_from / tp.TOPICS)
    else:
        announce("topics")
        topics = tp.compute_topics(papers, vectors)
        announce("map")
        xy = layout.layout(vectors)
    topic_of = tp.assignments(topics)
    for p in papers:
        p.topic = topic_of.get(p.id)
    entry = ExploreEntry(wanted, len(topics), tp.METHOD, layout.METHOD, reused_from is not None)
    return Explore(entry, topics, xy, reused_from)


def write(build_dir: Path, part: Explore, papers: list[Paper]) -> ExploreEntry:
    if part.reused_from is not None:
        for name in FILES:
            shutil.copyfile(part.reused_from / name, build_dir / name)
    else:
        tp.write_topics(build_dir / tp.TOPICS, part.topics)
        layout.write_map(build_dir / layout.MAP, [p.id for p in papers], part.xy, tp.assignments(part.topics))
    return part.entry


def load(path: Path, entry: ExploreEntry | None) -> tuple[list[tp.Topic], list[dict]]:
    """The topics and map points of the index at `path` (none when it was built without them)."""
    if entry is None:
        return [], []
    return tp.read_topics(path / tp.TOPICS), layout.read_map(path / layout.MAP)
