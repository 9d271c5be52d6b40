"""The hybrid ranking's weights: chosen on the development sets, confirmed on the held-out ones.

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/bench_ranking.py --records FILE.jsonl [--out benchmarks/results/ranking.md]

FILE is what `python -m search fetch` wrote for the venue (benchmarks/bench_fetch.py serves the shared
crawl): each paper of the development corpora carries its reviews, as in an index of a fetch, so the
hybrid ranking is re-scored by the reviewers' summaries (search/parts/summaries.py) as the product's is; step 2
also gives the hybrid without them. Without --records the corpora have no reviews.

1. On every development set (queries people type: names, keywords, questions, paraphrases, titles,
   Chinese and French), each query's candidates and their signals are taken once; a grid over
   fusion.Weights picks the weights with the best mean of the sets' main figure (precision@10 for
   questions, which have many relevant papers; MRR@10 for the others). Sets count alike, whatever
   their size.
2. Every set, development and held-out, in every mode: semantic, keyword, hybrid with the weights
   shipped (fusion.DEFAULT_WEIGHTS) and with the previous fixed blend (α = 0.3, no sentences).
3. "Nothing close": the best cosine of every development query's hits, and whether a paper shares a
   word with it, against text that is no paper's subject, for NOTHING_CLOSE and NO_SHARED_WORD_CLOSE.
4. Names and keywords keep the first hit the previous blend gave them, on the conference index that the
   page serves (seeds + conference: JanusVLN is a seed paper), named by --conference:
       python index_build.py seeds ../shared/data/iclr2026_papers.jsonl --out conference-index \
           --cache .embedding_cache
The weights shipped are set by hand in search/fusion.py from step 1's output; step 2 then measures them.
"""
from __future__ import annotations

import itertools
import statistics
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from report import ENGLISH, OTHER, arguments, collect, engine_maker, main_metric, mean_metric, sets, today, write_report
from search.fusion import KINDS

PREVIOUS = dict(name=0.3, topic=0.3, title=0.3, question=0.3, description=0.3, sentence=0.0, multilingual=0.7,
                ml_abstract=1.0, ml_title=1.0, ml_sentence=0.0)
NAMED = ["JanusVLN", "GRPO", "KV cache", "Muon", "speculative decoding", "mixture of experts", "LoRA",
         "sparse autoencoders", "flow matching", "Gaussian splatting"]
# Text that is no paper's subject: a config file, a recipe, a shopping list (pasted or uploaded by mistake).
FAR = ["[server]\nport = 8501\nheadless = true\n[theme]\nbase = 'dark'",
       "preheat the oven to 180 degrees, mix flour, butter and sugar, bake for twenty minutes",
       "milk, eggs, two loaves of bread, tomatoes, washing-up liquid",
       "Dear Sir or Madam, please find attached the invoice for March.",
       "asdf qwer zxcv uiop hjkl",
       "今天晚上吃什么？我想做红烧肉",  # what shall we eat tonight? braised pork
       "recette de la tarte aux pommes de ma grand-mère avec du beurre"]


def score_set(collected: list[tuple], weights, metric: str) -> float:
    from search.fusion import rank

    ranked = [[ids[r] for r in rank(cands, weights, kind)[0][:10]] for cands, kind, _, ids in collected]
    return mean_metric(ranked, [relevant for _, _, relevant, _ in collected], metric)


def without_summaries(engine):
    """The engine ranking its index as one without reviews would (the same index, the view left out)."""
    engine.rankers.summaries = None
    return engine


