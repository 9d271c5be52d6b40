"""Relevance judged by reading: researchers' questions, each ranking's top 10 pooled and graded 0/1/2 by a
reader blind to the ranking, and every ranking scored on the grades (ranx) with bootstrap intervals.

    python benchmarks/bench_judged.py pool --index DIR --out TASKS     # candidates to grade, shuffled
    python benchmarks/bench_judged.py collect --tasks TASKS            # grades -> judged/judgments.jsonl
    python benchmarks/bench_judged.py evaluate --index DIR             # -> results/judged.md

The questions (judged/questions.jsonl) were written before any ranking was run, and split once into
development and held-out halves (judged/split.json); the held-out half decides nothing (judged/README.md).
An arm whose top 10 holds an ungraded paper is pooled and graded before its figure is quoted: `evaluate`
names the ungraded papers it met and marks the arm's figures as incomplete.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
JUDGED = Path(__file__).resolve().parent / "judged"
K = 10
BOOTSTRAP = 10_000


def questions(folder: Path = JUDGED) -> list[dict]:
    split = json.loads((folder / "split.json").read_text())
    qs = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines() if line.strip()]
    return [{**q, "split": split[q["id"]]} for q in qs]


def judgments(folder: Path = JUDGED) -> dict[str, dict[str, int]]:
    path = folder / "judgments.jsonl"
    out: dict[str, dict[str, int]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                j = json.loads(line)
                out.setdefault(j["q"], {})[j["paper"]] = int(j["grade"])
    return out


# ---------------------------------------------------------------- the arms

def hybrid_with_vector(engine, shown, q: str, vec: np.ndarray, cut: bool) -> list[str]:
    """The hybrid's top K for `q`, its query vector replaced by `vec` (an arm that moves the vector)."""
    english = engine.queries.english
    engine.queries.english = lambda text: (vec, cut)
    try:
        return [h.paper.id for h in engine.search(q, K, "hybrid", shown, evidence=False).hits]
    finally:
        engine.queries.english = english


def adapted(engine, shown, w: np.ndarray) -> Callable[[str], list[str]]:
    """The hybrid with the query's vector mapped by a query-side adapter (experiments/bench_adapter.py)."""
    from search.rankers import unit

    def run(q: str) -> list[str]:
        vec, cut = engine.queries.english(q)
        return hybrid_with_vector(engine, shown, q, unit(vec.ravel() @ w.T)[None, :], cut)
    return run


def arms(engine, adapter: str = "", venues: tuple[str, ...] = ()) -> dict[str, Callable[[str], list[str]]]:
    """Each ranking to pool and score: name -> query -> the top K paper ids, on the accepted papers (the
    page's default on a venue index), of these venues where given (an index of many venues filtered to one)."""
    from search.filters import Filters

    shown = engine.catalog.known(Filters(venues=tuple(venues)))
    summaries = engine.rankers.summaries

    def mode(name: str, with_summaries: bool = True) -> Callable[[str], list[str]]:
        def run(q: str) -> list[str]:
            engine.rankers.summaries = summaries if with_summaries else None
            try:
                return [h.paper.id for h in engine.search(q, K, name, shown, evidence=False).hits]
            finally:
                engine.rankers.summaries = summaries
        return run

    out = {"hybrid": mode("hybrid"), "semantic": mode("semantic"), "keyword": mode("keyword")}
    if summaries is not None:
        out["hybrid, no summaries"] = mode("hybrid", with_summaries=False)
    out["hybrid + feedback"] = feedback(engine, shown)
    out["hybrid + fields"] = fields(engine, shown)
    if adapter:
        out["hybrid + query adapter"] = adapted(engine, shown, np.load(adapter))
    return out


def feedback(engine, shown, top: int = 3, beta: float = 0.5) -> Callable[[str], list[str]]:
    """Pseudo-relevance feedback (Rocchio on vectors): the query's vector moved towards its first `top` hybrid
    hits' abstracts by `beta`, then the hybrid again with the moved vector."""
    from search.rankers import unit

    def run(q: str) -> list[str]:
        first = engine.search(q, top, "hybrid", shown, evidence=False).hits
        vec, cut = engine.queries.english(q)
        if not first:
            return []
        rows = engine.catalog.rows([h.paper.id for h in first])
        moved = unit(vec.ravel() + beta * engine.rankers.vectors[rows].astype(np.float32).mean(axis=0))[None, :]
        return hybrid_with_vector(engine, shown, q, moved, cut)
    return run


def fields(engine, shown, weight: float = 0.5) -> Callable[[str], list[str]]:
    """BM25 over each paper's title, TL;DR and keywords added to the abstract's BM25 at `weight`, in the hybrid."""
    import bm25s

    from search.parts import lexical

    retriever = bm25s.BM25()
    retriever.index([lexical.tokenize(" ".join([p.title, p.tldr, *p.keywords])) or ["\x00"]
                     for p in engine.papers], show_progress=False)
    vocab = retriever.vocab_dict
    scores = engine.rankers.lexical.scores

    def combined(query: str, question: bool = True) -> np.ndarray:
        terms = lexical.query_terms(query) if question else lexical.tokenize(query)
        ids = [vocab[t] for t in dict.fromkeys(terms) if t in vocab]
        extra = np.asarray(retriever.get_scores(ids), dtype=np.float32) if ids else 0.0
        return scores(query, question) + weight * extra

    def run(q: str) -> list[str]:
        engine.rankers.lexical.scores = combined
        try:
            return [h.paper.id for h in engine.search(q, K, "hybrid", shown, evidence=False).hits]
        finally:
            engine.rankers.lexical.scores = scores
    return run


