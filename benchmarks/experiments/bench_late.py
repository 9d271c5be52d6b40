"""Late interaction: how far MiniLM's token vectors carry titles -> abstract (issue 15's last target).

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/experiments/bench_late.py [--out benchmarks/experiments/results/late.md]

Held-out titles -> abstract sit at MRR@10 0.961 under the shipped blend, against a bar of 0.975, and
every signal the index holds, learned together, stops at 0.974 (bench_signals.py). This measures the
signal a cross-encoder would bring and the model can still give without one: ColBERT's MaxSim over the
model's contextual token vectors (for each query token, the cosine of the abstract's closest token; their
mean, each weighted by the token's idf over the abstracts, stop words and punctuation out). It re-orders
the shipped blend's first RERANK candidates by blend + w · MaxSim (MaxSim scaled to [0, 1] over them).

w and the title α are chosen on the development titles, then measured once on held-out titles and on
every title of the conference (4,302 queries; the two 500-query sets are drawn from them). The last row
fits w and α on every title itself: a ceiling for the signal, not a result. The abstracts' token vectors
are embedded by the real model (sentence-transformers, torch) and kept as .npy beside the titles index.
"""
from __future__ import annotations

import itertools
import json
import string
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import arguments, collect, engine_maker, mean_metric, scaled, SHARED, write_report
from search.evaluate import load_queries, read_qrels
from search.fusion import DEFAULT_WEIGHTS, rank

