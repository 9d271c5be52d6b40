"""The abstracts' embedding on this CPU: backends, precisions, threads, batch sizes and length bucketing, one run.

    python benchmarks/bench_embed_cpu.py [--sample 2000] [--rounds 3] [--per-round 256] [--record embed_cpu_avx2.md]

A fixed sample of the venue's texts (title. abstract, cleaned as the build cleans them) is drawn with seed 0
while reading ../shared/data/iclr2026_openreview.jsonl.gz as a stream. Every arm embeds the same slices of it:
the arms take turns, one slice each per round (so a change in the shared machine's load falls on all of them
alike), and each arm's figure is the median over the rounds of its abstracts/s. Each arm's vectors are compared
with the build's f32 vectors of the same texts (OpenVINO f32, the first arm): the least and mean cosine.
The record names the CPU, its vector instructions and the load average before and after.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from report import machine, today, write_report  # noqa: E402

VENUE = ROOT.parent / "shared" / "data" / "iclr2026_openreview.jsonl.gz"


def sample_texts(path: Path, n: int, seed: int = 0) -> tuple[list[str], int]:
    """n texts drawn uniformly (reservoir sampling, seeded) from the venue's notes, read as a stream."""
    from search.text import clean_for_model

    rng, kept, seen = random.Random(seed), [], 0
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            content = json.loads(line).get("content") or {}
            title = (content.get("title") or {}).get("value") or ""
            abstract = (content.get("abstract") or {}).get("value") or ""
            text = clean_for_model(f"{title}. {abstract}" if title else abstract)
            if not text:
                continue
            seen += 1
            if len(kept) < n:
                kept.append(text)
            else:
                j = rng.randrange(seen)
                if j < n:
                    kept[j] = text
    return kept, seen


