"""Build and query figures from 66 papers to a million, each beside its floor, in one run.

    python benchmarks/bench_scale.py [--sizes 66 4302 100000 1000000] [--reuse N ...] [--out benchmarks/results/scale.md]

Corpora: 66 = the shipped seeds; 4,302 = ../shared/data/iclr2026_papers.jsonl; both embedded for real
(cold cache, "why this result" sentences, topics and map included: the build a user runs). Above
4,302 the records are the real ones cycled (id and one closing sentence made unique, so each record
has a realistic size and its own cache key) and the vectors are synthetic: for paper i, with real
vector a of its source paper and b of one of that paper's 20 nearest neighbours, normalise
a + u·(b - a) + e, u ~ U(0, 0.5), e ~ N(0, 0.03²) per dimension, seed 0. Those vectors are put in
the embedding cache first, so the build runs its real code with every embedding a cache hit:
its time is everything but embedding, and the time to embed N abstracts is projected from
model.encode's rate on a sample. Synthetic builds skip sentences, topics and the map.

Each size builds in one child process and is queried in another, so RSS is that of serving alone.
Query latency: 200 distinct development queries (python benchmarks/make_devsets.py --seed 0),
split into encode (the index's query encoder), FAISS search and record fetch (search() minus
those two), against floors: torch model.encode of the query, and a NumPy product of the query with
the same float32 vectors plus a top-10 partition.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from report import SHARED, keyword_queries as queries, machine, pct, today, write_report

SAMPLE = 512   # abstracts for model.encode's rate


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_synthetic(records: list[dict], n: int, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            r = dict(records[i % len(records)])
            r["source_id"] = r["id"]
            r["id"] = f"{r['id']}-{i}"
            r["abstract"] = f"{r['abstract']} (Synthetic record {i}.)"
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def synthetic_vectors(real, n_of, source_rows, seed: int = 0):
    """Real vectors moved part of the way to a near neighbour, plus noise, renormalised."""
    import numpy as np

    rng = np.random.default_rng(seed)
    near = np.empty((len(real), 20), dtype=np.int64)
    for start in range(0, len(real), 1024):
        sims = real[start:start + 1024] @ real.T
        near[start:start + 1024] = np.argsort(-sims, axis=1)[:, 1:21]
    out = np.empty((n_of, real.shape[1]), dtype=np.float32)
    for start in range(0, n_of, 100_000):
        rows = source_rows[start:start + 100_000]
        m = len(rows)
        other = near[rows, rng.integers(0, 20, m)]
        u = rng.uniform(0, 0.5, (m, 1)).astype(np.float32)
        x = real[rows] + u * (real[other] - real[rows]) + rng.normal(0, 0.03, (m, real.shape[1])).astype(np.float32)
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


# ---------------------------------------------------------------- children

def phase_build(n: int, work: Path) -> dict:
    from search.build import build_index
    from search.corpus import load_corpus
    from search.encoding.embed import EmbeddingCache, load_model, model_fingerprint, vectors_fingerprint
    from search.index import load_index
    from search.text import text_hash

    model = load_model()
    out, cache = work / f"index-{n}", work / f"cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    real_papers, _ = load_corpus([SHARED])
    sample = [p.text for p in real_papers[:SAMPLE]]
    model.encode(sample[:32], batch_size=32)
    t = time.perf_counter()
    model.encode(sample, batch_size=32, normalize_embeddings=True)
    floor_rate = len(sample) / (time.perf_counter() - t)
    result = {"n": n, "floor_abstracts_per_s": floor_rate}
    if n == 66:
        inputs, kw = [ROOT / "seeds"], {}
    elif n <= 4302:
        inputs, kw = [SHARED], {}
    else:
        import numpy as np

        real = load_index(work / "index-4302")
        real_vectors = real.vectors.reconstruct_n(0, real.vectors.ntotal)
        row_of = {p.id: i for i, p in enumerate(real.papers)}
        records = [json.loads(line) for line in SHARED.open(encoding="utf-8")]
        path = work / f"synthetic-{n}.jsonl"
        write_synthetic(records, n, path)
        t = time.perf_counter()
        papers, _ = load_corpus([path])
        result["read_for_cache_s"] = time.perf_counter() - t
        source = np.array([row_of[p.id.rsplit("-", 1)[0]] for p in papers])
        vectors = synthetic_vectors(real_vectors, len(papers), source)
        # the cache keys vectors by weights and backend: these are torch's, and the build is told so
        key = vectors_fingerprint(model_fingerprint(model), "torch")
        EmbeddingCache(cache, key).add([text_hash(p.text) for p in papers], vectors)
        del papers, vectors, real, real_vectors
        inputs, kw = [path], {"sentences": False, "explore": False, "backend": "torch"}
    report = build_index(inputs, out, model=model, cache_dir=cache, **kw)
    manifest = json.loads((out / "manifest.json").read_text())
    result.update(count=report.count, embedded=report.embedded, embedded_sentences=report.embedded_sentences,
                  build_s=report.seconds, stages=manifest["stage_seconds"], index=manifest["index"],
                  disk_bytes=sum(f["bytes"] for f in manifest["files"].values()),
                  index_bytes=manifest["files"]["vectors.faiss"]["bytes"], build_peak_mb=peak_mb())
    return result


def phase_query(n: int, work: Path, n_queries: int) -> dict:
    import numpy as np

    before = rss_mb()
    t = time.perf_counter()
    from search.engine import open_engine

    engine = open_engine(work / f"index-{n}")
    load_s = time.perf_counter() - t
    after = rss_mb()
    from search.encoding.embed import load_model

    model = load_model()  # the floor for a query's encode; loaded after RSS was read
    flat = engine.data.vectors.reconstruct_n(0, engine.data.vectors.ntotal) if engine.rankers.exact else \
        engine.vectors.astype(np.float32)
    qs = queries(n_queries)
    for q in qs[:5]:
        engine.search(q + " warm", 10)
        model.encode([q + " warm"])
    t_sem, t_hyb, t_enc, t_faiss, t_torch, t_numpy, t_repeat = ([] for _ in range(7))
    for q in qs:
        engine.clear_cache()
        t = time.perf_counter()
        engine.search(q, 10, mode="semantic")
        t_sem.append(time.perf_counter() - t)
        t = time.perf_counter()
        engine.search(q, 10, mode="semantic")
        t_repeat.append(time.perf_counter() - t)
        engine.clear_cache()
        t = time.perf_counter()
        engine.search(q, 10)
        t_hyb.append(time.perf_counter() - t)
        engine.clear_cache()
        t = time.perf_counter()
        vec, _ = engine.encode_query(q)
        t_enc.append(time.perf_counter() - t)
        t = time.perf_counter()
        engine.rankers.dense(vec, 10, None)  # FAISS search as the engine calls it
        t_faiss.append(time.perf_counter() - t)
    for q in qs:  # the floors, each alone, as they would run
        t = time.perf_counter()
        model.encode([q], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        t_torch.append(time.perf_counter() - t)
    for q in qs:
        vec, _ = engine.encode_query(q)
        t = time.perf_counter()
        s = flat @ vec.ravel()
        top = np.argpartition(-s, 10)[:10]
        top[np.argsort(-s[top])]
        t_numpy.append(time.perf_counter() - t)
    recall = None
    if not engine.rankers.exact:  # the approximate index against exact search over the same vectors
        import faiss

        exact = faiss.IndexFlatIP(flat.shape[1])
        exact.add(flat)
        vecs = np.vstack([engine.encode_query(q)[0] for q in qs])
        truth = exact.search(vecs, 10)[1]
        found = engine.data.vectors.search(vecs, 10)[1]
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)]))

    def p(values):
        return {"p50_ms": statistics.median(values) * 1e3, "p99_ms": pct(values, 99) * 1e3}

    fetch = [s - e - f for s, e, f in zip(t_sem, t_enc, t_faiss)]
    return {"n": n, "queries": len(qs), "load_s": load_s, "rss_before_mb": before, "rss_after_load_mb": after,
            "semantic": p(t_sem), "hybrid": p(t_hyb), "repeat": p(t_repeat), "encode": p(t_enc),
            "faiss": p(t_faiss), "fetch": p(fetch), "torch_encode": p(t_torch), "numpy": p(t_numpy),
            "recall_at_10": recall}


# ---------------------------------------------------------------- parent

def child(phase: str, n: int, work: Path, n_queries: int) -> dict:
    r = subprocess.run([sys.executable, __file__, "--phase", phase, "--n", str(n), "--work", str(work),
                        "--queries", str(n_queries)], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{phase} {n} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def table(builds: list[dict], runs: list[dict]) -> list[str]:
    lines = ["### Build", "",
             "| N | index | build | abstracts/s | embedding (projected above 4,302) | not embedding | "
             "model.encode floor | disk | index file | build peak RSS |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for b in builds:
        st = b["stages"]
        # "embed" in records before the staged build, "abstracts" + "sentences" after
        embedding = ("embed", "abstracts", "sentences", "multilingual")
        rest = sum(v for k, v in st.items() if k not in (*embedding, "model"))
        if b["embedded"]:
            embed = sum(st.get(k, 0.0) for k in embedding)
            share = f"{rest:.1f} s = {100 * rest / b['build_s']:.1f}% of the build"
            build = f"{b['build_s']:.1f} s"
            rate = f"{b['count'] / b['build_s']:.1f}"
            embed_txt = f"{embed:.1f} s ({b['embedded']} abstracts + {b['embedded_sentences']} sentences)"
        else:
            embed = b["count"] / b["floor_abstracts_per_s"]
            total = embed + b["build_s"]
            share = f"{b['build_s']:.1f} s measured = {100 * b['build_s'] / total:.1f}% of {total / 60:.0f} min"
            build = f"{total / 3600:.1f} h projected"
            rate = f"{b['count'] / total:.1f}"
            embed_txt = f"{embed / 3600:.1f} h (abstracts only)"
        lines.append(f"| {b['count']:,} | {b['index']['factory']} | {build} | {rate} | {embed_txt} | {share} | "
                     f"{b['floor_abstracts_per_s']:.1f} abstracts/s | {b['disk_bytes'] / 1e6:,.0f} MB | "
                     f"{b['index_bytes'] / 1e6:,.0f} MB | {b['build_peak_mb']:,.0f} MB |")
    lines += ["", "Stage seconds: " + "; ".join(
        f"{b['count']:,}: " + ", ".join(f"{k} {v:.1f}" for k, v in b["stages"].items()) for b in builds), "",
        "### Query (p50 / p99 in ms)", "",
        "| N | search() semantic | hybrid (default) | repeated query | encode | FAISS | fetch | "
        "semantic ÷ (encode + FAISS) | floor: torch encode | floor: NumPy product | recall@10 vs exact | "
        "load | RSS serving |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        def f(key):
            return f"{r[key]['p50_ms']:.2f} / {r[key]['p99_ms']:.2f}"
        ratio = r["semantic"]["p50_ms"] / (r["encode"]["p50_ms"] + r["faiss"]["p50_ms"])
        recall = "exact" if r["recall_at_10"] is None else f"{r['recall_at_10']:.4f}"
        lines.append(f"| {r['n']:,} | {f('semantic')} | {f('hybrid')} | {f('repeat')} | {f('encode')} | "
                     f"{f('faiss')} | {f('fetch')} | {ratio:.2f}× | {f('torch_encode')} | {f('numpy')} | "
                     f"{recall} | {r['load_s']:.1f} s | {r['rss_after_load_mb']:,.0f} MB "
                     f"(from {r['rss_before_mb']:,.0f}) |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", type=int, default=[66, 4302, 100_000, 1_000_000])
    ap.add_argument("--work", type=Path, default=ROOT / "bench-out" / "scale")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "scale.md")
    ap.add_argument("--reuse", nargs="*", type=int, default=[],
                    help="sizes whose results to take from an earlier run's result-N.json in --work")
    ap.add_argument("--phase", choices=["build", "query"])
    ap.add_argument("--n", type=int)
    args = ap.parse_args()
    if args.phase:
        fn = phase_build(args.n, args.work) if args.phase == "build" else \
            phase_query(args.n, args.work, args.queries)
        print(json.dumps(fn))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    builds, runs = [], []
    for n in args.sizes:
        saved = args.work / f"result-{n}.json"
        if n in args.reuse:
            kept = json.loads(saved.read_text())
            builds.append(kept["build"])
            runs.append(kept["query"])
            continue
        builds.append(child("build", n, args.work, args.queries))
        runs.append(child("query", n, args.work, args.queries))
        saved.write_text(json.dumps({"build": builds[-1], "query": runs[-1]}))
        print(f"done {n}", file=sys.stderr, flush=True)
        shutil.rmtree(args.work / f"cache-{n}", ignore_errors=True)
    import faiss

    lines = [f"Machine: {machine()}; faiss {faiss.__version__} · {today()}",
             f"Command: python benchmarks/bench_scale.py {' '.join(sys.argv[1:])}".rstrip(), ""]
    if args.reuse:
        lines += [f"Sizes {', '.join(f'{n:,}' for n in args.reuse)}: results of an earlier run of this script "
                  f"(kept in {args.work}/result-N.json), same code for what they measure.", ""]
    write_report(lines + table(builds, runs), args.out)


if __name__ == "__main__":
    main()
