"""The reviewers' summaries as a view of each paper: what the paper does, in the words of the people who read it.

Each review opens with the reviewer's summary of the paper, several independent paraphrases of every
paper, written by people. The build embeds them (`summaries.npy`, float16, every paper's summaries one
after another; `summary_offsets.npy`, where each paper's start). A hybrid query's POOL best papers are
re-scored as match + WEIGHT · (the query's best cosine with any of the paper's summaries, 0 without one).
WEIGHT was chosen on the development sets among 0 to 0.5 (benchmarks/experiments/results/views.md);
as shipped, on held-out (benchmarks/results/ranking.md): questions P@10 0.300 to 0.312, paraphrases
MRR@10 0.876 to 0.899, names and titles no lower (0.982 to 0.985, 0.961 to 0.964).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..corpus import Paper
from ..text import clean_for_model
from .part import Context, Part, embed, misses

VECTORS = "summaries.npy"
OFFSETS = "summary_offsets.npy"
# each summary's review: its place in the paper's reviews (the reviews part's order), so the page shows the
# review a vector came from without cleaning the texts again at query time (a change to the cleaning would
# point at another review)
SOURCES = "summary_reviews.npy"
WEIGHT = 0.3


def summarised(reviews: list[dict]) -> list[dict]:
    """The reviews that hold a summary, in order: a paper's rows of the summaries part."""
    return [r for r in reviews if isinstance(r.get("summary"), str) and clean_for_model(r["summary"]).strip()]


def paper_summaries(papers: list[Paper]) -> list[list[str]]:
    """Each paper's reviewers' summaries, as the model reads them (no markup), in review order."""
    return [[clean_for_model(r["summary"]) for r in summarised(p.reviews)] for p in papers]


def paper_sources(papers: list[Paper]) -> list[list[int]]:
    """For each of a paper's summaries (paper_summaries), the place of its review among the paper's reviews."""
    held = [{id(r) for r in summarised(p.reviews)} for p in papers]
    return [[i for i, r in enumerate(p.reviews) if id(r) in ids] for p, ids in zip(papers, held)]


def flat(groups: list[list[str]]) -> list[str]:
    return [s for group in groups for s in group]


def digest(groups: list[list[str]]) -> str:
    """What the summaries' vectors are made of, row by row (the papers' own texts are in the rows' key)."""
    return hashlib.sha256(json.dumps(groups, ensure_ascii=False).encode("utf-8")).hexdigest()


def cache_key(vectors_key: str) -> str:
    """The embedding cache of the summaries: the abstracts' model and backend, in a cache of its own, so that
    the abstracts' stage, which reads its cache whole, does not read 76,000 summaries' vectors too."""
    return hashlib.sha256(f"{vectors_key}\nreviewers' summaries".encode()).hexdigest()


def write(out_dir: Path, groups: list[list[str]], vectors: np.ndarray, sources: list[list[int]]) -> int:
    """The summaries' vectors, offsets and reviews into a build; returns the manifest entry (the count)."""
    offsets = np.zeros(len(groups) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(g) for g in groups])
    if len(vectors) != offsets[-1] or [len(s) for s in sources] != [len(g) for g in groups]:
        raise ValueError(f"{len(vectors)} summary vectors and {sum(map(len, sources))} reviews for "
                         f"{offsets[-1]} summaries")
    np.save(out_dir / SOURCES, np.array([i for s in sources for i in s], dtype=np.int32))
    # float16 halves the file and the memory; a paper's few cosines keep their order at this precision
    np.save(out_dir / VECTORS, np.asarray(vectors, dtype=np.float16).reshape(len(vectors), -1))
    np.save(out_dir / OFFSETS, offsets)
    return int(offsets[-1])


