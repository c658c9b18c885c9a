"""Aggregation over users: the floor, the plain means, negative values; nDCG's gain and ERR's r_max."""
import numpy as np
import pytest

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.metrics.aggregate import MIN_GEO_MEAN, aggregate


def test_quadratic_mean_rejects_negative_values_like_the_geometric_and_harmonic():
    perfect, inverted = np.array([0.652, 0.652]), np.array([-0.652, -0.652])
    assert aggregate(perfect, "quadratic") == pytest.approx(0.652)
    for method in ("quadratic", "geometric", "harmonic"):
        with pytest.raises(InputError, match="unit=true"):
            aggregate(inverted, method)


def test_harmonic_floor_and_plain_means():
    x = np.array([0.5] * 9 + [0.0])  # one user in ten scores 0
    floored = aggregate(x, "harmonic")
    assert floored == pytest.approx(10 / (9 / 0.5 + 1 / MIN_GEO_MEAN))
    assert floored == pytest.approx(MIN_GEO_MEAN / 0.1, rel=1e-3)  # ≈ floor / share of zero users
    assert aggregate(x, "harmonic", floor=None) == 0.0
    assert aggregate(x, "geometric", floor=None) == 0.0
    assert aggregate(x + 0.5, "geometric", floor=None) == pytest.approx(np.exp(np.log(x + 0.5).mean()))
    with pytest.raises(InputError, match="floor"):
        aggregate(x, "harmonic", floor=0.0)


def _two_grades():
    qrels = rm.Qrels.from_dict({"u": {"a": 2, "b": 5}, "v": {"c": 5}}, threshold=4)
    run = rm.Run.from_lists({"u": ["a", "b"], "v": ["x", "c"]})
    return run, qrels


def test_evaluate_passes_the_floor():
    run, qrels = _two_grades()
    plain = rm.evaluate(run, qrels, ["RR@1"], aggregate="harmonic", floor=None)
    assert plain.aggregate.iloc[0] == 0.0 and plain.metadata["floor"] is None
    floored = rm.evaluate(run, qrels, ["RR@1"], aggregate="harmonic")
    assert floored.aggregate.iloc[0] == pytest.approx(2 / (1 / MIN_GEO_MEAN + 1 / MIN_GEO_MEAN))


def test_ndcg_gain_conventions():
    run, qrels = _two_grades()
    res = rm.evaluate(run, qrels, ["nDCG@2", "nDCG@2(gain=relevant)"]).per_user.loc["u"]
    # trec_eval: every positive grade is gain: (2 + 5/log2 3) / (5 + 2/log2 3)
    assert res.iloc[0] == pytest.approx((2 + 5 / np.log2(3)) / (5 + 2 / np.log2(3)))
    assert res.iloc[0] == pytest.approx(0.823, abs=5e-4)
    assert res.iloc[1] == pytest.approx((5 / np.log2(3)) / 5)  # only the relevant grade: 0.631
    with pytest.raises(InputError, match="gain must be one of"):
        rm.evaluate(run, qrels, ["nDCG@2(gain=binary)"])


def test_err_max_rating_below_the_largest_grade_is_an_error():
    run, qrels = _two_grades()
    assert np.isfinite(rm.evaluate(run, qrels, ["ERR@2(max_rating=5)"]).aggregate).all()
    with pytest.raises(InputError, match="max_rating=3 is below the largest grade"):
        rm.evaluate(run, qrels, ["ERR@2(max_rating=3)"])
