"""The hybrid's blend re-tuned on the judged development questions: each weight of fusion.Weights that a
judged question's kind uses, moved alone around the shipped value, scored by judged nDCG@10 (ranx).

    python benchmarks/experiments/bench_fusion_grid.py --index DIR     # -> results/fusion_grid.md

Reads the development half only; a paper no reader graded counts as not relevant, and the column beside
each score says how many of them a setting's top 10s hold (a setting that wins must be graded first)."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

GRID = {"question": (0.5, 0.6, 0.8, 0.9), "topic": (0.2, 0.3, 0.5, 0.6, 0.7), "description": (0.6, 0.7, 0.9),
        "sentence": (0.0, 0.15, 0.5)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True)
    args = ap.parse_args()
    from ranx import Qrels, Run, evaluate

    import bench_judged as bj
    from report import machine, write_report
    from search import fusion
    from search.engine import open_engine
    from search.filters import Filters

    engine = open_engine(Path(args.index))
    shown = engine.catalog.known(Filters())
    graded = bj.judgments()
    qs = [q for q in bj.questions() if q["split"] == "dev"]
    qrels = Qrels({q["id"]: graded[q["id"]] for q in qs})
    kinds = [fusion.query_kind(q["text"]) for q in qs]

    def score(w: fusion.Weights) -> tuple[float, int]:
        engine.weights = w
        ranked = {q["id"]: [h.paper.id for h in engine.search(q["text"], 10, "hybrid", shown, evidence=False).hits]
                  for q in qs}
        run = Run({i: {p: float(10 - r) for r, p in enumerate(ps)} for i, ps in ranked.items()})
        return (float(evaluate(qrels, run, "ndcg@10", make_comparable=True)),
                sum(p not in graded[i] for i, ps in ranked.items() for p in ps))

    base = fusion.DEFAULT_WEIGHTS
    shipped, _ = score(base)
    lines = ["# The blend's weights on the judged development questions", "",
             f"`python benchmarks/experiments/bench_fusion_grid.py --index {args.index}` · {machine()} · "
             f"{__import__('datetime').date.today()}", "",
             f"{len(qs)} development questions read as: " + ", ".join(
                 f"{k} {kinds.count(k)}" for k in sorted(set(kinds))) + f". Shipped weights: nDCG@10 {shipped:.3f}.",
             "", "| weight | shipped | tried | nDCG@10 | Δ | ungraded in top 10s |", "|---|---|---|---|---|---|"]
    for field, values in GRID.items():
        for v in values:
            s, ungraded = score(replace(base, **{field: v}))
            lines.append(f"| {field} | {getattr(base, field)} | {v} | {s:.3f} | {s - shipped:+.3f} | {ungraded} |")
    write_report(lines, HERE / "results" / "fusion_grid.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
