""""Papers like these" from one uploaded abstract: the query path (the text ranked as a pasted query, hybrid) against
the per-list SVM trained on that one text (what an upload of one abstract went through before), real model.

An index of the first --papers papers of ../shared/data/iclr2026_papers.jsonl (title + abstract); the next
--uploads papers' abstracts, never indexed, are uploaded one at a time. For each: precision@10 by primary area
(the share of the ten answers in the upload's area, as bench_like.py) and by keyword (answers sharing one of
the upload's authors' keywords). Writes results/like_one.md.

    python benchmarks/bench_like_one.py [--papers 1000] [--uploads 100]
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from report import SHARED, machine, today, write_report

ROOT = Path(__file__).resolve().parent.parent


def svm_one(engine, text: str, k: int) -> list:
    """The per-list SVM with the one text as its positive: the list of several texts' path."""
    from search.rankers import top_rows

    extra = engine.model.encode([text])
    scores = engine.rankers.svm_scores([], extra)
    return [engine.papers[r] for r in top_rows(scores, k).tolist()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--uploads", type=int, default=100)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "like_one.md")
    args = ap.parse_args()

    from search.build import build_index
    from search.encoding.embed import load_model
    from search.engine import Engine
    from search.index import load_index

    rows = [json.loads(line) for line in SHARED.open(encoding="utf-8")]
    indexed, uploads = rows[:args.papers], rows[args.papers:args.papers + args.uploads]
    model = load_model()
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "papers.jsonl"
        records.write_text("".join(json.dumps(r) + "\n" for r in indexed), encoding="utf-8")
        t0 = time.perf_counter()
        build_index([records], Path(tmp) / "index", model=model, cache_dir=ROOT / ".embedding_cache", explore=False,
                    sentences=False, summaries=False, review_search=False)
        built = time.perf_counter() - t0
        engine = Engine(load_index(Path(tmp) / "index"), model)
        figures: dict[str, dict[str, list[float]]] = {"query path (shipped)": {"area": [], "keyword": []},
                                                      "SVM on the one text (before)": {"area": [], "keyword": []}}
        for u in uploads:
            keywords = {k.lower() for k in u.get("keywords") or []}
            for name, papers in (("query path (shipped)", [h.paper for h in engine.like_texts([u["abstract"]], 10).hits]),
                                 ("SVM on the one text (before)", svm_one(engine, u["abstract"], 10))):
                figures[name]["area"].append(np.mean([p.primary_area == u["primary_area"] for p in papers]))
                figures[name]["keyword"].append(np.mean([bool(keywords & {k.lower() for k in p.keywords})
                                                         for p in papers]))
    lines = [f"# Papers like one uploaded abstract", "",
             f"Machine: {machine()} · {today()}",
             f"Command: `python benchmarks/bench_like_one.py --papers {args.papers} --uploads {args.uploads}`", "",
             f"An index of the first {len(indexed):,} papers of ../shared/data/iclr2026_papers.jsonl (built in "
             f"{built:.0f} s, real model); the abstracts of the next {len(uploads)}, never indexed, uploaded one at a "
             "time. precision@10: the share of the ten answers in the upload's primary area, or sharing one of its "
             "authors' keywords.", "",
             "| method | precision@10 (area) | precision@10 (keyword) |", "| --- | --- | --- |"]
    for name, f in figures.items():
        lines.append(f"| {name} | {statistics.mean(f['area']):.3f} | {statistics.mean(f['keyword']):.3f} |")
    print("\n".join(lines))
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
