"""Core figures, each beside its floor, measured in one run on one machine.

    python benchmarks/bench_core.py [--corpus seeds] [--queries 200] [--out benchmarks/results/core.md]

- index build time against plain model.encode of the same texts
- a no-change rebuild against a full build
- search() p50/p99 over distinct queries against model.encode(query) + FAISS search alone
- the app: process start to first results drawn in headless Chromium, and a warm query
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


from report import SHARED, machine, pct, write_report


def load_queries(n: int) -> list[str]:
    """Real, distinct query texts: ICLR 2026 titles (no two alike, so no query cache hits)."""
    titles = [json.loads(line)["title"] for line in SHARED.open(encoding="utf-8")]
    return list(dict.fromkeys(titles))[:n]


def bench_app(index: Path, query: str) -> dict:
    """Cold start and warm query p50 in Chromium, measured as benchmarks/bench_page.py does."""
    from report import cold_start, warm

    cold = cold_start(index, query)
    times = warm(index, load_queries(230)[-10:])["fresh"]
    return {"cold_start_s": cold, "warm_query_p50_s": statistics.median(times)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", nargs="+", type=Path, default=[ROOT / "seeds"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "core.md")
    ap.add_argument("--no-app", action="store_true")
    args = ap.parse_args()

    import faiss
    import numpy as np

    from search.build import build_index
    from search.corpus import load_corpus
    from search.encoding.embed import load_model
    from search.engine import open_engine

    model = load_model()
    papers, _ = load_corpus(args.corpus)
    texts = [p.text for p in papers]
    model.encode(texts[:32], batch_size=32)  # warm-up: first call pays one-off allocations

    t = time.perf_counter()
    model.encode(texts, batch_size=32, normalize_embeddings=True)
    encode_s = time.perf_counter() - t

    work = Path(tempfile.mkdtemp(prefix="bench-"))
    out, cache = work / "index", work / "cache"
    full = build_index(args.corpus, out, model=model, cache_dir=cache)
    again = build_index(args.corpus, out, model=model, cache_dir=cache)

    engine = open_engine(out, model=model)
    queries = load_queries(args.queries)
    for q in queries[:5]:
        engine.search(q + " warm", 10)
    e2e, floor = [], []
    for q in queries:
        t = time.perf_counter()
        vec = model.encode([q], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        engine.data.vectors.search(np.asarray(vec, dtype=np.float32), 10)
        floor.append(time.perf_counter() - t)
        t = time.perf_counter()
        engine.search(q, 10)
        e2e.append(time.perf_counter() - t)
    app = {} if args.no_app else bench_app(out, "reasoning in language models")
    shutil.rmtree(work, ignore_errors=True)

    rows = [
        ("papers", f"{len(papers)}", ""),
        ("full build (read, embed abstracts and their sentences, write, publish)", f"{full.seconds:.2f} s",
         f"{full.seconds / encode_s:.2f}× plain model.encode of the abstracts ({encode_s:.2f} s)"),
        ("texts embedded in the build", f"{len(papers)} abstracts + {full.embedded_sentences} sentences",
         f"{(len(papers) + full.embedded_sentences) / (full.timings['abstracts'] + full.timings.get('sentences', 0.0)):.0f} texts/s"),
        ("no-change rebuild (cache hits only)", f"{again.seconds:.2f} s", f"{again.seconds / full.seconds:.3f}× the full build; {again.embedded} embedded"),
        (f"search() p50 over {len(queries)} distinct queries", f"{statistics.median(e2e) * 1e3:.2f} ms", f"{statistics.median(e2e) / statistics.median(floor):.2f}× encode+FAISS p50 ({statistics.median(floor) * 1e3:.2f} ms)"),
        ("search() p99", f"{pct(e2e, 99) * 1e3:.2f} ms", f"{pct(e2e, 99) / pct(floor, 99):.2f}× encode+FAISS p99 ({pct(floor, 99) * 1e3:.2f} ms)"),
    ]
    if app:
        rows += [("app: process start to first results in Chromium", f"{app['cold_start_s']:.2f} s", ""),
                 ("app: warm query, Search clicked to results drawn (p50 of 10 distinct queries)", f"{app['warm_query_p50_s'] * 1e3:.0f} ms", "")]
    lines = [f"Machine: {machine()}; faiss {faiss.__version__}",
             f"Command: python benchmarks/bench_core.py {' '.join(sys.argv[1:])}".rstrip(), "",
             "| measure | value | against its floor |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
