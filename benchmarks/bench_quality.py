"""Search quality on the development sets, and similar-paper precision, in one run.

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/bench_quality.py [--out benchmarks/results/quality.md]

1. Every ranking mode and fusion setting on the keyword and title development sets
   (nDCG@10, MRR@10, Recall@10, Recall@100), to choose the default mode and fusion; then the
   chosen ones again on held-out sets drawn with another seed, which played no part in choosing.
2. Similar papers: on the 4,302 ICLR papers, how often a paper's 10 nearest neighbours share
   its primary area (precision@10), for each similarity variant.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

FUSIONS = [("rrf", 0.5), ("blend", 0.3), ("blend", 0.5), ("blend", 0.7)]


from report import SHARED, write_report  # noqa: E402


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
    ap.add_argument("--testsets", type=Path, default=ROOT / ".testsets")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "quality.md")
    args = ap.parse_args()

    from search.embed import DEFAULT_MODEL, load_model
    from search.engine import DEFAULT_ALPHA, DEFAULT_FUSION, MODES, Engine
    from search.evaluate import METRICS, evaluate, load_queries, prepare, read_qrels
    from search.index import load_index

    model = load_model()
    lines = ["Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && "
             "python benchmarks/make_devsets.py --seed 1 --out .testsets && python benchmarks/bench_quality.py", "",
             "## Ranking modes (500 queries a set, 4,302 papers)", "",
             "| set | mode | fusion | " + " | ".join(METRICS) + " | median ms |",
             "|---" * (len(METRICS) + 4) + "|"]
    engines = {}
    cache = ROOT / ".embedding_cache"  # the corpus is the same in every set: embed it once
    sets = [(f"dev {n}", args.devsets / n, FUSIONS) for n in ("keywords", "unseen", "titles")]
    sets += [(f"held-out {n}", args.testsets / n, [(DEFAULT_FUSION, DEFAULT_ALPHA)])
             for n in ("keywords", "unseen", "titles")]
    for name, dataset, fusions in sets:
        data = load_index(prepare(dataset, DEFAULT_MODEL, model, cache))
        queries, qrels = load_queries(dataset), read_qrels(dataset, "test")
        for fusion, alpha in fusions:
            engine = Engine(data, model, fusion=fusion, alpha=alpha)
            engines.setdefault(name, engine)
            modes = list(MODES) if (fusion, alpha) == fusions[0] else ["hybrid"]
            for mode, r in evaluate(engine, queries, qrels, modes).items():
                label = f"{fusion}" + (f" α={alpha}" if fusion == "blend" else "") if mode == "hybrid" else "–"
                lines.append(f"| {name} | {mode} | {label} | " + " | ".join(f"{r[m]:.3f}" for m in METRICS)
                             + f" | {r['median_ms']:.1f} |")
                print(lines[-1], flush=True)

    area_of = {r["id"]: r["primary_area"] for r in map(json.loads, SHARED.open(encoding="utf-8"))}
    engine = engines["dev keywords"]  # the whole conference, title + abstract, as the app indexes it
    lines += ["", "## Similar papers: precision@10 of same primary area (4,302 papers, 12 areas)", "",
              "| similar() mode | precision@10 | median ms per paper |", "|---|---|---|"]
    for variant in ("semantic", "hybrid"):
        p, ms = similar_precision(engine, area_of, variant)
        lines.append(f"| {variant} | {p:.3f} | {ms:.1f} |")
        print(lines[-1], flush=True)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