class AsyncOpenVINO:
    """OpenVINO's throughput mode: several infer requests in flight (streams), batches handed out as each ends."""

    def __init__(self, onnx: Path, tokenizer: Path, max_tokens: int, precision: str | None = None):
        import openvino as ov

        from search.encoding.query_encoder import OnnxEncoder

        self._feeder = OnnxEncoder.__new__(OnnxEncoder)
        from search.encoding.query_encoder import load_tokenizer

        self._feeder._tok = load_tokenizer(tokenizer, max_tokens)
        config = {"PERFORMANCE_HINT": "THROUGHPUT"}
        if precision:
            config["INFERENCE_PRECISION_HINT"] = precision
        self.compiled = ov.Core().compile_model(str(onnx), "CPU", config)
        self.streams = self.compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
        self.queue = ov.AsyncInferQueue(self.compiled, self.streams)
        self.out: dict[int, np.ndarray] = {}
        self.queue.set_callback(lambda req, i: self.out.__setitem__(i, req.get_output_tensor(0).data.copy()))

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        self.out = {}
        for i, feed in enumerate(self._feeder.feeds(texts, batch_size)):
            self.queue.start_async(feed, i)
        self.queue.wait_all()
        return np.concatenate([self.out[i] for i in range(len(self.out))]).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=VENUE)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-round", type=int, default=256, help="texts each arm embeds a round (a slice of the sample)")
    ap.add_argument("--arms", default="", help="arm names (their beginnings) separated by | (default: all)")
    ap.add_argument("--record", default="embed_cpu.md")
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_before = os.getloadavg()

    import torch

    from search.encoding import query_encoder as qe
    from search.encoding.embed import TorchEncoder, cpu_description, load_model, model_fingerprint

    t = time.perf_counter()
    texts, venue_size = sample_texts(args.data, args.sample)
    read_s = time.perf_counter() - t
    model = load_model()
    fp = model_fingerprint(model)
    work = Path(tempfile.mkdtemp(prefix="embed-cpu-"))
    f32 = qe.exported(model, fp, work, quantize=False)
    int8 = qe.exported(model, fp, work, quantize=True)
    tok = f32.parent / qe.TOKENIZER
    n_tok = [len(ids) for ids in (e.ids for e in qe.load_tokenizer(tok, None).encode_batch(texts))]

    def onnx(path, runtime, threads=None, precision=None, max_tokens=256):
        return qe.OnnxEncoder(path, tok, max_tokens, fp, runtime, threads, precision)

    def ort_spinning(path):
        enc = onnx(path, "onnxruntime")
        import onnxruntime as ort

        opts = ort.SessionOptions()  # the build's own session: idle threads may spin (no FAISS search beside it)
        enc._network._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return enc

    by_chars = lambda xs: sorted(xs, key=len, reverse=True)  # noqa: E731  (the build's order: longest first)
    count = qe.load_tokenizer(tok, None)
    by_tokens = lambda xs: [x for _, x in sorted(((-len(e.ids), x) for e, x in zip(count.encode_batch(xs), xs)),  # noqa: E731
                                                  key=lambda p: p[0])]
    as_given = lambda xs: list(xs)  # noqa: E731
    torch_threads = torch.get_num_threads()
    # name -> (make the encoder, batch size, order the texts are handed over in)
    arms = {
        "openvino f32 (the build's), batch 32, longest first": (lambda: onnx(f32, "openvino", precision="f32"), 32, by_chars),
        "openvino f32, batch 32, as given (no bucketing)": (lambda: onnx(f32, "openvino", precision="f32"), 32, as_given),
        "openvino f32, batch 32, by tokens": (lambda: onnx(f32, "openvino", precision="f32"), 32, by_tokens),
        "openvino f32, batch 8": (lambda: onnx(f32, "openvino", precision="f32"), 8, by_chars),
        "openvino f32, batch 16": (lambda: onnx(f32, "openvino", precision="f32"), 16, by_chars),
        "openvino f32, batch 128": (lambda: onnx(f32, "openvino", precision="f32"), 128, by_chars),
        "openvino f32, 1 thread": (lambda: onnx(f32, "openvino", 1, "f32"), 32, by_chars),
        "openvino f32, throughput mode (async streams)": (lambda: AsyncOpenVINO(f32, tok, 256, "f32"), 32, by_chars),
        "openvino int8 weights (dynamic quantisation)": (lambda: onnx(int8, "openvino"), 32, by_chars),
        "onnxruntime f32 (threads not spinning)": (lambda: onnx(f32, "onnxruntime"), 32, by_chars),
        "onnxruntime f32, threads spinning": (lambda: ort_spinning(f32), 32, by_chars),
        "onnxruntime int8 (dynamic quantisation)": (lambda: onnx(int8, "onnxruntime"), 32, by_chars),
        f"torch f32 ({torch_threads} threads; sentence-transformers sorts by length)":
            (lambda: TorchEncoder(model, fp), 32, as_given),
        "openvino f32, cut at 128 tokens": (lambda: onnx(f32, "openvino", precision="f32", max_tokens=128), 32, by_chars),
    }
    if args.arms:
        wanted = [a.strip() for a in args.arms.split("|")]
        arms = {k: v for k, v in arms.items() if any(k.startswith(w) for w in wanted)}
    encoders, load_s, notes = {}, {}, {}
    for name, (make, _, _) in arms.items():
        try:
            t = time.perf_counter()
            encoders[name] = make()
            encoders[name].encode(texts[:8], batch_size=8)  # compiled and warm
            load_s[name] = time.perf_counter() - t
        except Exception as e:  # an arm that cannot run is reported, not fatal
            notes[name] = f"{e.__class__.__name__}: {str(e).splitlines()[0][:160]}"
    rates: dict[str, list[float]] = {n: [] for n in encoders}
    vecs: dict[str, dict[int, np.ndarray]] = {n: {} for n in encoders}
    per = args.per_round
    for r in range(args.rounds):
        rows = list(range((r * per) % len(texts), (r * per) % len(texts) + per))
        rows = [i % len(texts) for i in rows]
        for name, enc in encoders.items():
            _, batch, order = arms[name]
            ordered = order([texts[i] for i in rows])
            t = time.perf_counter()
            out = enc.encode(ordered, batch_size=batch)
            rates[name].append(len(rows) / (time.perf_counter() - t))
            where = {x: i for i, x in zip(rows, [texts[i] for i in rows])}
            for x, v in zip(ordered, out):
                vecs[name][where[x]] = v
            print(f"round {r + 1}: {name}: {rates[name][-1]:.1f}/s  load {os.getloadavg()[0]:.2f}", flush=True)
    load_after = os.getloadavg()
    base = next(iter(encoders))
    cpu = cpu_description()
    lines = [f"# The abstracts' embedding on {cpu['name']} ({', '.join(cpu['flags']) or 'no AVX2'})", "",
             f"`python benchmarks/bench_embed_cpu.py {' '.join(sys.argv[1:])}` · {machine()} · {today()}", "",
             f"CPU: {cpu['name']}, {cpu['cores']} cores; vector instructions of those the build reads: "
             f"{', '.join(cpu['flags']) or 'none'} (no AVX-512: OpenVINO computes in f32 here). "
             f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; after: "
             f"{', '.join(f'{x:.2f}' for x in load_after)} (the machine is shared with other work).", "",
             f"Sample: {len(texts):,} of the venue's {venue_size:,} texts (title. abstract), drawn with seed 0 "
             f"(read {read_s:.0f} s); tokens a text: median {statistics.median(n_tok):.0f}, mean "
             f"{statistics.mean(n_tok):.0f}, {100 * np.mean(np.array(n_tok) > 256):.0f}% above the model's 256 and "
             f"{100 * np.mean(np.array(n_tok) > 128):.0f}% above 128. Each arm embedded {args.rounds} slices of "
             f"{per} texts, the arms taking turns; abstracts/s is the median over the slices (min-max beside it). "
             f"Cosine: each vector against the first arm's vector of the same text.", "",
             "| arm | abstracts/s (median) | min-max | vs the build's | load s | least cosine | mean cosine |",
             "|---|---|---|---|---|---|---|"]
    base_rate = statistics.median(rates[base])
    for name in encoders:
        common = sorted(vecs[name])
        cos = np.einsum("ij,ij->i", np.stack([vecs[name][i] for i in common]),
                        np.stack([vecs[base][i] for i in common]))
        med = statistics.median(rates[name])
        lines.append(f"| {name} | **{med:.1f}** | {min(rates[name]):.1f}-{max(rates[name]):.1f} | "
                     f"{med / base_rate:.2f}x | {load_s[name]:.1f} | {cos.min():.5f} | {cos.mean():.5f} |")
    for name, why in notes.items():
        lines.append(f"| {name} | failed: {why} | | | | | |")
    write_report(lines, ROOT / "benchmarks" / "results" / args.record)


if __name__ == "__main__":
    main()