def tune(collected: dict[str, list[tuple]], base) -> tuple[object, list[str]]:
    """Grid search: English weights on the English sets, multilingual ones on zh and fr."""
    grid = [round(x, 2) for x in np.arange(0.1, 1.0, 0.1)]
    best, best_value, lines = base, -1.0, []
    english = [n for n in ENGLISH if n in collected]
    for sentence in (0.0, 0.2, 0.3, 0.4, 0.5, 0.6):
        w = replace(base, sentence=sentence)
        for kind in KINDS:  # the kinds split the queries: each α is chosen alone
            values = {a: statistics.mean(score_set(collected[n], replace(w, **{kind: a}), main_metric(n))
                                         for n in english) for a in grid}
            w = replace(w, **{kind: max(values, key=values.get)})
        value = statistics.mean(score_set(collected[n], w, main_metric(n)) for n in english)
        lines.append(f"| sentence {sentence} | " + ", ".join(f"{k} α {getattr(w, k)}" for k in KINDS)
                     + f" | {value:.4f} |")
        print(lines[-1], flush=True)
        if value > best_value:
            best, best_value = w, value
    other = [n for n in OTHER if n in collected]
    ml_best, ml_value = best, -1.0
    per_title: dict[float, tuple[float, dict]] = {}  # the best setting for each title weight
    for t, s, alpha in itertools.product((0.0, 0.25, 0.5, 1.0), (0.0, 0.5, 1.0, 2.0), (0.6, 0.7, 0.8, 0.9, 1.0)):
        w = replace(best, ml_abstract=1.0, ml_title=t, ml_sentence=s, multilingual=alpha)
        values = {n: score_set(collected[n], w, "MRR@10") for n in other}
        value = statistics.mean(values.values())
        if value > per_title.get(t, (-1.0,))[0]:
            per_title[t] = (value, values)
        if value > ml_value:
            ml_best, ml_value = w, value
    for t, (value, values) in per_title.items():
        lines.append(f"| multilingual: title {t}, best sentence share and α | "
                     + ", ".join(f"{n} {v:.3f}" for n, v in values.items()) + f" | {value:.4f} |")
        print(lines[-1], flush=True)
    lines.append(f"| multilingual: title {ml_best.ml_title}, sentence {ml_best.ml_sentence} "
                 f"| α {ml_best.multilingual} | {ml_value:.4f} |")
    print(lines[-1], flush=True)
    return ml_best, lines


RESCORED = "; the shipped column re-scored by the reviewers' summaries"


def names_section(conference: Path, model) -> list[str]:
    """Step 4: the first hit of each NAMED query under the shipped ranking and the previous blend."""
    from search.engine import Engine
    from search.index import load_index
    from search.fusion import Weights

    data = load_index(conference)
    now_e, before_e = Engine(data, model), without_summaries(Engine(data, model, weights=Weights(**PREVIOUS)))
    lines = ["", "## 4. Names and keywords keep their first hits", "",
             f"On the conference index ({len(data.papers):,} papers, seeds included"
             f"{RESCORED if now_e.rankers.summaries else ''}).",
             "", "| query | first hit, shipped ranking | first hit, previous α=0.3 | same |", "|---|---|---|---|"]
    for text in NAMED:
        now, before = (e.search(text, 1, evidence=False).hits[0].paper for e in (now_e, before_e))
        lines.append(f"| {text} | {now.title[:60]} | {before.title[:60]} | {'yes' if now.id == before.id else 'no'} |")
    print("\n".join(lines[-len(NAMED):]))
    return lines


