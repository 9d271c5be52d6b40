"""The judged-relevance set: its files agree with each other, and the harness scores a ranking as ranx
does with the grades it has (benchmarks/bench_judged.py)."""
import json
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_judged  # noqa: E402

JUDGED = ROOT / "benchmarks" / "judged"


def test_every_question_has_a_shape_and_a_half_and_every_grade_a_question():
    qs = bench_judged.questions()
    assert len(qs) == 96 and len({q["id"] for q in qs}) == 96
    for shape in ("question", "need", "problem"):
        of_shape = [q for q in qs if q["shape"] == shape]
        assert len(of_shape) == 32 and sum(q["split"] == "heldout" for q in of_shape) == 16
    ids = {q["id"] for q in qs}
    for q, grades in bench_judged.judgments().items():
        assert q in ids and set(grades.values()) <= {0, 1, 2}


def test_scores_follow_the_grades():
    from ranx import Qrels, Run, evaluate

    qrels = Qrels({"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 2}})
    perfect = Run({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 1.0}})
    worst = Run({"q1": {"c": 3.0, "b": 2.0, "a": 1.0}, "q2": {"x": 1.0}})
    good = evaluate(qrels, perfect, ["ndcg@10", "precision@10-l2"], return_mean=False)
    bad = evaluate(qrels, worst, ["ndcg@10", "precision@10-l2"], return_mean=False)
    assert np.allclose(good["ndcg@10"], 1.0) and (np.asarray(bad["ndcg@10"]) < 1).all()
    assert np.allclose(good["precision@10-l2"], [0.1, 0.1])  # one clearly relevant paper in each top 10
    lo, hi = bench_judged.bootstrap(np.array([0.2, 0.4, 0.6, 0.8]))
    assert 0.2 <= lo < 0.5 < hi <= 0.8
    assert bench_judged.paired_p(np.zeros(10) + 0.3) < 0.01 and bench_judged.paired_p(np.array([1.0, -1.0] * 5)) > 0.5
