"""How well "how papers like this fared" separates accepted from rejected submissions: ROC AUC.

    python benchmarks/bench_fared.py --index INDEX [--report benchmarks/results/fared.md]

INDEX is an index built from a whole-venue fetch (`python -m search fetch`, then `python index_build.py
data/ICLR.cc_2026_Conference.jsonl --out INDEX`). Each accepted or rejected submission is scored, left out
of its own neighbours, by the accepted share among the decided submissions of its k nearest neighbours (the
abstract vectors the page's panel uses, and TF-IDF for comparison), by its primary area's accepted share
(itself left out), and by its own mean review rating. AUC 0.5 is chance; the panel describes, it does not
predict, and these figures say how little the neighbours tell.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from report import machine, write_report
from search.engine import open_engine
from search.filters import decision_group

KS = (10, 30, 50, 100)


def neighbours(vectors: np.ndarray, k: int, chunk: int = 2048) -> np.ndarray:
    """Each row's k nearest other rows by inner product (vectors are unit length: cosine)."""
    out = np.empty((len(vectors), k), dtype=np.int64)
    for start in range(0, len(vectors), chunk):
        sims = vectors[start:start + chunk] @ vectors.T
        sims[np.arange(len(sims)), np.arange(start, start + len(sims))] = -np.inf  # never itself
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start:start + chunk] = np.take_along_axis(top, order, axis=1)
    return out


def tfidf_vectors(texts: list[str]):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english").fit_transform(texts)


def sparse_neighbours(matrix, k: int, chunk: int = 1024) -> np.ndarray:
    out = np.empty((matrix.shape[0], k), dtype=np.int64)
    for start in range(0, matrix.shape[0], chunk):
        sims = (matrix[start:start + chunk] @ matrix.T).toarray()
        sims[np.arange(len(sims)), np.arange(start, start + len(sims))] = -np.inf
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start:start + chunk] = np.take_along_axis(top, order, axis=1)
    return out


def shares(near: np.ndarray, accepted: np.ndarray, rejected: np.ndarray, k: int, fallback: float) -> np.ndarray:
    acc = accepted[near[:, :k]].sum(axis=1)
    dec = acc + rejected[near[:, :k]].sum(axis=1)
    return np.where(dec > 0, acc / np.maximum(dec, 1), fallback)


def main() -> int:
    from sklearn.metrics import roc_auc_score

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--report", type=Path, default=ROOT / "benchmarks" / "results" / "fared.md")
    args = ap.parse_args()
    engine = open_engine(args.index)
    papers = engine.papers
    groups = np.array([decision_group(p.decision) for p in papers])
    accepted, rejected = groups == "accepted", groups == "rejected"
    if not accepted.any() or not rejected.any():
        print(f"{args.index}: needs an index with accepted and rejected submissions (a whole-venue fetch)",
              file=sys.stderr)
        return 2
    judged = accepted | rejected
    y = accepted[judged].astype(int)
    venue_rate = accepted.sum() / judged.sum()
    rows = []
    t = time.perf_counter()
    dense = neighbours(np.ascontiguousarray(engine.vectors, dtype=np.float32), max(KS))
    dense_s = time.perf_counter() - t
    t = time.perf_counter()
    sparse = sparse_neighbours(tfidf_vectors([p.text for p in papers]), max(KS))
    sparse_s = time.perf_counter() - t
    for name, near in (("abstract vectors (MiniLM, as the panel)", dense), ("TF-IDF of title and abstract", sparse)):
        for k in KS:
            score = shares(near, accepted, rejected, k, venue_rate)[judged]
            rows.append((f"{k} nearest neighbours' accepted share, {name}", roc_auc_score(y, score)))
    # the area's rate without the paper itself
    areas = np.array([p.primary_area for p in papers])
    area_rate = np.empty(len(papers))
    for area in set(areas):
        in_area = areas == area
        acc, dec = accepted[in_area].sum(), judged[in_area].sum()
        area_rate[in_area] = (acc - accepted[in_area]) / np.maximum(dec - judged[in_area], 1)
    rows.append(("primary area's accepted share (the paper left out: leaving out lowers an accepted paper's "
                 "own area's share and raises a rejected one's, so this falls below chance)",
                 roc_auc_score(y, area_rate[judged])))
    area_all = np.empty(len(papers))
    for area in set(areas):
        in_area = areas == area
        area_all[in_area] = accepted[in_area].sum() / max(judged[in_area].sum(), 1)
    rows.append(("primary area's accepted share (the paper counted: the base rate as a reader sees it)",
                 roc_auc_score(y, area_all[judged])))
    rating = np.array([np.nan if p.avg_rating is None else p.avg_rating for p in papers])
    rated = judged & np.isfinite(rating)
    rows.append(("the paper's own mean review rating (papers with reviews)",
                 roc_auc_score(accepted[rated].astype(int), rating[rated])))
    for r in rows:
        print(f"{r[1]:.3f}  {r[0]}", flush=True)
    lines = ["# How papers like this fared: does the neighbourhood separate accepted from rejected?", "",
             f"`python benchmarks/bench_fared.py --index INDEX` · {machine()} · {time.strftime('%Y-%m-%d')}", "",
             f"Index: {len(papers):,} submissions; judged: {judged.sum():,} decided ones ({accepted.sum():,} "
             f"accepted, {rejected.sum():,} rejected; withdrawn and undecided ones count as neighbours but are "
             f"not judged). The venue's accepted share of the decided: {venue_rate:.3f}. Each submission is left "
             "out of its own neighbours; a neighbourhood without a decided paper scores the venue's share.", "",
             "| score | ROC AUC, accepted vs rejected |", "|---|---|"]
    lines += [f"| {name} | {auc:.3f} |" for name, auc in rows]
    lines += ["", f"Neighbours of every submission: {dense_s:.1f} s (vectors), {sparse_s:.1f} s (TF-IDF, built "
              "and searched).", "",
              "Reading: the neighbours' share describes a neighbourhood; it tells a paper's fate barely better "
              "than chance and than its area's rate, where the paper's own reviews tell it well. The page and "
              "`python -m search fared` say so beside the panel."]
    write_report(lines, args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
