"""Retrieval evaluation on a BEIR-layout dataset: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."""
from __future__ import annotations

import csv
import json
import math
import time
from pathlib import Path

import numpy as np

from .build import build_index
from .corpus import CorpusError
from .engine import MODES, Engine

METRICS = ("nDCG@10", "MRR@10", "P@10", "Recall@10", "Recall@100")


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise CorpusError(f"{path}: missing (a BEIR dataset has corpus.jsonl, queries.jsonl, qrels/)")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):  # U+2028 is no line end
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise CorpusError(f"{path}:{n}: malformed JSON ({e.msg})") from None
    return rows


def read_qrels(dataset: Path, split: str) -> dict[str, dict[str, int]]:
    path = dataset / "qrels" / f"{split}.tsv"
    if not path.is_file():
        raise CorpusError(f"{path}: missing (splits here: "
                          f"{', '.join(p.stem for p in (dataset / 'qrels').glob('*.tsv')) or 'none'})")
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) < 3 or row[0] == "query-id":
                continue
            qrels.setdefault(row[0], {})[row[1]] = int(float(row[2]))
    return qrels


def reviews_of(records: Path, ids: set[str]) -> dict[str, list[dict]]:
    """The reviews of these papers in a fetched venue's records (`python -m search fetch`), by id."""
    out = {}
    with open(records, encoding="utf-8") as f:
        for line in f:  # by "\n" alone: reviews hold U+2028, which str.splitlines would cut at
            rec = json.loads(line) if line.strip() else {}
            if rec.get("id") in ids and rec.get("reviews"):
                out[rec["id"]] = rec["reviews"]
    return out


def corpus_as_jsonl(dataset: Path, out: Path, records: Path | None = None) -> Path:
    """BEIR corpus rows (_id, title, text) as this project's JSONL records (id, title, abstract), with each
    paper's reviews from `records` (a fetched venue) when given: the index a venue's fetch gives."""
    rows = read_jsonl(dataset / "corpus.jsonl")
    reviews = reviews_of(records, {str(r["_id"]) for r in rows}) if records else {}
    with open(out, "w", encoding="utf-8") as f:
        for row in rows:
            rec = {"id": str(row["_id"]), "abstract": row.get("text", "")}
            if row.get("title"):
                rec["title"] = row["title"]
            if str(row["_id"]) in reviews:
                rec["reviews"] = reviews[str(row["_id"])]
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return out


def metrics(ranked: list[list[str]], relevant: dict[str, int]) -> dict[str, float]:
    """ranked: for each hit, every id the paper answers to (its id and aliases)."""
    def rel(ids: list[str]) -> int:
        return max((relevant.get(i, 0) for i in ids), default=0)

    gains = [rel(ids) for ids in ranked]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal)) or 1.0
    first = next((i for i, g in enumerate(gains[:10]) if g > 0), None)
    n_rel = sum(1 for v in relevant.values() if v > 0) or 1
    return {"nDCG@10": dcg / idcg, "MRR@10": 0.0 if first is None else 1.0 / (first + 1),
            "P@10": sum(1 for g in gains[:10] if g > 0) / 10,
            "Recall@10": sum(1 for g in gains[:10] if g > 0) / n_rel,
            "Recall@100": sum(1 for g in gains[:100] if g > 0) / n_rel}


def evaluate(engine: Engine, queries: dict[str, str], qrels: dict[str, dict[str, int]],
             modes: list[str] = list(MODES)) -> dict[str, dict[str, float]]:
    """Mean metrics per mode over the judged queries, plus the median query time."""
    results = {}
    judged = [q for q in queries if q in qrels]
    for mode in modes:
        engine.clear_cache()  # each mode pays its own query encoding, as a user's first query does
        per_query, times = [], []
        for qid in judged:
            t = time.perf_counter()
            hits = engine.search(queries[qid], 100, mode=mode, evidence=False).hits
            times.append(time.perf_counter() - t)
            per_query.append(metrics([[h.paper.id, *h.paper.aliases] for h in hits], qrels[qid]))
        results[mode] = {m: float(np.mean([r[m] for r in per_query])) for m in METRICS}
        results[mode]["queries"] = len(judged)
        results[mode]["median_ms"] = 1000 * float(np.median(times))
    return results


def prepare(dataset: Path, model_name: str, model=None, cache_dir: Path | None = None,
            sentences: bool = False, multilingual: bool = False, records: Path | None = None) -> Path:
    """Index the dataset's corpus beside it (with its papers' reviews from `records`, a fetched venue);
    the embedding cache makes a repeat run embed nothing."""
    work = dataset / ".work"
    work.mkdir(exist_ok=True)
    reviewed = "-reviews" if records else ""
    corpus = corpus_as_jsonl(dataset, work / f"corpus{reviewed}.jsonl", records)
    out = work / (f"index-{model_name.replace('/', '_')}{'-sentences' if sentences else ''}"
                  f"{'-ml' if multilingual else ''}{reviewed}")
    build_index([corpus], out, model_name=model_name, cache_dir=cache_dir or work / "embedding_cache", model=model,
                sentences=sentences, multilingual=multilingual, explore=False)
    return out


def load_queries(dataset: Path) -> dict[str, str]:
    return {str(r["_id"]): r["text"] for r in read_jsonl(dataset / "queries.jsonl")}


def table(name: str, results: dict[str, dict[str, float]]) -> str:
    lines = [f"{name}", f"| mode | {' | '.join(METRICS)} | queries | median ms |",
             "|---" * (len(METRICS) + 3) + "|"]
    for mode, r in results.items():
        lines.append(f"| {mode} | " + " | ".join(f"{r[m]:.3f}" for m in METRICS)
                     + f" | {r['queries']} | {r['median_ms']:.1f} |")
    return "\n".join(lines)
