"""MiniLM itself adapted to the venue: fine-tuned on pairs the venue gives (a submission's reviewers' summaries
and its TL;DR, each paired with its abstract), with MultipleNegativesRankingLoss in a manual loop (no
`datasets`), and the same weights averaged with the base model's (keeping what the base model does well).

    python benchmarks/experiments/bench_finetune.py --records FILE --out DIR [--steps 600]

Trained on the submissions that are not accepted (the judged set searches the accepted papers), never on
titles, keywords or anything an evaluation reads. It writes DIR/finetuned and DIR/mix-0.5 (models a build can
name with --model) and its record (results/finetune.md); the judged figures come from building an index with
each model and `bench_judged.py evaluate --index DIR --record …`."""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # report.py, beside the benchmarks

from report import machine, today  # noqa: E402


def venue_pairs(records: Path, seed: int = 0) -> tuple[list[list[tuple[str, str]]], list[list[tuple[str, str]]]]:
    """Per paper not accepted, its (summary or TL;DR, abstract as the model reads it) pairs; split by paper
    into training papers and 500 held back."""
    from search.corpus import load_corpus
    from search.filters import decision_group
    from search.parts.summaries import paper_summaries

    papers, _ = load_corpus([records])
    grouped = []
    for p, said in zip(papers, paper_summaries(papers)):
        if decision_group(p.decision) == "accepted" or not p.text.strip():
            continue
        queries = [s for s in said if s.strip()] + ([p.tldr.strip()] if p.tldr.strip() else [])
        if queries:
            grouped.append([(q, p.text) for q in queries])
    random.Random(seed).shuffle(grouped)
    return grouped[500:], grouped[:500]


def batches(grouped: list[list[tuple[str, str]]], batch: int, steps: int, seed: int = 0):
    """Batches of pairs from distinct papers (a paper's other pairs would be false negatives in its batch)."""
    rng = random.Random(seed)
    order = list(range(len(grouped)))
    done = 0
    while done < steps:
        rng.shuffle(order)
        for i in range(0, len(order) - batch + 1, batch):
            yield [rng.choice(grouped[j]) for j in order[i:i + batch]]
            done += 1
            if done == steps:
                return


def train(model, grouped, steps: int, batch: int, lr: float, max_len: int, seed: int = 0) -> float:
    import torch
    from sentence_transformers.losses import MultipleNegativesRankingLoss

    torch.manual_seed(seed)
    model.max_seq_length = max_len
    loss_fn = MultipleNegativesRankingLoss(model)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps))
    model.train()
    t = time.perf_counter()
    for step, pairs in enumerate(batches(grouped, batch, steps, seed), 1):
        feats = [model.tokenize([q for q, _ in pairs]), model.tokenize([d for _, d in pairs])]
        loss = loss_fn(feats, torch.zeros(len(pairs)))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0:
            print(f"step {step}/{steps} loss {loss.item():.3f} {time.perf_counter() - t:.0f} s", file=sys.stderr,
                  flush=True)
    model.eval()
    return time.perf_counter() - t


def held_back_mrr(model, held, max_len: int = 256) -> float:
    """MRR@10 of each held-back query's abstract among the held-back papers' abstracts."""
    model.max_seq_length = max_len
    docs = [g[0][1] for g in held]
    queries = [(q, i) for i, g in enumerate(held) for q, _ in g]
    d = model.encode(docs, normalize_embeddings=True, batch_size=32)
    q = model.encode([x for x, _ in queries], normalize_embeddings=True, batch_size=32)
    sims = q @ d.T
    own = sims[np.arange(len(queries)), [i for _, i in queries]]
    rank = (sims > own[:, None]).sum(axis=1)
    return float(np.where(rank < 10, 1.0 / (rank + 1), 0.0).mean())


def averaged(base, tuned, share: float):
    """A copy of the base model whose weights are (1 - share) * base + share * tuned."""
    import copy

    mixed = copy.deepcopy(base)
    tuned_state = tuned.state_dict()
    mixed.load_state_dict({k: (1 - share) * v + share * tuned_state[k] if v.is_floating_point() else v
                           for k, v in base.state_dict().items()})
    return mixed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=Path, required=True, help="a fetched venue (python -m search fetch)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--max-len", type=int, default=128, help="tokens a text is cut to while training")
    ap.add_argument("--record", type=Path, default=Path(__file__).resolve().parent / "results" / "finetune.md")
    args = ap.parse_args()
    from search.encoding.embed import DEFAULT_MODEL, load_model

    grouped, held = venue_pairs(args.records)
    base = load_model(DEFAULT_MODEL)
    tuned = load_model(DEFAULT_MODEL)
    seconds = train(tuned, grouped, args.steps, args.batch, args.lr, args.max_len)
    tuned.max_seq_length = base.max_seq_length
    mix = averaged(base, tuned, 0.5)
    rows = []
    for name, model in (("base", base), ("fine-tuned", tuned), ("averaged 0.5", mix)):
        rows.append((name, held_back_mrr(model, held)))
    args.out.mkdir(parents=True, exist_ok=True)
    tuned.save(str(args.out / "finetuned"))
    mix.save(str(args.out / "mix-0.5"))
    n_pairs = sum(len(g) for g in grouped)
    lines = [f"# MiniLM fine-tuned on the venue's pairs", "",
             f"`python benchmarks/experiments/bench_finetune.py --records FILE --out DIR --steps {args.steps}` · "
             f"{machine()} · {today()}", "",
             f"{n_pairs:,} pairs (each reviewer's summary and the TL;DR, with the abstract) of {len(grouped):,} "
             f"submissions not accepted; 500 more papers held back. MultipleNegativesRankingLoss, {args.steps} "
             f"steps of {args.batch} pairs from distinct papers, AdamW lr {args.lr}, 10% warm-up then linear decay, "
             f"texts cut to {args.max_len} tokens while training: {seconds:.0f} s on the CPU.", "",
             "| model | held-back summary or TL;DR -> abstract MRR@10 |", "|---|---|",
             *[f"| {name} | {value:.3f} |" for name, value in rows]]
    args.record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