# ---------------------------------------------------------------- pooling

def pool(args: argparse.Namespace) -> int:
    from search.engine import open_engine

    engine = open_engine(Path(args.index))
    graded = judgments(args.set)
    out = Path(args.out)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    (out / "keys").mkdir(parents=True, exist_ok=True)
    runs = {name: run for name, run in arms(engine, args.adapter, args.venue).items()
            if not args.arms or name in args.arms}
    total = 0
    for q in questions(args.set):
        found: dict[str, None] = {}
        for name, run in runs.items():
            for pid in run(q["text"]):
                found.setdefault(pid)
        todo = [pid for pid in found if pid not in graded.get(q["id"], {})]
        if not todo:
            continue
        random.Random(f"{args.seed}-{q['id']}").shuffle(todo)  # no arm's order survives
        labels = {f"P{i:02d}": pid for i, pid in enumerate(todo, 1)}
        lines = [f"# {q['id']}", "", f"Query ({q['shape']}): {q['text']}", ""]
        for label, pid in labels.items():
            p = engine.catalog.paper(pid)
            lines += [f"## {label}", f"Title: {p.title}", f"Abstract: {p.abstract}", ""]
        (out / "tasks" / f"{q['id']}.md").write_text("\n".join(lines), encoding="utf-8")
        (out / "keys" / f"{q['id']}.json").write_text(json.dumps(labels))
        total += len(todo)
    print(f"{total} papers to grade in {out / 'tasks'}", file=sys.stderr)
    return 0


