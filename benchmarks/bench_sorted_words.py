"""The relevance floor of a sorted list ranked by words (the build's words stage: no abstract embedded yet), on
the 4,302 ICLR papers of ../shared, as the engine ranks them then (BM25 alone, `Result.by_words`).

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/bench_sorted_words.py [--out benchmarks/results/sorted_words.md]

A sort other than relevance re-orders the SORT_POOL (30) most relevant papers, keeping those whose score is at
least a share of the best one's (bench_sorted.py chose the shares of the cosine and the hybrid match score).
Ranked by words there is neither: the floor is a share of the best BM25 score. For each share, over each judged
query's pool: precision and recall of what is kept, how many are kept, and how many relevant papers are among
the 10 shown once the kept ones are sorted by rating (the objective, as in bench_sorted.py). The share is the
one that shows the most relevant papers on the development questions and keyword queries (their mean); the
held-out sets confirm it.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_sorted import floor_figures, pools
from report import SHARED, machine, today, write_report

ROOT = Path(__file__).resolve().parent.parent
FLOORS = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
SCORE = 1  # in a pool's tuples (cosine, score, relevant, rating): the score, BM25 here


class Stopped(Exception):
    pass


def words_stage(out: Path, cache: Path):
    """An index of the shared papers stopped at its words stage (every paper, BM25, no vector), and its engine."""
    from search.build import build_index
    from search.encoding.embed import load_model
    from search.engine import Engine
    from search.index import load_index

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "abstracts":
            raise Stopped

    model = load_model()
    try:
        build_index([SHARED], out, model=model, cache_dir=cache, words_first=1, explore=False, sentences=False,
                    summaries=False, review_search=False, progress=stop)
    except Stopped:
        pass
    return Engine(load_index(out), model)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devsets", type=Path, default=ROOT / ".devsets")
    ap.add_argument("--testsets", type=Path, default=ROOT / ".testsets")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "sorted_words.md")
    args = ap.parse_args()

    from search.engine import WORDS_FLOOR
    from search.evaluate import load_queries, read_qrels

    with tempfile.TemporaryDirectory() as tmp:
        # a cache of its own: with the abstracts' vectors cached the build would publish them, not words alone
        engine = words_stage(Path(tmp) / "index", Path(tmp) / "cache")
        assert engine.search("attention", 5).by_words, "the index must rank by words"
        pooled = {(split, name): pools(engine, load_queries(root / name), read_qrels(root / name, "test"))
                  for split, root in (("dev", args.devsets), ("held-out", args.testsets))
                  for name in ("questions", "keywords")}

    def objective(share: float) -> float:  # questions and keyword queries count alike
        return statistics.mean(floor_figures(pooled[("dev", name)], share, SCORE)["shown"]
                               for name in ("questions", "keywords"))

    chosen = max(FLOORS, key=objective)
    lines = [f"Machine: {machine()} · {today()}",
             "Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && python benchmarks/make_devsets.py "
             "--seed 1 --out .testsets && python benchmarks/bench_sorted_words.py", "",
             "## The relevance floor of a sorted list ranked by words", "",
             "The 4,302 papers at the build's words stage (no abstract embedded: every query ranked by BM25 alone, "
             "`Result.by_words`). Of each query's 30 best by BM25, those whose BM25 is at least the share × the best "
             "one's. Precision: of what is kept; recall: of the pool's relevant papers; kept: median papers kept; "
             "shown: relevant papers among the 10 shown once the kept ones are sorted by rating.", "",
             "| set | share | precision | recall | kept | relevant among the 10 shown |", "|---|---|---|---|---|---|"]
    for (split, name), pooled_set in pooled.items():
        for share in FLOORS:
            f = floor_figures(pooled_set, share, SCORE)
            mark = " (shipped)" if share == WORDS_FLOOR else ""
            lines.append(f"| {split} {name} ({len(pooled_set)}) | {share:.2f}{mark} | {f['precision']:.3f} | "
                         f"{f['recall']:.3f} | {f['kept']:g} | {f['shown']:.2f} |")
            print(lines[-1], flush=True)
    lines += ["", f"Most relevant papers shown, mean of the development questions and keyword queries: share "
              f"{chosen:.2f} ({objective(chosen):.3f}; unfloored {objective(0.0):.3f}). Shipped: "
              f"{WORDS_FLOOR:.2f}. Share 0.00 keeps the whole pool (a sort before the floor)."]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
