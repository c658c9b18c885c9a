"""The robustness study's shortcuts equal the plain computations they replace, bit for bit:
continued sums over ascending cut-offs (:meth:`Judged.top_sums`) and ``per_user``, counts before a
hit in integers and in floats, ``safe_div``'s whole-vector division and ``divide(where=)``, row
offsets counted and searched, a deterministic scenario's kept codes and ``order()[:k]``, both ways
:func:`mask_judged` reads ascending rows, and means over scores checked for NaN once or per system."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.data.qrels import Qrels
from recmetrics.data.run import Run
from recmetrics.errors import InputError
from recmetrics.evaluation import parse_metrics, score_judged
from recmetrics.judged import judge
from recmetrics.meta import reduced_sets as rs
from recmetrics.metrics.gains import safe_div


@pytest.fixture(scope="module")
def judged():
    """Tied and fractional grades, pooled-but-unjudged labels, lists shorter than the judgments, users
    without a list or without a relevant item."""
    rng = np.random.default_rng(7)
    rows = []
    for u in range(200):
        items = rng.choice(90, size=rng.integers(1, 50), replace=False)
        grades = rng.choice([-1.0, 0.5, 1.0, 3.0, 4.0, 4.0, 4.5, 5.0], size=len(items))
        if u % 9 == 0:
            grades = np.minimum(grades, 3.0)
        rows += [(u, f"i{i}", g) for i, g in zip(items, grades)]
    qrels = Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"]), threshold=4.0, negative="unjudged")
    lists = {u: [f"i{i}" for i in rng.permutation(90)[:rng.integers(0, 70)]] for u in range(200)}
    run = Run.from_lists({u: items for u, items in lists.items() if items})
    return judge(run, qrels, depth=60, users="all")


def test_top_sums_equal_per_user_at_every_cut_off_in_any_order(judged):
    j = judged
    rng = np.random.default_rng(1)
    weights = rng.standard_normal(len(j.hits.rows)) * 10.0 ** rng.integers(-6, 6, len(j.hits.rows))
    masks = {"rel": j.hit_rel, "some": rng.random(len(j.hits.rows)) < 0.4, "all": None}
    for order in ((1, 3, 10, 40, 60, 80), (80, 60, 10, 3, 1), (10, 3, 40, 1, 60)):
        j.__dict__.pop("_top_sums", None)
        for name, mask in masks.items():
            for w in (weights, 1.0):
                key = (name, np.ndim(w))
                for k in order:
                    sel = j.hits.cols < k if mask is None else mask & (j.hits.cols < k)
                    want = j.per_user(w, sel)
                    got = j.top_sums(key, w, mask, k)
                    assert got.tobytes() == want.tobytes(), (name, k, order)


def test_counts_before_a_hit_in_integers_equal_floats(judged):
    for mask in (judged.hit_rel, judged.hit_nonrel, judged.hits.vals < 0):
        assert judged.before(mask).tobytes() == judged.before(mask.astype(np.float64)).tobytes()
    assert judged.before(np.zeros(0, dtype=bool)).dtype == np.float64


def test_offsets_counted_equal_offsets_searched(judged):
    assert np.array_equal(judged.hit_offsets, np.searchsorted(judged.hits.rows, np.arange(len(judged) + 1)))


def test_safe_div_of_vectors_equals_divide_where():
    rng = np.random.default_rng(3)
    num = np.r_[rng.standard_normal(50), np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 2.0]
    den = np.r_[rng.standard_normal(50), 0.0, 2.0, 3.0, 0.0, -1.0, np.nan, -0.0]
    want = np.divide(num, den, out=np.zeros(len(num)), where=den > 0)
    assert safe_div(num, den).tobytes() == want.tobytes()
    assert safe_div(np.arange(3), 2.0).tolist() == [0.0, 0.5, 1.0]             # broadcast: the general path
    assert safe_div(1.0, 0.0).shape == ()


@pytest.mark.parametrize("scenario", ["popular-items", "large-users"])
def test_kept_codes_equal_the_first_of_the_order(judged, scenario):
    profile = pd.Series(np.random.default_rng(0).integers(1, 6, 200), index=np.arange(200))
    fold = rs._Fold(judged.qrels, profile)
    n = len(fold.item_pop) if scenario.endswith("items") else len(fold.user_size)
    for k in (1, 2, n // 3, n // 2, n - 1, n):
        for seed in range(4):
            want = np.zeros(n, dtype=bool)
            want[fold.order(scenario, np.random.default_rng(seed))[:k]] = True
            rng = np.random.default_rng(seed)
            assert fold.first(scenario, k, rng).tobytes() == want.tobytes()
            assert rng.random() == np.random.default_rng(seed).random(n + 1)[-1]   # the same draws


def test_mask_judged_reads_ascending_rows_alike_both_ways(judged, monkeypatch):
    keep = np.random.default_rng(5).random(len(judged.hits.rows)) < 0.6
    specs = parse_metrics(["P@5", "AP@60", "nDCG@10", "ERR@20", "bpref@5", "infAP@60"])
    for rows in (np.arange(len(judged)), np.arange(0, len(judged), 3), np.arange(0, len(judged), 25), np.array([7])):
        got = {}
        for ratio in (0, 10 ** 9):
            monkeypatch.setattr(rs, "SPAN_RATIO", ratio)
            m = rs.mask_judged(judged, keep, judged.qrels, rows)
            got[ratio] = (m.hits.rows.tobytes(), m.hits.cols.tobytes(), score_judged(m, specs).tobytes())
        assert got[0] == got[10 ** 9]


def test_means_checked_once_equal_means_checked_per_system():
    rng = np.random.default_rng(2)
    x = rng.random((300, 7))
    specs = parse_metrics(["P@5", "AP@5", "nDCG@5", "RR@5", "ERR@5", "bpref@5", "infAP@5"])
    labels = rng.integers(0, 3, 300)
    for aggs in (("arithmetic",), ("arithmetic", "geometric", "harmonic")):
        fast = rs._means(x, aggs, specs, labels, 3, clean=True)
        slow = rs._means(x, aggs, specs, labels, 3)
        for (a, ra), (b, rb) in zip(fast, slow):
            assert a.tobytes() == b.tobytes() and ra[0].tolist() == rb[0].tolist() == [0, 1, 2] \
                and ra[1].tobytes() == rb[1].tobytes()


def test_a_nan_score_is_refused_only_when_it_is_aggregated():
    from recmetrics.study import Study

    rng = np.random.default_rng(0)
    q = pd.DataFrame({"user": np.repeat(np.arange(30), 4), "item": np.tile(np.arange(4), 30),
                      "rating": rng.choice([1.0, 4.0, 5.0], 120)})
    runs = [Run.from_lists({u: list(rng.permutation(6)) for u in range(30)}, name=f"s{s}") for s in range(3)]
    st = Study.from_runs(runs, [Qrels(q)], ["P"], [3], progress=False)
    ctx = rs._Context(st, parse_metrics(["P@3"]), None)
    values, kept, cols, _, _ = ctx._full_rows()[0]
    bad = values.copy()
    bad[5] = np.nan
    assert not np.isnan(ctx._aggregate([[(values, kept, cols, None, None)]], "arithmetic")[0]).any()
    with pytest.raises(InputError, match="NaN"):
        ctx._aggregate([[(bad, kept, cols, None, None)]], "arithmetic")
    left_out = kept.copy()
    left_out[5] = False                                  # the NaN row is not aggregated: no error, as before
    got = ctx._aggregate([[(bad, left_out, cols, None, None)]], "arithmetic")[0]
    want = ctx._aggregate([[(values, left_out, cols, None, None)]], "arithmetic")[0]
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("mean", ["arithmetic", "geometric", "harmonic", "quadratic"])
def test_replicate_means_in_one_block_equal_the_mean_of_each_replicate(mean):
    """Every replicate's mean from one padded block equals its rows' own mean bit for bit (sign of
    zero included): empty replicates, one row, one spec (summed pairwise by numpy), ties and -0.0."""
    from recmetrics.metrics.aggregate import transformed, untransformed

    rng = np.random.default_rng(5)
    for trial in range(150):
        specs, n, reps = int(rng.integers(1, 12)), int(rng.integers(1, 700)), int(rng.integers(1, 33))
        x = [rng.random((n, specs)), rng.integers(0, 4, (n, specs)) / 3.0,
             np.where(rng.random((n, specs)) < 0.5, 0.0, rng.random((n, specs)))][trial % 3]
        if mean == "arithmetic" and trial % 5 == 0:
            x = np.where(rng.random((n, specs)) < 0.5, -0.0, 0.0)
        labels = rng.integers(0, reps, n)
        m, t = transformed(x.T, mean, axis=1)
        order = np.argsort(labels, kind="stable")
        edges = np.searchsorted(labels[order], np.arange(reps + 1))
        rows = t.T[order]
        have, values = rs._replicate_means(m, rows, edges)
        expected = [r for r in range(reps) if edges[r + 1] > edges[r]]
        assert have.tolist() == expected
        for r, v in zip(have, values):
            ref = untransformed(m, rows[edges[r]:edges[r + 1]].T.mean(axis=1))
            assert np.array_equal(v, ref, equal_nan=True) and np.array_equal(np.signbit(v), np.signbit(ref))
