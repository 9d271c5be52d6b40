"""Retrieval evaluation on a BEIR-layout dataset: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."""
from __future__ import annotations

import csv
import json
import time
import warnings
from pathlib import Path

import numpy as np

from .build import build_index
from .corpus import CorpusError
from .engine import MODES, Engine
from .guard import UsageError

METRICS = ("nDCG@10", "MRR@10", "P@10", "Recall@10", "Recall@100")
# each as ranx names it: nDCG with the grade as gain (Järvelin and Kekäläinen), P@10 over 10 even where
# fewer came back, recall over the papers graded 1 or more; a paper counts as relevant at grade 1 or more
RANX_METRICS = {"nDCG@10": "ndcg@10", "MRR@10": "mrr@10", "P@10": "precision@10", "Recall@10": "recall@10",
                "Recall@100": "recall@100"}
# ranx is a development requirement (requirements-dev.txt), not the page's: numba, pandas, scipy and
# matplotlib come with it
RANX = "ranx==0.3.21"
NOTHING = "\0"  # a document id no qrels hold: the stand-in for an empty run, a repeated hit, unjudged queries


class MissingRanx(UsageError):
    """ranx is not installed: the user fixes it with one pip install (one line on stderr, exit 2)."""


def ranx_evaluate():
    """ranx's evaluate, imported on first use: its import takes seconds (numba, pandas, scipy) and a
    machine's first call compiles its metrics (numba, cached for the runs after; docs/usage.md says how
    long), which neither the page nor the other commands should pay."""
    try:
        from ranx import evaluate
    except ImportError:
        raise MissingRanx(f"evaluate computes its metrics with ranx, which is not installed: "
                          f"pip install {RANX}") from None
    return evaluate


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


def judged_id(ids: list[str], relevant: dict[str, int]) -> str:
    """The id the qrels know a hit by: of every id the paper answers to (its id, then its aliases), the one
    graded highest (the first of those graded alike), else its own id."""
    known = [i for i in ids if i in relevant]
    return max(known, key=relevant.__getitem__) if known else ids[0]


def scores(runs: dict[str, list[list[str]]], qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """METRICS of each query, by ranx. runs: each query's hits in rank order, each hit as every id the paper
    answers to (its id and aliases). A paper that comes back twice counts once: its second place stays,
    relevant to nothing. A query without hits, or without qrels, scores 0 everywhere."""
    if not runs:
        return {}
    judged = {q: qrels.get(q) or {NOTHING: 0} for q in runs}  # ranx wants every query of the run judged
    ranked = {}
    for q, hits in runs.items():
        docs: dict[str, float] = {}
        for rank, ids in enumerate(hits):
            doc = judged_id(ids, judged[q])
            docs[doc if doc not in docs else f"{NOTHING}{rank}"] = float(len(hits) - rank)  # ranx sorts by score
        ranked[q] = docs or {NOTHING: 1.0}
    with warnings.catch_warnings():  # numba's type-safety notes while it compiles: not the user's concern
        warnings.simplefilter("ignore")
        # plain dicts, in the same query order: ranx hashes their ids itself, faster than its Qrels and Run
        per = ranx_evaluate()(judged, ranked, list(RANX_METRICS.values()), return_mean=False,
                              save_results_in_run=False)
    return {q: {m: float(per[r][i]) for m, r in RANX_METRICS.items()} for i, q in enumerate(runs)}


def metrics(ranked: list[list[str]], relevant: dict[str, int]) -> dict[str, float]:
    """One query's METRICS (ranked: for each hit, every id the paper answers to). Scoring many queries,
    call `scores` once: each call into ranx costs milliseconds."""
    return scores({"q": ranked}, {"q": relevant})["q"]


def evaluate(engine: Engine, queries: dict[str, str], qrels: dict[str, dict[str, int]],
             modes: list[str] = list(MODES)) -> dict[str, dict[str, float]]:
    """Mean metrics per mode over the judged queries, plus the median query time."""
    results = {}
    judged = [q for q in queries if q in qrels]
    for mode in modes:
        engine.clear_cache()  # each mode pays its own query encoding, as a user's first query does
        runs, times = {}, []
        for qid in judged:
            t = time.perf_counter()
            hits = engine.search(queries[qid], 100, mode=mode, evidence=False).hits
            times.append(time.perf_counter() - t)
            runs[qid] = [[h.paper.id, *h.paper.aliases] for h in hits]
        per_query = list(scores(runs, qrels).values())  # one call into ranx for the mode's queries
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