RERANK = 30
WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
ALPHAS = (0.3, 0.4, 0.5)


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def token_vectors(model, texts: list[str], path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every text's token vectors (unit length, float16), concatenated, with each text's offsets; cached."""
    if path.with_suffix(".npz").is_file():
        saved = np.load(path.with_suffix(".npz"))
        if len(saved["offsets"]) == len(texts) + 1:
            return saved["tokens"], saved["offsets"]
    out = model.encode(texts, output_value="token_embeddings", batch_size=32, convert_to_numpy=False,
                       show_progress_bar=True)
    tokens = np.concatenate([unit_rows(t.float().numpy()).astype(np.float16) for t in out])
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in out])])
    np.savez(path.with_suffix(".npz"), tokens=tokens, offsets=offsets)
    return tokens, offsets


class MaxSim:
    """MaxSim of a query against abstracts, query tokens weighted by idf (stop words, punctuation out)."""

    def __init__(self, model, texts: list[str], cache: Path):
        from bm25s.stopwords import STOPWORDS_EN

        self.model, self.tok = model, model.tokenizer
        self.tokens, self.offsets = token_vectors(model, texts, cache)
        ids = self.tok(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
        df = np.zeros(self.tok.vocab_size)
        for row in ids:
            df[list(set(row))] += 1
        self.idf = np.log((len(texts) + 1) / (df + 1))
        words = [w for w in [*STOPWORDS_EN, *string.punctuation] if w in self.tok.vocab]
        self.skip = set(self.tok.convert_tokens_to_ids(words)) | {self.tok.cls_token_id, self.tok.sep_token_id}

    def scores(self, query: str, rows: np.ndarray) -> np.ndarray:
        q = self.model.encode([query], output_value="token_embeddings", convert_to_numpy=False)[0]
        q = unit_rows(q.float().numpy())
        ids = self.tok(query, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        weight = np.array([0.0 if t in self.skip else self.idf[t] for t in ids])
        if not weight.any():
            weight[1:-1] = 1.0
        weight /= weight.sum()
        return np.array([(q @ self.tokens[self.offsets[r]:self.offsets[r + 1]].astype(np.float32).T).max(1)
                         @ weight for r in rows])


def gather(engine, maxsim: MaxSim, queries: dict[str, str], qrels: dict) -> list[dict]:
    """Per judged query: its candidates, and MaxSim for the first RERANK of every α tried."""
    texts = [t for q, t in queries.items() if q in qrels]
    out = []
    for (cands, kind, relevant, ids), text in zip(collect(engine, queries, qrels), texts):
        firsts = {a: rank(cands, replace(DEFAULT_WEIGHTS, **{kind: a}), kind)[0][:RERANK] for a in ALPHAS}
        near = np.unique(np.concatenate([*firsts.values(), rank(cands, DEFAULT_WEIGHTS, kind)[0][:RERANK]]))
        out.append(dict(c=cands, kind=kind, relevant=relevant, ids=ids,
                        maxsim=dict(zip(near.tolist(), maxsim.scores(text, near)))))
    return out


def value(rows: list[dict], alpha: float | None, w: float) -> float:
    """MRR@10 with the title kind's α set to alpha (None: shipped), the first RERANK re-ordered by + w · MaxSim."""
    tops = []
    for r in rows:
        weights = DEFAULT_WEIGHTS if alpha is None or r["kind"] != "title" else replace(DEFAULT_WEIGHTS, title=alpha)
        ranked, scores = rank(r["c"], weights, r["kind"])
        head, tail = ranked[:RERANK], ranked[RERANK:]
        late = scaled(np.array([r["maxsim"][int(x)] for x in head]))
        head = head[np.argsort(-(scores[:RERANK] + w * late), kind="stable")]
        tops.append([r["ids"][x] for x in np.concatenate([head, tail])[:10]])
    return mean_metric(tops, [r["relevant"] for r in rows], "MRR@10")


def every_title(titles_set: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Every paper of the titles corpus: its title as the query, its abstract the one relevant paper."""
    corpus = {json.loads(line)["_id"] for line in (titles_set / "corpus.jsonl").open(encoding="utf-8")}
    papers = [json.loads(line) for line in SHARED.open(encoding="utf-8")]
    queries = {f"all-{p['id']}": p["title"] for p in papers if p["id"] in corpus and p.get("title")}
    return queries, {q: {q[4:]: 1} for q in queries}


def main() -> None:
    args = arguments("late.md", ROOT / "benchmarks" / "experiments" / "results").parse_args()

    from search.encoding.embed import load_model

    model = load_model()
    engine_for = engine_maker(model, args.cache)
    dev_set, held_set = args.devsets / "titles", args.testsets / "titles"
    engine = engine_for(held_set, DEFAULT_WEIGHTS)
    texts = [p.text for p in engine.papers]
    maxsim = MaxSim(model, texts, held_set / ".work" / f"tokens-{len(texts)}")
    sets = {"dev titles": (dev_set, None), "held-out titles": (held_set, None),
            "every title": (held_set, every_title(held_set))}
    gathered = {}
    for name, (dataset, given) in sets.items():
        queries, qrels = given or (load_queries(dataset), read_qrels(dataset, "test"))
        gathered[name] = gather(engine_for(dataset, DEFAULT_WEIGHTS), maxsim, queries, qrels)
        print(name, len(gathered[name]), "queries", flush=True)

    grid = list(itertools.product(ALPHAS, WEIGHTS))
    dev_alpha, dev_w = max(grid, key=lambda aw: value(gathered["dev titles"], *aw))
    all_alpha, all_w = max(grid, key=lambda aw: value(gathered["every title"], *aw))
    dev_only_w = max(WEIGHTS, key=lambda w: value(gathered["dev titles"], None, w))
    rows = [("shipped blend", None, 0.0), (f"shipped blend + MaxSim, w chosen on dev (w {dev_only_w})", None, dev_only_w),
            (f"title α and w chosen on dev (α {dev_alpha}, w {dev_w})", dev_alpha, dev_w),
            (f"fitted on every title itself (α {all_alpha}, w {all_w}): a ceiling", all_alpha, all_w)]
    stored = len(maxsim.tokens) * maxsim.tokens.shape[1] * 2
    lines = ["Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && python benchmarks/make_devsets.py "
             "--seed 1 --out .testsets && python benchmarks/experiments/bench_late.py", "",
             f"Titles -> abstract over the whole conference ({len(texts):,} abstracts); MRR@10. MaxSim re-orders "
             f"the blend's first {RERANK}; w in {WEIGHTS}, title α in {ALPHAS}.", "",
             "| ranking | dev titles | held-out titles | every title |", "|---|---|---|---|"]
    for label, alpha, w in rows:
        lines.append(f"| {label} | " + " | ".join(f"{value(g, alpha, w):.4f}" for g in gathered.values()) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"Queries: dev {len(gathered['dev titles'])}, held-out {len(gathered['held-out titles'])}, "
              f"every title {len(gathered['every title'])}.",
              f"Token vectors the signal needs at query time: {len(maxsim.tokens):,} tokens × "
              f"{maxsim.tokens.shape[1]} dims, {stored / 2**20:.0f} MiB as float16 (the abstracts' own vectors: "
              f"{engine.rankers.vectors.nbytes / 2**20:.1f} MiB)."]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