def main() -> None:
    ap = arguments("ranking.md")
    ap.add_argument("--tune-only", action="store_true", help="step 1 only: print the weights chosen on dev")
    ap.add_argument("--records", type=Path, default=None,
                    help="a fetched venue (python -m search fetch): the papers' reviews, joined by id")
    ap.add_argument("--conference", type=Path, default=None,
                    help="the conference index (seeds + conference) for step 4; without it step 4 is skipped")
    ap.add_argument("--names-only", action="store_true", help="step 4 alone, on --conference, into --out")
    args = ap.parse_args()

    from search.encoding.embed import load_model
    from search.evaluate import METRICS, evaluate, load_queries, read_qrels
    from search.index import load_index
    from search.fusion import DEFAULT_WEIGHTS, Weights

    model = load_model()
    if args.names_only:
        if args.conference is None:
            ap.error("--names-only needs --conference")
        write_report([f"Command: python benchmarks/bench_ranking.py --names-only --conference DIR (here: "
                      f"{', '.join(Path(i).name for i in load_index(args.conference).manifest.inputs)})",
                      *names_section(args.conference, model)], args.out)
        return
    engine_for = engine_maker(model, args.cache, args.records)

    lines = ["Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && "
             "python benchmarks/make_devsets.py --seed 1 --out .testsets && python benchmarks/bench_ranking.py"
             + (" --records FILE (a fetch of the shared crawl: the papers' reviews)" if args.records else "")
             + f" · {today()}", ""]
    collected = {n: collect(engine_for(d, DEFAULT_WEIGHTS), load_queries(d), read_qrels(d, "test"))
                 for n, d in sets(args.devsets).items()}
    chosen, grid_lines = tune(collected, DEFAULT_WEIGHTS)
    lines += ["## 1. Weights chosen on the development sets", "",
              "Best per sentence share (each kind's α chosen on its own queries); objective: mean over the English "
              "sets of MRR@10 (P@10 for questions). Multilingual weights: mean MRR@10 over zh and fr.", "",
              "| setting | α per kind of query | objective |", "|---|---|---|", *grid_lines, "",
              f"Best: `{chosen}`", f"Shipped: `{DEFAULT_WEIGHTS}`", "",
              "The grid weighs the blend alone: the reviewers' summaries re-score its 100 best after it, with "
              "their weight chosen on these sets by benchmarks/experiments/bench_views.py (search/parts/summaries.py).", ""]
    if args.tune_only:
        return

    lines += ["## 2. Every set, every mode", "",
              "| set | queries | mode | " + " | ".join(METRICS) + " | median ms |", "|---" * (len(METRICS) + 4) + "|"]
    best_cosines: dict[bool, list[float]] = {False: [], True: []}
    flagged = 0
    for split, root in (("dev", args.devsets), ("held-out", args.testsets)):
        for name, dataset in sets(root).items():
            queries, qrels = load_queries(dataset), read_qrels(dataset, "test")
            shipped = engine_for(dataset, DEFAULT_WEIGHTS)
            variants = [("", shipped, ["semantic", "keyword", "hybrid"])]
            if shipped.rankers.summaries is not None:
                variants.append((" (without the reviewers' summaries)",
                                 without_summaries(engine_for(dataset, DEFAULT_WEIGHTS)), ["hybrid"]))
            variants.append((" (previous α=0.3)", without_summaries(engine_for(dataset, Weights(**PREVIOUS))),
                             ["hybrid"]))
            for label, engine, modes in variants:
                for mode, r in evaluate(engine, queries, qrels, modes).items():
                    lines.append(f"| {split} {name} | {r['queries']} | {mode}{label if mode == 'hybrid' else ''} | "
                                 + " | ".join(f"{r[m]:.3f}" for m in METRICS) + f" | {r['median_ms']:.1f} |")
                    print(lines[-1], flush=True)
            if split == "dev":
                for text in queries.values():
                    result = shipped.search(text, 10, evidence=False)
                    best_cosines[result.space == "multilingual"].append(max(h.cosine for h in result.hits))
                    flagged += "Nothing in this index is close" in result.message

    engine = engine_for(args.devsets / "keywords", DEFAULT_WEIGHTS)
    lines += ["", "## 3. Nothing close", "",
              f"Development queries told \"nothing close\": {flagged} of "
              f"{sum(len(v) for v in best_cosines.values())}.", "",
              "| queries | space | lowest best cosine | 1st percentile | median | a paper shares a word | told |",
              "|---|---|---|---|---|---|---|"]
    for space, values in best_cosines.items():
        if values:
            lines.append(f"| development queries | {'multilingual' if space else 'English'} | {min(values):.3f} | "
                         f"{np.percentile(values, 1):.3f} | {np.median(values):.3f} | | |")
    for text in FAR:
        result = engine.search(text, 10, evidence=False)
        shared = bool(engine.rankers.lexical.scores(text).max() > 0)
        lines.append(f"| far: {text[:40]!r} | {result.space} | {max(h.cosine for h in result.hits):.3f} | | | "
                     f"{'yes' if shared else 'no'} | {'yes' if 'Nothing in this index' in result.message else 'NO'} |")
    print("\n".join(lines[-len(FAR) - 6:]))
    if args.conference is None:
        lines += ["", "## 4. Names and keywords keep their first hits", "", "Skipped: no --conference index."]
    else:
        lines += names_section(args.conference, model)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
