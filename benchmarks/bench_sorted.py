"""Sorted lists and "make X cheaper" questions, on the 4,302 ICLR papers (title + abstract, as the app).

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/bench_sorted.py [--out benchmarks/results/sorted.md]

1. The relevance floor of a sorted list (engine.RELEVANCE_FLOOR). A sort by rating takes the SORT_POOL
   (30) papers most relevant to the query, keeps those whose signal (cosine, or the hybrid match
   score) is at least a share of the best one's, and re-orders them. For each signal and share, over
   each question's pool (hybrid ranking, the default): the precision and recall of what is kept, how
   many are kept, and how many relevant papers are among the 10 shown once sorted by rating (ratings
   from the conference file). The floor is the one that shows the most relevant papers on the
   development questions and keyword queries (their mean); the held-out sets confirm it.
2. The questions of the "make X cheaper / faster / smaller" shape, in every mode: P@5 and P@10.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from report import engine_maker, SHARED, machine, today, write_report

ROOT = Path(__file__).resolve().parent.parent
FLOORS = [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
SIGNALS = {"cosine": 0, "match": 1}  # the floor's signal: the cosine, or the hybrid blend (0 to 1)
RATINGS = {r["id"]: r.get("avg_rating") for r in map(json.loads, SHARED.open(encoding="utf-8"))}


def pools(engine, queries: dict[str, str], qrels: dict) -> dict[str, list[tuple[float, float, bool]]]:
    """Per judged query: its SORT_POOL most relevant papers, in relevance order, as (cosine, hybrid match
    score, relevant?, mean rating or None)."""
    from search.engine import SORT_POOL

    out = {}
    for qid, text in queries.items():
        if qid in qrels:
            hits = engine.search(text, SORT_POOL, evidence=False).hits
            out[qid] = [(h.cosine, h.score, any(qrels[qid].get(i, 0) > 0 for i in (h.paper.id, *h.paper.aliases)),
                         RATINGS.get(h.paper.id)) for h in hits]
    return out


def floor_figures(pooled: dict, share: float, signal: int) -> dict[str, float]:
    """Over the queries: precision and recall (of the pool's relevant papers) of what the floor keeps, how
    many it keeps, and how many relevant papers are among the 10 shown once the kept ones are sorted by
    rating (what a user sees)."""
    from search.engine import above_floor

    precision, recall, kept_n, shown_good = [], [], [], []
    for pool in pooled.values():
        kept = above_floor(list(range(len(pool))), [p[signal] for p in pool], share)
        good = sum(pool[i][2] for i in kept)
        total = sum(p[2] for p in pool)
        precision.append(good / len(kept) if kept else 0.0)
        recall.append(good / total if total else 1.0)
        kept_n.append(len(kept))
        by_rating = sorted(kept, key=lambda i: -(pool[i][3] if pool[i][3] is not None else -1))[:10]
        shown_good.append(sum(pool[i][2] for i in by_rating))
    return {"precision": statistics.mean(precision), "recall": statistics.mean(recall),
            "kept": statistics.median(kept_n), "shown": statistics.mean(shown_good)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--testsets", type=Path, default=ROOT / ".testsets")
    ap.add_argument("--cache", type=Path, default=ROOT / ".embedding_cache")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "sorted.md")
    args = ap.parse_args()

    from search.encoding.embed import load_model
    from search.engine import COSINE_FLOOR, MATCH_FLOOR, MODES
    from search.evaluate import load_queries, metrics, read_qrels
    from search.fusion import DEFAULT_WEIGHTS

    engine_for = engine_maker(load_model(), args.cache)
    lines = [f"Machine: {machine()} · {today()}",
             "Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && python benchmarks/make_devsets.py "
             "--seed 1 --out .testsets && python benchmarks/bench_sorted.py", "",
             "## 1. The relevance floor of a sorted list", "",
             "Of each query's 30 most relevant papers (hybrid), those whose signal is at least the share × the best "
             "one's: the cosine to the query, or the hybrid match score. Precision: of what is kept; recall: of the "
             "pool's relevant papers; kept: median papers kept; shown: relevant papers among the 10 shown once the "
             "kept ones are sorted by rating (the objective: what a user of a sorted list sees).", "",
             "| set | signal | share | precision | recall | kept | relevant among the 10 shown |",
             "|---|---|---|---|---|---|---|"]
    pooled = {}
    for split, root in (("dev", args.devsets), ("held-out", args.testsets)):
        for name in ("questions", "keywords"):
            dataset = root / name
            pooled[(split, name)] = pools(engine_for(dataset, DEFAULT_WEIGHTS), load_queries(dataset),
                                          read_qrels(dataset, "test"))
    def objective(signal: str, share: float) -> float:  # questions and keyword queries count alike
        return statistics.mean(floor_figures(pooled[("dev", name)], share, SIGNALS[signal])["shown"]
                               for name in ("questions", "keywords"))

    chosen = {signal: max(FLOORS, key=lambda share: objective(signal, share)) for signal in SIGNALS}
    for (split, name), pooled_set in pooled.items():
        for signal, column in SIGNALS.items():
            for share in FLOORS:
                f = floor_figures(pooled_set, share, column)
                mark = " (shipped)" if share == {"cosine": COSINE_FLOOR, "match": MATCH_FLOOR}[signal] else ""
                lines.append(f"| {split} {name} ({len(pooled_set)}) | {signal} | {share:.2f}{mark} | "
                             f"{f['precision']:.3f} | {f['recall']:.3f} | {f['kept']:g} | {f['shown']:.2f} |")
                print(lines[-1], flush=True)
    lines += ["", "Most relevant papers shown, mean of the development questions and keyword queries: "
              + "; ".join(f"{signal} share {share:.2f} ({objective(signal, share):.3f}, unfloored "
                          f"{objective(signal, 0.0):.3f})" for signal, share in chosen.items())
              + f". Shipped: match {MATCH_FLOOR:.2f} (hybrid lists), cosine {COSINE_FLOOR:.2f} (other lists). "
              "Share 0.00 keeps the whole pool (a sort before the floor)."]

    shaped = {json.loads(line)["question"] for line in (ROOT / "benchmarks" / "data" / "questions.jsonl").open()
              if json.loads(line).get("shape") == "make X cheaper"}
    lines += ["", "## 2. \"Make X cheaper / faster / smaller\" questions", "",
              "Each question as typed, and read as the engine reads it (fusion.as_asked: \"cheaper\", \"faster\", "
              "\"smaller\" ... as \"more efficient\"); the other questions of the set beside them, to show what the "
              "reading costs them.", "",
              "| split | question | mode | as typed P@5 | P@10 | as read P@5 | P@10 |", "|---|---|---|---|---|---|---|"]
    import search.fusion as fusion

    shipped_reading = fusion.as_asked
    for split, root in (("dev", args.devsets), ("held-out", args.testsets)):
        dataset = root / "questions"
        queries, qrels = load_queries(dataset), read_qrels(dataset, "test")
        engine = engine_for(dataset, DEFAULT_WEIGHTS)
        means: dict[tuple, list[float]] = {}
        for qid, text in queries.items():
            if qid not in qrels:
                continue
            for mode in MODES:
                row = []
                for reading in ("typed", "read"):
                    fusion.as_asked = shipped_reading if reading == "read" else (lambda query, kind: query)
                    engine.clear_cache()
                    ranked = [[h.paper.id, *h.paper.aliases] for h in engine.search(text, 10, mode, evidence=False).hits]
                    p5, p10 = metrics(ranked[:5], qrels[qid])["P@10"] * 2, metrics(ranked, qrels[qid])["P@10"]
                    row += [p5, p10]
                    means.setdefault((text in shaped, mode, reading), []).append(p10)
                    means.setdefault((text in shaped, mode, reading + "5"), []).append(p5)
                if text in shaped:
                    lines.append(f"| {split} | {text} | {mode} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
        fusion.as_asked = shipped_reading
        for group in (True, False):
            for mode in MODES:
                figures = [statistics.mean(means[(group, mode, r)]) for r in ("typed5", "typed", "read5", "read")]
                n = len(means[(group, mode, "typed")])
                lines.append(f"| {split} | **mean of {n} {'such' if group else 'other'} questions** | {mode} | "
                             + " | ".join(f"{v:.3f}" for v in figures) + " |")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
