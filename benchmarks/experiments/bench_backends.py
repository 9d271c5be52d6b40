"""Query encoders side by side: torch (sentence-transformers) against ONNX exports in onnxruntime and OpenVINO.

    python benchmarks/experiments/bench_backends.py --index DIR [--devsets .devsets] [--out benchmarks/experiments/results/backends.md]

DIR is an index built by torch (index_build.py seeds ../shared/data/iclr2026_papers.jsonl). For each
backend: load time, one short query's encode p50/p99 (distinct author-keyword strings, so nothing is
cached), abstracts/s at batch 32, and recall@10 of its FAISS top 10 against torch's top 10 over the
development queries (python benchmarks/make_devsets.py --seed 0 --out .devsets).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import machine, pct, write_report


def dev_queries(devsets: Path) -> list[str]:
    out = []
    for name in ("keywords", "unseen", "titles"):
        out += [json.loads(line)["text"] for line in (devsets / name / "queries.jsonl").open(encoding="utf-8")]
    return list(dict.fromkeys(out))


def time_queries(encode, queries: list[str]) -> list[float]:
    for q in queries[:10]:
        encode([q + " warm"])
    times = []
    for q in queries:
        t = time.perf_counter()
        encode([q])
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--short", type=int, default=300, help="short queries to time")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "experiments" / "results" / "backends.md")
    args = ap.parse_args()

    import faiss
    import numpy as np

    from search.encoding.embed import load_model, resolve_model, DEFAULT_MODEL
    from search.index import load_index
    from search.encoding.query_encoder import TOKENIZER, OnnxEncoder, export

    data = load_index(args.index)
    queries = dev_queries(args.devsets)
    short = [q for q in queries if len(q.split()) <= 8][:args.short]
    abstracts = [p.text for p in data.papers[:256]]
    tok_path = Path(resolve_model(DEFAULT_MODEL)) / TOKENIZER
    fingerprint = data.manifest.model.fingerprint

    t = time.perf_counter()
    model = load_model()
    backends = {"torch (sentence-transformers)": (time.perf_counter() - t,
                lambda texts, bs=32: model.encode(texts, batch_size=bs, normalize_embeddings=True,
                                                  convert_to_numpy=True, show_progress_bar=False))}
    work = Path(tempfile.mkdtemp(prefix="backends-"))
    files = {"fp32": export(model, work / "fp32.onnx"), "int8": export(model, work / "int8.onnx", quantize=True)}
    notes = {}
    for runtime in ("onnxruntime", "openvino"):
        for weights, path in files.items():
            name = f"{runtime} {weights}"
            try:
                t = time.perf_counter()
                enc = OnnxEncoder(path, tok_path, int(model.max_seq_length), fingerprint, runtime)
                backends[name] = (time.perf_counter() - t, lambda texts, bs=32, e=enc: e.encode(texts, bs))
            except Exception as e:  # a runtime that cannot run an export is reported, not fatal
                notes[name] = f"{e.__class__.__name__}: {str(e).splitlines()[0][:160]}"

    truth = data.vectors.search(backends["torch (sentence-transformers)"][1](queries, 64), 10)[1]
    rows = []
    for name, (load_s, enc) in backends.items():
        times = time_queries(enc, short)
        vecs = enc(queries, 64)
        found = data.vectors.search(np.ascontiguousarray(vecs, dtype=np.float32), 10)[1]
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)]))
        enc(abstracts[:32])
        t = time.perf_counter()
        enc(abstracts, 32)
        rate = len(abstracts) / (time.perf_counter() - t)
        rows.append((name, load_s, statistics.median(times), pct(times, 99), rate, recall))
    torch_p50 = rows[0][2]
    lines = [f"Machine: {machine()}; faiss {faiss.__version__}",
             f"Command: python benchmarks/experiments/bench_backends.py {' '.join(sys.argv[1:])}", "",
             f"Short queries: {len(short)} distinct author-keyword strings of at most 8 words, one per call. "
             f"Recall@10 against torch's FAISS top 10 over {len(queries)} development queries on "
             f"{data.vectors.ntotal} papers. Abstracts/s: the first {len(abstracts)} abstracts, batch 32.", "",
             "| backend | load s | short query p50 | p99 | vs torch p50 | abstracts/s | recall@10 vs torch |",
             "|---|---|---|---|---|---|---|"]
    for name, load_s, p50, p99, rate, recall in rows:
        lines.append(f"| {name} | {load_s:.2f} | {p50 * 1e3:.2f} ms | {p99 * 1e3:.2f} ms | "
                     f"{p50 / torch_p50:.2f}× | {rate:.1f} | {recall:.4f} |")
    for name, why in notes.items():
        lines.append(f"| {name} | failed: {why} | | | | | |")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
