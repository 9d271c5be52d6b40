"""The judged-relevance set: its files agree with each other, and the harness's statistics answer as they
should (benchmarks/bench_judged.py; ranx, which computes its metrics, is not imported here: its first call
compiles for 40 s)."""
import json
import sys

import numpy as np

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


def test_intervals_and_the_paired_test_answer_as_they_should():
    """The harness's own statistics (the metrics are ranx's): an interval holds the mean, a constant lift is
    significant, a lift that flips sign from question to question is not."""
    lo, hi = bench_judged.bootstrap(np.array([0.2, 0.4, 0.6, 0.8]))
    assert 0.2 <= lo < 0.5 < hi <= 0.8
    assert bench_judged.paired_p(np.zeros(10) + 0.3) < 0.01 and bench_judged.paired_p(np.array([1.0, -1.0] * 5)) > 0.5
