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


# ------------------------------------------------------------------ rec_eval's reading of the geometric mean
def _rec_eval_case():
    """Three users, lists of 4, threshold 4. rec_eval 10.6 (github dvalcarce/rec_eval, built from its
    sources) on these files, ``rec_eval -l 4 -m gm_set_F -m gm_recip_rank -m gm_set_P``, prints
    gm_set_F 0.5109, gm_recip_rank 0.5503, gm_set_P 0.0085."""
    qrels = rm.Qrels.from_dict({"u1": {"a": 5, "b": 4, "c": 2}, "u2": {"d": 5, "e": 1}, "u3": {"f": 4}}, threshold=4)
    run = rm.Run.from_lists({"u1": ["x", "c", "a", "y"], "u2": ["x", "e", "y", "z"], "u3": ["x", "f", "y", "z"]})
    return run, qrels


def test_gf1_and_gmrr_under_rec_evals_reading_on_a_hand_case():
    run, qrels = _rec_eval_case()
    ev = rm.evaluate(run, qrels, ["F1@4", "RR@4", "P@4"])
    f1, rr, p = (ev.per_user[c].to_numpy() for c in ev.per_user.columns)
    # per user: u1 1 hit (a, rank 3) of |R| = 2: P 1/4, R 1/2, F1 = 2·(1/8)/(3/4) = 1/3, RR 1/3;
    # u2 no hit: F1 = RR = P = 0; u3 1 hit (f, rank 2) of |R| = 1: P 1/4, R 1, F1 = 2·(1/4)/(5/4) = 0.4, RR 1/2
    assert np.allclose(f1, [1 / 3, 0, 0.4]) and np.allclose(rr, [1 / 3, 0, 0.5]) and np.allclose(p, [0.25, 0, 0.25])
    # rec_eval: m_gm_set_F.c / m_gm_recip_rank.c write log max(v, 1e-5) only on a hit; trec_eval.c zeroes every
    # measure per user, so u2 enters as log 1 = 0: GF1 = exp((log 1/3 + 0 + log 0.4) / 3) = (2/15)^(1/3)
    assert aggregate(f1, "geometric(rec_eval)", metric="F1@4") == pytest.approx((2 / 15) ** (1 / 3))
    assert round(float((2 / 15) ** (1 / 3)), 4) == 0.5109                      # rec_eval prints gm_set_F 0.5109
    assert aggregate(rr, "geometric", reading="rec_eval", metric="RR@4") == pytest.approx((1 / 6) ** (1 / 3))
    assert round(float((1 / 6) ** (1 / 3)), 4) == 0.5503                       # gm_recip_rank 0.5503
    # gm_set_P floors the zero: (1/4 · 1e-5 · 1/4)^(1/3) under both readings
    gp = (1 / 16 * MIN_GEO_MEAN) ** (1 / 3)
    assert aggregate(p, "geometric(rec_eval)", metric="P@4") == pytest.approx(gp) == aggregate(p, "geometric")
    assert round(gp, 4) == 0.0085                                               # gm_set_P 0.0085
    # trec_eval's reading (the default) floors u2 in GF1 too: (2/15 · 1e-5)^(1/3)
    assert aggregate(f1, "geometric") == pytest.approx((2 / 15 * MIN_GEO_MEAN) ** (1 / 3))
    # the same through evaluate(): one metric name per row
    means = rm.evaluate(run, qrels, ["F1@4", "RR@4", "P@4"], aggregate="geometric(rec_eval)").aggregate
    assert np.allclose(means.to_numpy(), [(2 / 15) ** (1 / 3), (1 / 6) ** (1 / 3), gp])


def test_rec_evals_reading_floors_users_without_a_list():
    """rec_eval -c patches a user the run has no list for in at log 1e-5 (te_calc_avg_meas_s_gm)."""
    f1 = np.array([[1 / 3, 0.0, 0.4], [1 / 3, 0.0, 0.0]])
    listed = np.array([True, True, False])                   # u3 has no list in the run
    got = aggregate(f1, "geometric(rec_eval)", axis=1, metric=["F1@4", "F1@4"], listed=listed)
    assert got[0] == pytest.approx((2 / 15) ** (1 / 3))
    assert got[1] == pytest.approx((1 / 3 * MIN_GEO_MEAN) ** (1 / 3))   # u2: log 1; u3 (no list): log 1e-5
    # evaluate() knows which users have no list: u3 left out of the run enters at the floor
    # (rec_eval -c -l 4 -m gm_set_F on the case's qrels and this run prints 0.0149)
    run, qrels = _rec_eval_case()
    short = rm.Run.from_lists({"u1": ["x", "c", "a", "y"], "u2": ["x", "e", "y", "z"]})
    ev = rm.evaluate(short, qrels, ["F1@4"], aggregate="geometric(rec_eval)")
    assert ev.aggregate.iloc[0] == pytest.approx((1 / 3 * MIN_GEO_MEAN) ** (1 / 3))
    assert round(float(ev.aggregate.iloc[0]), 4) == 0.0149
    rows = aggregate(f1.T, "geometric(rec_eval)", axis=0, metric=["F1", "P"])   # one name per column
    assert rows[0] == pytest.approx((2 / 15) ** (1 / 3)) and rows[1] == pytest.approx((1 / 3 * 1e-10) ** (1 / 3))


@pytest.mark.parametrize("kw, match", [
    (dict(method="geometric(rec-eval)", metric="F1"), "reading of the geometric mean must be one of"),
    (dict(method="geometric", reading="receval", metric="F1"), r"\('trec_eval', 'rec_eval'\)"),
    (dict(method="harmonic(rec_eval)", metric="F1"), "one of the geometric mean"),
    (dict(method="arithmetic", reading="rec_eval", metric="F1"), "one of the geometric mean"),
    (dict(method="geometric(rec_eval)"), "pass metric="),
    (dict(method="geometric(rec_eval)", reading="trec_eval", metric="F1"), "says reading 'rec_eval'"),
    (dict(method="geometric(rec_eval)", metric="F2@4"), "F2"),
    (dict(method="geometric(rec_eval)", metric=["F1", "RR", "P"]), "names 3 metric"),
    (dict(method="geometric(rec_eval)", metric="F1", listed=[1, 0, 1]), "boolean"),
    (dict(method="geometric(rec_eval)", metric="F1", listed=np.array([True, False])), "shape"),
])
def test_bad_readings_are_rejected_by_name(kw, match):
    x = np.array([[0.5, 0.0, 0.2], [0.1, 0.0, 0.0]])
    with pytest.raises(InputError, match=match):
        aggregate(x, axis=1, **kw)


def test_a_study_keeps_the_reading_and_rejects_a_bad_one():
    from recmetrics.metrics.aggregate import aggregate_name, method_name, zero_counts_as

    assert aggregate_name("gm(rec_eval)") == "geometric(rec_eval)" and aggregate_name("gm") == "geometric"
    assert method_name("geometric(trec_eval)") == "geometric"
    with pytest.raises(InputError, match="only trec_eval's reading"):
        method_name("geometric(rec_eval)")    # e.g. the explorers: refused, not read as trec_eval's
    assert [zero_counts_as("rec_eval", m) for m in ("F1@10", "mrr", "recip_rank@5", "AP@100", "ERR")] == \
        ["one", "one", "one", "floor", "floor"]
    with pytest.raises(InputError, match="reading of the geometric mean"):
        rm.study.Study("movielens-small", ["Pop"], ["P"], [10], aggregate="geometric(recEval)", cache=False)