def collect(args: argparse.Namespace) -> int:
    """Each task's grades ({label: 0|1|2} in grades/QID.json, written by its reader) into judgments.jsonl."""
    tasks = Path(args.tasks)
    graded = judgments(args.set)
    added = 0
    with (args.set / "judgments.jsonl").open("a", encoding="utf-8") as f:
        for keys in sorted((tasks / "keys").glob("*.json")):
            grades_file = tasks / "grades" / keys.name
            if not grades_file.is_file():
                print(f"no grades yet: {keys.stem}", file=sys.stderr)
                continue
            labels, grades = json.loads(keys.read_text()), json.loads(grades_file.read_text())
            missing = set(labels) - set(grades)
            if missing or any(g not in (0, 1, 2) for g in grades.values()):
                print(f"{keys.stem}: grades incomplete or not 0/1/2 ({sorted(missing)[:5]})", file=sys.stderr)
                continue
            for label, pid in labels.items():
                if pid not in graded.get(keys.stem, {}):
                    f.write(json.dumps({"q": keys.stem, "paper": pid, "grade": grades[label],
                                        "judge": args.judge}) + "\n")
                    graded.setdefault(keys.stem, {})[pid] = grades[label]
                    added += 1
    print(f"{added} judgments added", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- evaluation

METRICS = {"nDCG@10": "ndcg@10", "P@10 (clearly relevant)": "precision@10-l2",
           "P@5 (at least partly)": "precision@5"}


def bootstrap(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean over questions, resampled with replacement."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (BOOTSTRAP, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def evaluate(args: argparse.Namespace) -> int:
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    from search.engine import open_engine

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from report import machine, write_report

    engine = open_engine(Path(args.index))
    graded = judgments(args.set)
    qs = [q for q in questions(args.set) if q["id"] in graded]
    runs, engines = arms(engine, args.adapter, args.venue), [engine]
    if args.arms:
        runs = {name: run for name, run in runs.items() if name in args.arms}
    for other in args.other:  # another index's rankings (another model's), beside this one's
        label, _, path = other.partition("=")
        engines.append(open_engine(Path(path)))
        theirs = arms(engines[-1], venues=args.venue)
        runs.update({f"{label}: {name}": theirs[name] for name in ("hybrid", "semantic", "keyword")
                     if not args.arms or name in args.arms})
    ranked, took = {}, {}
    for name, run in runs.items():  # each arm pays its own query encoding, as a user's first query does
        for e in engines:
            e.clear_cache()
        ranked[name], times = {}, []
        for q in qs:
            t = time.perf_counter()
            ranked[name][q["id"]] = run(q["text"])
            times.append(time.perf_counter() - t)
        took[name] = 1000 * float(np.median(times))
    lines = [f"# Judged relevance: {len(qs)} researchers' questions, graded by reading", "",
             f"`python benchmarks/bench_judged.py evaluate --index {args.index}"
             + (f" --other {' '.join(args.other)}" if args.other else "")
             + (f" --venue {' '.join(repr(v) for v in args.venue)}" if args.venue else "")
             + (f" --arms {' '.join(repr(a) for a in args.arms)}" if args.arms else "")
             + (f" --set {args.set}" if Path(args.set).resolve() != Path(JUDGED).resolve() else "")
             + f" --record {Path(args.record).name}` · {machine()} · "
             f"{__import__('datetime').date.today()}", "",
             f"Index: {engine.manifest.count:,} papers ({args.index}), searched on the accepted papers"
             + (f" of {', '.join(args.venue)}" if args.venue else "") + ". "
             "Grades: 2 answers the question, 1 partly or related, 0 not (judged/README.md). Metrics by "
             "ranx; 95% intervals by bootstrap over questions (10,000 resamples); beside each arm, its difference "
             "from `hybrid` (the shipped ranking) with the interval of the difference and a two-sided paired "
             "randomization test's p (each question's sign flipped at random).",
             ""]
    for split in args.split:
        ids = [q["id"] for q in qs if q["split"] == split]
        if not ids:
            continue
        qrels = Qrels({i: {p: g for p, g in graded[i].items()} for i in ids})
        lines += [f"## {'Development' if split == 'dev' else 'Held-out'} ({len(ids)} questions)", "",
                  "| arm | " + " | ".join(METRICS) + f" | ungraded in top 10 | median ms a query (all {len(qs)}) |",
                  "|---|" + "---|" * (len(METRICS) + 2)]
        per: dict[str, dict[str, np.ndarray]] = {}
        for name in runs:
            run = Run({i: {pid: float(K - r) for r, pid in enumerate(ranked[name][i])} or {"-": 0.0} for i in ids})
            scores = ranx_evaluate(qrels, run, list(METRICS.values()), return_mean=False, make_comparable=True)
            per[name] = {m: np.asarray(scores[m], dtype=float) for m in METRICS.values()}
            ungraded = sum(pid not in graded[i] for i in ids for pid in ranked[name][i])
            cells = []
            for label, m in METRICS.items():
                lo, hi = bootstrap(per[name][m])
                cell = f"{per[name][m].mean():.3f} [{lo:.3f}, {hi:.3f}]"
                if name != "hybrid":
                    diff = per[name][m] - per["hybrid"][m]
                    dlo, dhi = bootstrap(diff)
                    cell += f" (Δ {diff.mean():+.3f} [{dlo:+.3f}, {dhi:+.3f}], p {paired_p(diff):.3f})"
                cells.append(cell)
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {ungraded} | {took[name]:.1f} |")
        lines.append("")
        for shape in ("question", "need", "problem"):
            sub = [n for n, i in enumerate(ids) if next(q for q in qs if q["id"] == i)["shape"] == shape]
            lines.append(f"- {shape} ({len(sub)}): " + ", ".join(
                f"{name} {per[name]['ndcg@10'][sub].mean():.3f}" for name in runs) + " (nDCG@10)")
        lines.append("")
    write_report(lines, Path(args.record))
    return 0


def paired_p(diff: np.ndarray, seed: int = 0, n: int = BOOTSTRAP) -> float:
    """Two-sided paired randomization test of a mean difference: signs flipped at random per question."""
    rng = np.random.default_rng(seed)
    observed = abs(diff.mean())
    flips = rng.choice([-1.0, 1.0], (n, len(diff)))
    return float(((np.abs((flips * diff).mean(axis=1)) >= observed - 1e-12).sum() + 1) / (n + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pool")
    p.add_argument("--index", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", default="judged")
    p.add_argument("--arms", nargs="+", default=[], help="pool only these arms (a new model's, say); default all")
    c = sub.add_parser("collect")
    c.add_argument("--tasks", required=True)
    c.add_argument("--judge", default="helper")
    e = sub.add_parser("evaluate")
    e.add_argument("--index", required=True)
    e.add_argument("--record", default=str(Path(__file__).resolve().parent / "results" / "judged.md"))
    e.add_argument("--split", nargs="+", choices=("dev", "heldout"), default=["dev", "heldout"],
                   help="the halves to report: a choice being made reads dev alone")
    e.add_argument("--other", nargs="+", default=[], metavar="LABEL=DIR",
                   help="another index's hybrid, semantic and keyword rankings as arms (an index built with another "
                        "model, or of other papers)")
    e.add_argument("--arms", nargs="+", default=[], help="score only these arms (default all)")
    e.add_argument("--venue", nargs="+", default=[], help="search only these venues ('ICLR 2026'), every index")
    p.add_argument("--venue", nargs="+", default=[], help="pool only these venues' papers ('ICLR 2026')")
    for cmd in (p, e):
        cmd.add_argument("--adapter", default="", help="a query adapter's matrix (.npy) as one more arm")
    for cmd in (p, c, e):
        cmd.add_argument("--set", type=Path, default=JUDGED,
                         help="the folder of questions.jsonl, split.json and judgments.jsonl (default judged/; the "
                              "cross-venue set: judged_venues/)")
    args = ap.parse_args()
    return {"pool": pool, "collect": collect, "evaluate": evaluate}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
