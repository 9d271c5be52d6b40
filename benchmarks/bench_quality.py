"""Similar papers: on the 4,302 ICLR papers, how often a paper's 10 nearest neighbours share its
primary area (precision@10), for each similarity variant. (Query ranking: bench_ranking.py.)

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/bench_quality.py [--out benchmarks/results/quality.md]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from report import SHARED, write_report


def similar_precision(engine, area_of: dict[str, str], mode: str, k: int = 10) -> tuple[float, float]:
    """Mean precision@k of same-area neighbours over all papers, and median ms per paper."""
    precisions, times = [], []
    for paper in engine.papers:
        area = area_of.get(paper.id)
        if not area:
            continue
        t = time.perf_counter()
        hits = engine.similar([paper.id], k, mode=mode).hits
        times.append(time.perf_counter() - t)
        precisions.append(float(np.mean([area_of.get(h.paper.id) == area for h in hits])))
    return float(np.mean(precisions)), 1000 * float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "quality.md")
    args = ap.parse_args()

    from search.encoding.embed import DEFAULT_MODEL, load_model
    from search.engine import Engine
    from search.evaluate import prepare
    from search.index import load_index

    model = load_model()
    lines = ["Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && python benchmarks/bench_quality.py"]
    # the whole conference, title + abstract, as the app indexes it
    engine = Engine(load_index(prepare(args.devsets / "keywords", DEFAULT_MODEL, model, ROOT / ".embedding_cache")), model)
    area_of = {r["id"]: r["primary_area"] for r in map(json.loads, SHARED.open(encoding="utf-8"))}
    lines += ["", "## Similar papers: precision@10 of same primary area (4,302 papers, 12 areas)", "",
              "| similar() mode | precision@10 | median ms per paper |", "|---|---|---|"]
    for variant in ("semantic", "hybrid"):
        p, ms = similar_precision(engine, area_of, variant)
        lines.append(f"| {variant} | {p:.3f} | {ms:.1f} |")
        print(lines[-1], flush=True)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
