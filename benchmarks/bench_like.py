"""'Papers like my list': same-area precision@10 of one paper, the mean of five vectors, and a per-list SVM.

200 lists of 5 random papers from one primary area (seed 0) of an index of ../shared/data (build it with
`python index_build.py seeds ../shared/data/iclr2026_papers.jsonl --out DIR`). Writes results/like.md.

    python benchmarks/bench_like.py --index DIR
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from report import write_report
from search.engine import open_engine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--lists", type=int, default=200)
    args = ap.parse_args()
    engine = open_engine(args.index)
    areas = np.array([p.primary_area for p in engine.papers])
    by_area = {a: np.flatnonzero(areas == a) for a in engine.catalog.areas}
    rng = np.random.default_rng(0)
    lists = []
    for _ in range(args.lists):
        area = engine.catalog.areas[rng.integers(len(engine.catalog.areas))]
        lists.append((area, rng.choice(by_area[area], 5, replace=False)))

    def precision(rows, area) -> float:
        return float(np.mean([areas[r] == area for r in rows[:10]]))

    scores = {"one paper (vectors)": [], "one paper (hybrid, the page's default)": [],
              "mean of the five vectors": [], "linear SVM per list (used)": []}
    svm_ms = []
    for area, rows in lists:
        ids = [engine.papers[r].id for r in rows]
        one = engine.similar(ids[:1], 10, mode="semantic").hits
        scores["one paper (vectors)"].append(precision([engine.catalog.row(h.paper.id) for h in one], area))
        one = engine.similar(ids[:1], 10).hits
        rows = [engine.catalog.row(h.paper.id) for h in one]
        scores["one paper (hybrid, the page's default)"].append(precision(rows, area))
        centre = engine.vectors[rows].mean(axis=0)
        sims = engine.vectors @ centre
        sims[rows] = -np.inf
        scores["mean of the five vectors"].append(precision(np.argsort(-sims)[:10], area))
        t = time.perf_counter()
        hits = engine.similar(ids, 10).hits
        svm_ms.append((time.perf_counter() - t) * 1000)
        assert not {h.paper.id for h in hits} & set(ids)
        scores["linear SVM per list (used)"].append(precision([engine.catalog.row(h.paper.id) for h in hits], area))
    lines = ["# Papers like my list", "", "Command: `python benchmarks/bench_like.py --index DIR` "
             "(DIR built from seeds + ../shared/data; 2 cores, 24 GiB)", "",
             f"{len(engine.papers):,} papers, {len(lists)} lists of 5 papers from one primary area (seed 0); "
             "precision@10 = share of the ten answers in that area.", "",
             "| method | precision@10 |", "| --- | --- |"]
    lines += [f"| {name} | {statistics.mean(v):.3f} |" for name, v in scores.items()]
    lines += ["", f"SVM answer time: p50 {statistics.median(svm_ms):.0f} ms, "
              f"max {max(svm_ms):.0f} ms (engine.similar with five ids, 2-core machine)."]
    write_report(lines, Path(__file__).parent / "results" / "like.md")


if __name__ == "__main__":
    main()
