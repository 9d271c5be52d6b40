"""Queries in other languages against the English papers, and English queries unchanged.

    python index_build.py seeds ../shared/data/iclr2026_papers.jsonl --multilingual
    python benchmarks/make_devsets.py
    python benchmarks/bench_multilingual.py [--index index] [--out benchmarks/results/multilingual.md]

The 40 Chinese and 40 French queries in benchmarks/data/multilingual_queries.jsonl were written by
hand, one line each, describing 40 ICLR 2026 papers drawn at random (seed 7) from their titles and
keywords, before any result was seen; none was changed afterwards.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


from report import write_report


def score(engine, queries: list[tuple[str, str]], mode: str) -> dict:
    from search.evaluate import scores

    runs, times, routed = {}, [], 0
    for i, (text, target) in enumerate(queries):
        t = time.perf_counter()
        result = engine.search(text, 10, mode=mode, evidence=False)
        times.append(time.perf_counter() - t)
        routed += result.space == "multilingual"
        runs[str(i)] = [[h.paper.id, *h.paper.aliases] for h in result.hits]
    per = list(scores(runs, {str(i): {target: 1} for i, (_, target) in enumerate(queries)}).values())  # one ranx call
    return {"MRR@10": statistics.mean(m["MRR@10"] for m in per),
            "Recall@10": statistics.mean(m["Recall@10"] for m in per),
            "median_ms": 1000 * statistics.median(times), "routed": routed / len(queries)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, default=ROOT / "index")
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "multilingual.md")
    args = ap.parse_args()

    from search.engine import MODES, open_engine

    engine = open_engine(args.index)
    if not engine.multilingual:
        sys.exit(f"{args.index} has no multilingual space: build it with --multilingual")
    rows = [json.loads(line) for line in (ROOT / "benchmarks" / "data" / "multilingual_queries.jsonl").open()]
    ml = engine.multilingual
    m = engine.manifest
    # the build's added cost, measured afresh (the index itself may have come from the cache)
    from search.parts.evidence import flat_texts

    texts = [p.text for p in engine.papers]
    t = time.perf_counter()
    ml.encoder.encode(texts)
    papers_s = time.perf_counter() - t
    sentences = flat_texts(engine.evidence.sentences)
    t = time.perf_counter()
    ml.encoder.encode(sentences)
    sentences_s = time.perf_counter() - t
    t = time.perf_counter()
    ml.encoder.encode([p.title for p in engine.papers])
    titles_s = time.perf_counter() - t
    t = time.perf_counter()
    engine.model.encode(texts, batch_size=32)
    minilm_s = time.perf_counter() - t
    lines = [f"Command: python benchmarks/bench_multilingual.py --index {args.index}", "",
             f"Index: {m.count:,} papers. Added build time, measured in this run without the cache: "
             f"multilingual vectors of the papers {papers_s:.0f} s ({len(texts) / papers_s:.0f}/s) and of their "
             f"{len(sentences):,} sentences {sentences_s:.0f} s, of their titles {titles_s:.0f} s, against {minilm_s:.0f} s for the English "
             f"(MiniLM) paper vectors alone.", "",
             "| queries | mode | space | MRR@10 | Recall@10 | median ms | routed to multilingual |",
             "|---|---|---|---|---|---|---|"]
    for lang in ("zh", "fr"):
        qs = [(r[lang], r["paper"]) for r in rows]
        for mode in MODES:
            for label, space in (("multilingual", ml), ("English only (MiniLM)", None)):
                engine.rankers.multilingual = space
                engine.clear_cache()
                r = score(engine, qs, mode)
                lines.append(f"| {lang} ({len(qs)}) | {mode} | {label} | {r['MRR@10']:.3f} | {r['Recall@10']:.3f} | "
                             f"{r['median_ms']:.1f} | {r['routed']:.0%} |")
                print(lines[-1], flush=True)
    engine.rankers.multilingual = ml
    lines += ["", "Dense weight of the hybrid blend for other languages (Weights.multilingual):", "",
              "| queries | α | MRR@10 | Recall@10 |", "|---|---|---|---|"]
    default = engine.weights
    for lang in ("zh", "fr"):
        for alpha in (0.3, 0.5, 0.7, 0.9):
            engine.weights = replace(default, multilingual=alpha)
            r = score(engine, [(r[lang], r["paper"]) for r in rows], "hybrid")
            lines.append(f"| {lang} | {alpha} | {r['MRR@10']:.3f} | {r['Recall@10']:.3f} |")
            print(lines[-1], flush=True)
    engine.weights = default
    import numpy as np

    lines += ["", "Which multilingual vectors score a paper (semantic ranking, MRR@10):", "",
              "| queries | abstract only | title only | mean of abstract and title | shipped (fusion.Weights) |",
              "|---|---|---|---|---|"]
    rows_of = {p.id: i for i, p in enumerate(engine.papers)}
    for lang in ("zh", "fr"):
        found = {"abstract": [], "title": [], "mean": [], "shipped": []}
        for r in rows:
            q = ml.encoder.encode([r[lang]])[0]
            a, t = ml.abstracts @ q, ml.titles @ q
            shipped = engine.rankers.multilingual_candidates(q).dense(engine.weights)
            for name, sc in (("abstract", a), ("title", t), ("mean", (a + t) / 2), ("shipped", shipped)):
                top = list(np.argsort(-sc)[:10])
                target = rows_of[r["paper"]]
                found[name].append(1 / (top.index(target) + 1) if target in top else 0.0)
        lines.append(f"| {lang} | " + " | ".join(f"{statistics.mean(found[n]):.3f}" for n in found) + " |")
        print(lines[-1], flush=True)
    lines += ["", "English development queries through the same index, with and without the multilingual space:", "",
              "| set | mode | MRR@10 with | MRR@10 without | identical top-10 lists | routed to multilingual |",
              "|---|---|---|---|---|---|"]
    for name in ("keywords", "unseen"):
        queries = {json.loads(x)["_id"]: json.loads(x)["text"] for x in (args.devsets / name / "queries.jsonl").open()}
        qrels = {}
        for line in (args.devsets / name / "qrels" / "test.tsv").read_text().splitlines()[1:]:
            q, d, _ = line.split("\t")
            qrels[q] = d
        qs = [(queries[q], d) for q, d in qrels.items()]
        for mode in MODES:
            with_ml = [[h.paper.id for h in engine.search(t, 10, mode, evidence=False).hits] for t, _ in qs]
            r_with = score(engine, qs, mode)
            engine.rankers.multilingual = None
            without = [[h.paper.id for h in engine.search(t, 10, mode, evidence=False).hits] for t, _ in qs]
            r_without = score(engine, qs, mode)
            engine.rankers.multilingual = ml
            same = sum(a == b for a, b in zip(with_ml, without)) / len(qs)
            lines.append(f"| {name} ({len(qs)}) | {mode} | {r_with['MRR@10']:.3f} | {r_without['MRR@10']:.3f} | "
                         f"{same:.1%} | {r_with['routed']:.1%} |")
            print(lines[-1], flush=True)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
