"""What the reviews cost an index: build time, disk, memory and cold start, with them and without.

    python benchmarks/bench_reviews.py --records FILE.jsonl [--report benchmarks/results/reviews.md]

FILE is what `python -m search fetch` writes for a whole venue (every submission with its reviews). Two
indexes are built from it in their own processes with the same embedding cache (so both measure the
build beside the embedding, which is the same for both; run once without a cache to fill it): the records
as fetched, and the same records with the reviews' texts removed (decisions and mean scores kept: the index
as it was before reviews). Then, in a fresh process each (median of --runs): the engine's cold load, its
resident memory, a first query; a paper's reviews read on demand; search within reviews, first (loading
its BM25) and warm. Both built with --no-multilingual, which is the same for both.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import machine, write_report

REVIEW_FIELDS = ("reviews", "meta_review", "decision_text")
REVIEW_FILES = ("reviews.jsonl", "reviews_offsets.npy", "review_fields.npy", "review_bm25/", "summaries.npy",
                "summary_offsets.npy")
REVIEW_QUERIES = ["missing ablation on the tokenizer", "reviewers asked for a comparison with DPO",
                  "the proof of theorem 2 is wrong", "no code released, reproducibility concerns",
                  "experiments only on small datasets", "limited novelty over prior work",
                  "comparison to diffusion baselines is missing", "hyperparameter sensitivity not studied",
                  "unclear writing and notation", "scalability to larger models"]

PROBE = r"""
import json, resource, sys, time, statistics
t = time.perf_counter()
from search.engine import open_engine
from search.filters import Filters
engine = open_engine(sys.argv[1])
load = time.perf_counter() - t
t = time.perf_counter()
engine.search("graph neural networks for molecules", 10, filters=Filters(decisions=("accepted",)))
first = time.perf_counter() - t
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {"load_s": load, "first_query_s": first, "rss_mib": rss_loaded}
if engine.reviews:
    ids = [p.id for p in engine.papers[::997]]
    times = []
    for pid in ids:
        t = time.perf_counter(); engine.review_record(pid); times.append(time.perf_counter() - t)
    out["review_record_ms"] = statistics.median(times) * 1000
    queries = json.loads(sys.argv[2])
    t = time.perf_counter(); engine.search_reviews(queries[0], 10); out["review_search_first_s"] = time.perf_counter() - t
    times = []
    for q in queries[1:]:
        t = time.perf_counter(); engine.search_reviews(q, 10); times.append(time.perf_counter() - t)
    out["review_search_ms"] = statistics.median(times) * 1000
    out["rss_after_review_search_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def build(records: Path, out: Path, cache: Path) -> dict:
    """One `python index_build.py` in its own process: seconds, its peak RSS, the manifest's stage times."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "index_build.py", str(records), "--out", str(out), "--cache", str(cache),
                             "--no-multilingual"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"build of {records} failed: {proc.stderr.read()[-2000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    return {"seconds": time.perf_counter() - t, "peak_mib": usage.ru_maxrss / 1024,
            "stages": manifest["stage_seconds"], "files": manifest["files"], "reviews": manifest.get("reviews")}


def probe(index: Path, runs: int) -> dict:
    results = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", PROBE, str(index), json.dumps(REVIEW_QUERIES)], cwd=ROOT,
                           capture_output=True, text=True, check=True)
        results.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(r[k] for r in results) for k in results[0]}


def mib(files: dict, only=None) -> float:
    return sum(m["bytes"] for n, m in files.items() if only is None or n.startswith(only)) / 2**20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=ROOT / ".embedding_cache")
    ap.add_argument("--work", type=Path, default=None, help="where to build (default: a temporary folder)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--report", type=Path, default=ROOT / "benchmarks" / "results" / "reviews.md")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-reviews-"))
    work.mkdir(parents=True, exist_ok=True)
    bare = work / "without_reviews.jsonl"
    with open(args.records, encoding="utf-8") as src, open(bare, "w", encoding="utf-8") as dst:
        for line in src:
            rec = json.loads(line)
            for name in REVIEW_FIELDS:
                rec.pop(name, None)
            dst.write(json.dumps(rec, ensure_ascii=False) + "\n")
    arms = {}
    for name, records in (("without reviews", bare), ("with reviews", args.records)):
        b = build(records, work / name.replace(" ", "_"), args.cache)
        p = probe(work / name.replace(" ", "_"), args.runs)
        arms[name] = (b, p)
        print(name, json.dumps({**{k: v for k, v in b.items() if k != "files"}, **p}), flush=True)
    (b0, p0), (b1, p1) = arms["without reviews"], arms["with reviews"]
    review_mib = sum(mib(b1["files"], f) for f in REVIEW_FILES)
    rows = [("build, wall (embedding from the cache)", f"{b0['seconds']:.1f} s", f"{b1['seconds']:.1f} s",
             f"{b1['seconds'] / b0['seconds']:.2f}×"),
            ("of which the reviews' part (reviews.jsonl, offsets, BM25 over their fields)", "–",
             f"{b1['stages'].get('review search', b1['stages'].get('reviews', 0)):.1f} s", ""),
            ("of which the reviewers' summaries (their vectors from the cache)", "–",
             f"{b1['stages'].get('summaries', 0):.1f} s", ""),
            ("build's peak RSS", f"{b0['peak_mib']:.0f} MiB", f"{b1['peak_mib']:.0f} MiB",
             f"{b1['peak_mib'] / b0['peak_mib']:.2f}×"),
            ("index on disk", f"{mib(b0['files']):.0f} MiB", f"{mib(b1['files']):.0f} MiB",
             f"{mib(b1['files']) / mib(b0['files']):.2f}×"),
            ("of which the reviews' part", "–", f"{review_mib:.0f} MiB (BM25: {mib(b1['files'], 'review_'):.0f} MiB, "
             f"the summaries' vectors: {mib(b1['files'], 'summar'):.0f} MiB)", ""),
            ("papers.jsonl (read whole at every start)", f"{mib(b0['files'], 'papers.jsonl'):.1f} MiB",
             f"{mib(b1['files'], 'papers.jsonl'):.1f} MiB", ""),
            (f"cold load of the engine, fresh process (median of {args.runs})", f"{p0['load_s']:.2f} s",
             f"{p1['load_s']:.2f} s", f"{p1['load_s'] / p0['load_s']:.2f}×"),
            ("first query after the load", f"{p0['first_query_s'] * 1000:.0f} ms", f"{p1['first_query_s'] * 1000:.0f} ms", ""),
            ("resident memory after load and query (peak RSS)", f"{p0['rss_mib']:.0f} MiB", f"{p1['rss_mib']:.0f} MiB",
             f"{p1['rss_mib'] / p0['rss_mib']:.2f}×"),
            ("a paper's reviews, read on demand (median)", "–", f"{p1['review_record_ms']:.2f} ms", ""),
            ("search within reviews: first query (maps its BM25)", "–", f"{p1['review_search_first_s'] * 1000:.0f} ms", ""),
            (f"search within reviews: warm (median of {len(REVIEW_QUERIES) - 1} queries)", "–",
             f"{p1['review_search_ms']:.0f} ms", ""),
            ("peak RSS after searching the reviews", "–", f"{p1['rss_after_review_search_mib']:.0f} MiB",
             f"{p1['rss_after_review_search_mib'] / p0['rss_mib']:.2f}× the index without reviews")]
    r = b1["reviews"]
    lines = ["# The reviews' cost to an index", "",
             f"`python benchmarks/bench_reviews.py --records {args.records}` · {machine()} · {time.strftime('%Y-%m-%d')}",
             "", f"{r['papers']:,} papers with {r['reviews']:,} reviews; {r['fields']:,} review "
             "text fields searched. Both indexes built with --no-multilingual from the same embedding cache.", "",
             "| measure | without reviews | with reviews | ratio |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    lines += ["", "Stage seconds, without: " + json.dumps(b0["stages"]), "",
              "Stage seconds, with: " + json.dumps(b1["stages"])]
    write_report(lines, args.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
