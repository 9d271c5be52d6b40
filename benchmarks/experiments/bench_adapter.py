"""A query-side adapter on frozen vectors: a linear map of the query's vector, learned from pairs the venue
gives (a submission's TL;DR as the query, its abstract's vector as the answer), the papers' vectors left
as built. The cheap arm of adapting the model to the venue: no re-embedding, one 384 x 384 matrix.

    python benchmarks/experiments/bench_adapter.py --records FILE --cache DIR --out W.npy

Trained on the submissions that are not accepted (the judged set searches the accepted papers), never on
titles or keywords. `bench_judged.py evaluate --adapter W.npy` scores it on the judged questions."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def pairs(records: Path, cache_dir: Path, engine) -> tuple[np.ndarray, np.ndarray]:
    """(TL;DR vectors as the query encoder makes them, abstract vectors as the build made them) of every
    submission not accepted that has both."""
    from search.corpus import load_corpus
    from search.encoding.embed import EmbeddingCache
    from search.filters import decision_group
    from search.text import text_hash

    papers, _ = load_corpus([records])
    from search.encoding.embed import vectors_fingerprint

    m = engine.manifest
    cache = EmbeddingCache(cache_dir, vectors_fingerprint(m.model.fingerprint, m.embedding["backend"]))
    docs, tldrs = [], []
    for p in papers:
        if decision_group(p.decision) == "accepted" or not p.tldr.strip():
            continue
        v = cache.get(text_hash(p.text))
        if v is not None:
            docs.append(v)
            tldrs.append(p.tldr.strip())
    t = time.perf_counter()
    queries = engine.model.encode(tldrs)
    print(f"{len(tldrs)} pairs; TL;DRs encoded in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return np.asarray(queries, np.float32), np.asarray(docs, np.float32)


def train(q: np.ndarray, d: np.ndarray, steps: int, reg: float, seed: int = 0, batch: int = 256,
          scale: float = 20.0) -> np.ndarray:
    """W minimising in-batch softmax cross-entropy of cos(W q_i, d_j) (MultipleNegativesRankingLoss's
    objective, scale 20 as sentence-transformers') plus reg * ||W - I||^2, which keeps the base model's
    behaviour where the pairs say nothing."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    dim = q.shape[1]
    w = torch.nn.Parameter(torch.eye(dim))
    opt = torch.optim.Adam([w], lr=1e-3)
    qt, dt = torch.from_numpy(q), torch.from_numpy(d)
    eye = torch.eye(dim)
    for _ in range(steps):
        idx = torch.from_numpy(rng.choice(len(q), batch, replace=False))
        mapped = torch.nn.functional.normalize(qt[idx] @ w.T, dim=1)
        logits = scale * mapped @ dt[idx].T
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(batch)) + reg * ((w - eye) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach().numpy()


def mrr(q: np.ndarray, d: np.ndarray, w: np.ndarray | None) -> float:
    """MRR@10 of each held-back pair's abstract among all held-back abstracts, the TL;DR as the query."""
    mapped = q if w is None else q @ w.T
    mapped = mapped / np.linalg.norm(mapped, axis=1, keepdims=True)
    sims = mapped @ d.T
    rank = (sims > np.diag(sims)[:, None]).sum(axis=1)
    return float(np.where(rank < 10, 1.0 / (rank + 1), 0.0).mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", required=True, help="what `python -m search fetch` wrote")
    ap.add_argument("--cache", required=True, help="the embedding cache that holds the abstracts' vectors")
    ap.add_argument("--index", required=True, help="an index built with the same model (its query encoder)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from ranx import Qrels, Run, evaluate

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import bench_judged as bj
    from report import machine, write_report
    from search.engine import open_engine
    from search.filters import Filters

    engine = open_engine(Path(args.index))
    q, d = pairs(Path(args.records), Path(args.cache), engine)
    order = np.random.default_rng(0).permutation(len(q))
    back, fit = order[:len(q) // 5], order[len(q) // 5:]  # a fifth held back to check the fit
    graded = bj.judgments()
    dev = [x for x in bj.questions() if x["split"] == "dev"]
    qrels = Qrels({x["id"]: graded[x["id"]] for x in dev})
    shown = engine.catalog.known(Filters())

    def judged(run_one) -> tuple[float, int]:
        ranked = {x["id"]: run_one(x["text"]) for x in dev}
        run = Run({i: {p: float(10 - r) for r, p in enumerate(ps)} for i, ps in ranked.items()})
        return (float(evaluate(qrels, run, "ndcg@10", make_comparable=True)),
                sum(p not in graded[i] for i, ps in ranked.items() for p in ps))

    base, _ = judged(lambda text: [h.paper.id for h in engine.search(text, 10, "hybrid", shown, evidence=False).hits])
    lines = ["# A query-side adapter on frozen vectors, trained on TL;DR -> abstract pairs", "",
             f"`python benchmarks/experiments/bench_adapter.py --records FILE --cache DIR --index {args.index} "
             f"--out W.npy` · {machine()} · {__import__('datetime').date.today()}", "",
             f"{len(q):,} pairs of submissions not accepted whose abstract vector the cache held ({len(fit):,} to "
             f"fit, {len(back):,} held back). Judged: the {len(dev)} development questions on the accepted papers "
             f"(shipped hybrid nDCG@10 {base:.3f}); a paper no reader graded counts as not relevant.", "",
             "| steps | reg | fit (s) | held-back TL;DR -> abstract MRR@10 | judged nDCG@10 (dev) | Δ | ungraded |",
             "|---|---|---|---|---|---|---|"]
    for steps, reg in ((600, 0.1), (1500, 0.001)):
        t = time.perf_counter()
        w = train(q[fit], d[fit], steps, reg)
        seconds = time.perf_counter() - t
        s, ungraded = judged(bj.adapted(engine, shown, w))
        lines.append(f"| {steps} | {reg} | {seconds:.0f} | {mrr(q[back], d[back], None):.3f} -> "
                     f"{mrr(q[back], d[back], w):.3f} | {s:.3f} | {s - base:+.3f} | {ungraded} |")
        np.save(args.out, w)
    write_report(lines, Path(__file__).resolve().parent / "results" / "adapter.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
