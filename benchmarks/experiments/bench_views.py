"""What others wrote about a paper, as a way to find it: the authors' TL;DR and the reviewers' summaries as
extra views of each paper, on top of the shipped hybrid ranking.

    python benchmarks/experiments/bench_views.py --records FILE.jsonl [--out ...results/views.md]

FILE is a whole-venue fetch (`python -m search fetch`): it gives each accepted paper of the development
sets its TL;DR and its reviews' summaries. For every query of the English development sets that the issue
names (questions, paraphrases, names, titles), the shipped hybrid ranking's 100 best papers are re-scored:

    match + w · view

where view is, per arm: the query's best cosine with the paper's TL;DR (MiniLM), with any of its reviewers'
summaries, with either; or BM25 over TL;DR and summaries together (scaled to the query's best candidate).
w is chosen per arm on the development sets: the best mean of questions' P@10 and paraphrases' MRR@10 among
the weights that cost names and titles (MRR@10) at most 0.005 each. Then each arm at its w once on held-out.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent

# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import arguments, engine_maker, machine, main_metric, write_report
from search.evaluate import load_queries, read_qrels
from search.fusion import DEFAULT_WEIGHTS

SETS = ("questions", "paraphrases", "names", "titles")
GAINS, GUARDED = ("questions", "paraphrases"), ("names", "titles")
WEIGHTS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)
ARMS = ("TL;DR, embedded", "reviewers' summaries, embedded", "TL;DR or summaries, embedded",
        "TL;DR + summaries, BM25", "embedded (either) + BM25")
POOL = 100


def views_of(records: Path, ids: set[str]) -> dict[str, tuple[str, list[str]]]:
    out = {}
    with open(records, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in ids:
                out[r["id"]] = (r.get("tldr") or "", [x["summary"] for x in r.get("reviews", []) if x.get("summary")])
    return out


def metric(name: str, ranked: list[str], relevant: set[str]) -> float:
    if main_metric(name) == "P@10":
        return sum(pid in relevant for pid in ranked[:10]) / 10
    return next((1 / (i + 1) for i, pid in enumerate(ranked[:10]) if pid in relevant), 0.0)


def main() -> int:
    from search.encoding.embed import load_model
    from search.parts.lexical import tokenize

    ap = arguments("views.md", ROOT / "benchmarks" / "experiments" / "results")
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--vectors", type=Path, default=Path("/tmp/views-vectors.npz"),
                    help="the views' vectors, kept between runs")
    args = ap.parse_args()
    model = load_model()
    engine_for = engine_maker(model, args.cache)
    t0 = time.perf_counter()
    probe = engine_for(args.devsets / "questions", DEFAULT_WEIGHTS)
    ids = [p.id for p in probe.papers]
    views = views_of(args.records, set(ids))
    tldrs = [views.get(i, ("", []))[0] for i in ids]
    summaries = [(row, s) for row, i in enumerate(ids) for s in views.get(i, ("", []))[1]]
    if args.vectors.is_file():
        saved = np.load(args.vectors)
        tldr_vecs, summary_vecs = saved["tldr"], saved["summaries"]
    else:
        t = time.perf_counter()
        tldr_vecs = probe.model.encode([t or "-" for t in tldrs])
        summary_vecs = probe.model.encode([s for _, s in summaries])
        print(f"embedded {len(tldrs)} TL;DRs and {len(summaries)} summaries in {time.perf_counter() - t:.0f} s",
              flush=True)
        np.savez(args.vectors, tldr=tldr_vecs, summaries=summary_vecs)
    has_tldr = np.array([bool(t) for t in tldrs])
    summary_row = np.array([r for r, _ in summaries])
    import bm25s

    bm25 = bm25s.BM25()
    bm25.index([tokenize(" ".join([tldrs[r], *views.get(ids[r], ("", []))[1]])) or ["\x00"]
                for r in range(len(ids))], show_progress=False)
    row_of = {pid: r for r, pid in enumerate(ids)}

    def signals(engine, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The hybrid's candidates, their match scores, and each view's score (columns: ARMS' signals)."""
        result = engine.search(text, POOL, "hybrid", evidence=False)
        cands = [h.paper.id for h in result.hits]
        match = np.array([h.score for h in result.hits])
        q, _ = engine.encode_query(text)
        q = q.reshape(-1)
        tl = np.where(has_tldr, tldr_vecs @ q, 0.0)
        sm = np.zeros(len(ids))
        np.maximum.at(sm, summary_row, summary_vecs @ q)
        lex = np.asarray(bm25.get_scores(tokenize(text)), dtype=float)
        rows = [row_of[c] for c in cands]
        lex_c = lex[rows] / max(lex[rows].max(), 1e-9)
        either = np.maximum(tl, sm)[rows]
        cols = np.stack([tl[rows], sm[rows], either, lex_c, either + lex_c], axis=1)
        return cands, match, cols

    data: dict[tuple[str, str], list] = {}
    for split, root in (("dev", args.devsets), ("held-out", args.testsets)):
        for name in SETS:
            folder = root / name
            engine = engine_for(folder, DEFAULT_WEIGHTS)
            queries, qrels = load_queries(folder), read_qrels(folder, "test")
            rows = []
            for qid, text in queries.items():
                if qid in qrels:
                    rows.append((*signals(engine, text), {d for d, g in qrels[qid].items() if g > 0}))
            data[(split, name)] = rows
            print(split, name, len(rows), flush=True)

    def score(split: str, name: str, arm: int | None, w: float) -> float:
        out = []
        for cands, match, cols, relevant in data[(split, name)]:
            s = match if arm is None else match + w * cols[:, arm]
            order = np.argsort(-s, kind="stable")
            out.append(metric(name, [cands[i] for i in order], relevant))
        return statistics.fmean(out)

    base = {(sp, n): score(sp, n, None, 0) for sp in ("dev", "held-out") for n in SETS}
    lines = ["# The TL;DR and the reviewers' summaries as extra views of a paper", "",
             f"`python benchmarks/experiments/bench_views.py --records FILE` · {machine()} · "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"{int(has_tldr.sum()):,} of {len(ids):,} papers have a TL;DR; {len(summaries):,} reviewers' summaries "
             "(the crawl's, before the rebuttal). The hybrid's 100 best re-scored as match + w · view; w chosen "
             "on dev (questions P@10 and paraphrases MRR@10, names and titles MRR@10 allowed to fall 0.005 at "
             "most), then held-out once.", "",
             "| arm | w (dev) | " + " | ".join(f"{n} dev" for n in SETS) + " | " +
             " | ".join(f"{n} held-out" for n in SETS) + " |", "|---|---|" + "---|" * (2 * len(SETS))]
    lines.append("| shipped hybrid | – | " + " | ".join(f"{base[('dev', n)]:.3f}" for n in SETS) + " | " +
                 " | ".join(f"{base[('held-out', n)]:.3f}" for n in SETS) + " |")
    for arm, label in enumerate(ARMS):
        best, best_w = None, 0.0
        for w in WEIGHTS:
            dev = {n: score("dev", n, arm, w) for n in SETS}
            if any(dev[n] < base[("dev", n)] - 0.005 for n in GUARDED):
                continue
            gain = statistics.fmean(dev[n] for n in GAINS)
            if best is None or gain > best + 1e-9:
                best, best_w = gain, w
        row = [f"{score(sp, n, arm, best_w):.3f}" for sp in ("dev", "held-out") for n in SETS]
        lines.append(f"| {label} | {best_w:g} | " + " | ".join(row) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"Whole run: {time.perf_counter() - t0:.0f} s."]
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
