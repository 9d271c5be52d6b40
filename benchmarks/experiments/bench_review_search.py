"""Search within reviews: is BM25 (shipped) the right method, or would meaning help? A small judged set.

    python benchmarks/experiments/bench_review_search.py --index DIR [--pool]

DIR is an index of a whole venue with its reviews. The queries (benchmarks/data/review_queries.json) are
what a researcher types to find papers by what their reviewers said, written before any result was seen.
Three arms rank the same candidates, BM25's 50 best review fields per query (one per paper, as the page
shows them):
- BM25 over every review field (shipped: `Engine.search_reviews`);
- MiniLM's cosine between the query and each candidate's matching paragraph (the query encoder the
  index ships), a re-ranking of BM25's candidates: dense retrieval over all 307,248 fields would need them
  embedded first, some 100 minutes of build at 48 texts/s;
- the two fused by reciprocal rank (k = 60).
`--pool` prints each arm's 5 best for judging; the judgments (paper id and reviewer of each passage that
says what the query asks, and of each judged one) are kept in the same file. Precision@5 counts an unjudged
passage as not relevant, and the record says how many there were.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import machine, write_report

QUERIES = ROOT / "benchmarks" / "data" / "review_queries.json"
POOL, TOP, RRF_K = 50, 5, 60


def arms(engine, query: str) -> dict[str, list[tuple[str, str, str]]]:
    """Each arm's ranking of BM25's candidates as (paper id, reviewer, paragraph)."""
    hits = engine.search_reviews(query, k=POOL).hits
    cands = [(h.paper.id, h.passage.reviewer, h.passage.text) for h in hits]
    if not cands:
        return {"BM25": [], "MiniLM re-ranking": [], "reciprocal rank fusion": []}
    q = engine.model.encode([query])[0]
    cos = engine.model.encode([c[2] for c in cands]) @ q
    dense = list(np.argsort(-cos, kind="stable"))
    rank_dense = {i: r for r, i in enumerate(dense)}
    fused = sorted(range(len(cands)), key=lambda i: -(1 / (RRF_K + i) + 1 / (RRF_K + rank_dense[i])))
    return {"BM25": cands, "MiniLM re-ranking": [cands[i] for i in dense],
            "reciprocal rank fusion": [cands[i] for i in fused]}


def main() -> int:
    from search.engine import open_engine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--pool", action="store_true", help="print the passages to judge")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "experiments" / "results" / "review_search.md")
    args = ap.parse_args()
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))
    engine = open_engine(args.index)
    arms(engine, "warm up the encoder and the BM25")
    ranked, bm25_s, all_s = {}, [], []
    for q in queries:
        t = time.perf_counter()
        engine.search_reviews(q["query"], k=POOL)
        bm25_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        ranked[q["query"]] = arms(engine, q["query"])
        all_s.append(time.perf_counter() - t)
    if args.pool:
        for q in queries:
            seen = set()
            print(f"\n### {q['query']}")
            for arm, hits in ranked[q["query"]].items():
                for pid, reviewer, text in hits[:TOP]:
                    if (pid, reviewer) not in seen:
                        seen.add((pid, reviewer))
                        print(f"- [{pid}, {reviewer}] {' '.join(text.split())[:420]}")
        return 0
    lines = ["# Search within reviews: BM25 against MiniLM re-ranking, on a small judged set", "",
             f"`python benchmarks/experiments/bench_review_search.py --index DIR` · {machine()} · "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"{len(queries)} queries (benchmarks/data/review_queries.json), {len(engine.papers):,} papers. "
             f"Each arm ranks BM25's {POOL} best review fields (one per paper); precision@{TOP} by the judgments, "
             "an unjudged passage counted as not relevant. The queries were written before any result was seen; "
             f"the {sum(len(q['judged']) for q in queries)} passages of the arms' pooled top {TOP}s were judged "
             "together, without their arm shown (relevant: the passage says what the query asks, as a reviewer's "
             "criticism or request, not a summary or a strength). A small set: one passage is "
             f"{1 / (TOP * len(queries)):.3f} of precision.", "",
             f"| arm | precision@{TOP} (mean) | queries with a relevant passage first | unjudged in the top {TOP} |",
             "|---|---|---|---|"]
    for arm in ("BM25", "MiniLM re-ranking", "reciprocal rank fusion"):
        precision, first, unjudged = [], 0, 0
        for q in queries:
            relevant = {tuple(x) for x in q["relevant"]}
            judged = {tuple(x) for x in q["judged"]} | relevant
            top = [(pid, reviewer) for pid, reviewer, _ in ranked[q["query"]][arm][:TOP]]
            precision.append(sum(t in relevant for t in top) / TOP)
            first += bool(top) and top[0] in relevant
            unjudged += sum(t not in judged for t in top)
        lines.append(f"| {arm} | {statistics.fmean(precision):.3f} | {first} of {len(queries)} | {unjudged} |")
    lines += ["", f"Time a query (median): BM25's {POOL} best {statistics.median(bm25_s) * 1e3:.0f} ms; with the "
              f"MiniLM re-ranking (encoding the {POOL} paragraphs) {statistics.median(all_s) * 1e3:.0f} ms."]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