@dataclass
class Summaries:
    vectors: np.ndarray   # float16, one row per summary
    offsets: np.ndarray   # papers + 1: paper i's summaries are rows offsets[i] to offsets[i + 1]
    sources: np.ndarray | None = None  # each row's review among its paper's (None: an index built before)

    @classmethod
    def load(cls, index_dir: Path, count: int, papers: int, dimension: int) -> "Summaries":
        """The index's summaries; ValueError saying what does not match the manifest."""
        vectors = np.load(index_dir / VECTORS, allow_pickle=False)
        offsets = np.load(index_dir / OFFSETS, allow_pickle=False)
        sources = np.load(index_dir / SOURCES, allow_pickle=False) if (index_dir / SOURCES).is_file() else None
        if offsets.shape != (papers + 1,) or int(offsets[-1]) != count or vectors.shape != (count, dimension):
            raise ValueError(f"{VECTORS} holds {vectors.shape[0]} vectors of {vectors.shape[-1]} dimensions and "
                             f"{OFFSETS} {len(offsets) - 1} papers, where the manifest says {count} summaries, "
                             f"{dimension} dimensions and {papers} papers")
        if sources is not None and sources.shape != (count,):
            raise ValueError(f"{SOURCES} names the reviews of {len(sources)} summaries, where the manifest says "
                             f"{count}")
        return cls(vectors, offsets, sources)

    def best(self, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """For each row, the query's best cosine with one of the paper's summaries, at least 0 (0 without any)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.offsets[rows], self.offsets[rows + 1]
        counts = ends - starts
        out = np.zeros(len(rows), dtype=np.float32)
        if not counts.sum():
            return out
        idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
        scores = self.vectors[idx].astype(np.float32) @ query.ravel().astype(np.float32)
        owner = np.repeat(np.arange(len(rows)), counts)
        np.maximum.at(out, owner, scores)
        return out

    def closest(self, row: int, query: np.ndarray) -> tuple[int, float]:
        """Which of a paper's summaries is closest to the query (its place among the paper's summaries), and
        its cosine; (-1, 0.0) without any."""
        vectors = self.vectors[self.offsets[row]:self.offsets[row + 1]].astype(np.float32)
        if not len(vectors):
            return -1, 0.0
        scores = vectors @ query.ravel().astype(np.float32)
        return int(np.argmax(scores)), float(scores.max())

    def review_of(self, row: int, i: int, reviews: list[dict]) -> dict:
        """The review a paper's i-th summary came from, among the paper's reviews."""
        if self.sources is not None:
            return reviews[int(self.sources[self.offsets[row] + i])]
        return summarised(reviews)[i]  # an index built before the sources were kept: found again by cleaning


def rescore(rows: np.ndarray, scores: np.ndarray, view: np.ndarray, weight: float = WEIGHT
            ) -> tuple[np.ndarray, np.ndarray]:
    """Rows ranked by match + weight · view, best first (ties keep the match's order), with that score
    divided by 1 + weight: still from 0 to 1, as the match is."""
    total = (np.asarray(scores, dtype=float) + weight * np.asarray(view, dtype=float)) / (1 + weight)
    order = np.argsort(-total, kind="stable")
    return np.asarray(rows)[order], total[order]


# ---------------------------------------------------------------- the part, as the build and the engine see it

@dataclass
class State:
    """What the summaries' stage holds in one build."""
    # each paper's summaries (paper_summaries), made once a build: whether the part applies, its key, its check
    # for work, its embedding and its writing all read them
    groups: list[list[str]] | None = None
    vectors: np.ndarray | None = None


def _groups(ctx: Context, state: State) -> list[list[str]]:
    if state.groups is None:
        state.groups = paper_summaries(ctx.papers) if any(p.reviews for p in ctx.papers) else []
    return state.groups


def _compute(ctx: Context, state: State) -> None:
    state.vectors, _ = embed(ctx, "summaries", ctx.encoder, flat(_groups(ctx, state)), cache_key(ctx.vectors_key))


def _write(ctx: Context, state: State, build_dir: Path) -> int:
    return write(build_dir, _groups(ctx, state), state.vectors, paper_sources(ctx.papers))


PART = Part(
    "summaries", enabled=lambda o, r: o.summaries and r, costs=lambda o: {"summaries": 193.0}, compute=_compute,
    write=_write, state=State,
    has_work=lambda ctx, state: misses(ctx.cache(cache_key(ctx.vectors_key)), flat(_groups(ctx, state))),
    files=(VECTORS, OFFSETS, SOURCES),
    key=lambda ctx, state: [cache_key(ctx.vectors_key), digest(_groups(ctx, state)), SOURCES],
    applies=lambda ctx, state: any(_groups(ctx, state)), what="reviewers' summaries",
    load=lambda data, entry: Summaries.load(data.path, entry, len(data.papers), data.manifest.dimension))
