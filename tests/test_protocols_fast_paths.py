"""The fast paths of chapter 8's protocols against the full computations they stand for.

Ranking only the first ranks of each target set (``rank_sets(..., depth=)``) must list the same
entries in the same order as the first ranks of the full ranking, and give every other entry a
position at or past the depth; evaluating P@k and nDCG@k on those ranks must give the values of
the full lists, bit for bit; the chapter's shared target sets must give the results of building
them per call.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.protocols import chapter, targets
from recmetrics.protocols.expectations import eq42_bounds
from recmetrics.protocols.targets import TargetSets, rank_sets


def _sets(seed, n_sets=40, uneven=False):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, n_sets) if not uneven else np.r_[rng.integers(1, 4, n_sets - 1), 400]
    items = np.concatenate([rng.choice(500, n, replace=False) for n in lengths])
    return TargetSets(np.arange(n_sets), items, lengths.astype(np.int64), None, np.zeros(n_sets, np.int64),
                      pd.DataFrame()), rng


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("depth", [1, 3, 10, 29, 50])
def test_rank_sets_to_a_depth_equals_the_first_ranks_of_the_full_ranking(seed, depth):
    ts, rng = _sets(seed, uneven=seed % 4 == 3)          # uneven: too sparse for a matrix, the full sort
    scores = rng.choice([0.0, 0.5, 1.0, np.nan, 2.0], len(ts.items)) if seed % 2 else rng.random(len(ts.items))
    order, pos = rank_sets(ts, scores, seed)
    top, top_pos = rank_sets(ts, scores, seed, depth=depth)
    first = pos[order] < depth
    assert np.array_equal(top, order[first])             # the same entries, in the same order
    assert np.array_equal(top_pos, np.minimum(pos, depth))


def _split(seed=0):
    ratings = rm.datasets.load("movielens-small").ratings
    return rm.splits.holdout(ratings[ratings["user"] <= 120], 0.2, seed=seed)


@pytest.mark.parametrize("design", ["TI-1R-NN(n=49)", "TI-AR-AN", "AI-AR-AN", "P1R(m=5,n=20)"])
def test_evaluate_at_cutoffs_equals_the_full_ranking(design, monkeypatch):
    train, test = _split()
    system = rm.recommenders.create("Pop").fit(train)
    metrics = ["P@10", "nDCG@10", "P@3"]
    got = targets.evaluate(system, train, test, design, metrics, threshold=4.0)
    monkeypatch.setattr(targets, "_ranks_read", lambda metrics: None)   # every set ranked whole
    want = targets.evaluate(system, train, test, design, metrics, threshold=4.0)
    pd.testing.assert_frame_equal(got.per_set, want.per_set, check_exact=True)
    pd.testing.assert_series_equal(got.aggregate, want.aggregate, check_exact=True)


def test_ranks_read_only_for_metrics_that_read_the_top_alone():
    assert targets._ranks_read(["P@10", "nDCG@20"]) == 20
    for metrics in (["P@10", "AP@10"], ["nDCG"], ["nDCG(gain=relevant)@10"], ["RR@10"]):
        assert targets._ranks_read(metrics) is None


def test_eq42_bounds_with_shared_sets_equal_the_ones_built_per_call():
    train, test = _split(1)
    system = rm.recommenders.create("UserKNN").fit(train)
    kw = dict(size=40, threshold=4.0, seed=3)
    sets = tuple(targets.build_targets(train, test, f"TI-{kind}-NN(n=40)", threshold=4.0, seed=3) for kind in ("1R", "AR"))
    assert eq42_bounds(system, train, test, 10, targets=sets, **kw) == eq42_bounds(system, train, test, 10, **kw)


def test_sparsity_curves_share_their_sets_without_changing_a_value(monkeypatch):
    train, test = _split(2)
    systems = {"Pop": rm.recommenders.create("Pop").fit(train), "kNN": rm.recommenders.create("UserKNN").fit(train)}
    kw = dict(removed=(0.0, 0.5), sizes=(20, 99), users=40, threshold=4.0, seed=0, n_bootstrap=20)
    built = []
    real_build, real_evaluate, real_bounds = chapter.build_targets, chapter.evaluate, chapter.eq42_bounds

    def counting(*a, **k):
        built.append(a[2])
        return real_build(*a, **k)

    monkeypatch.setattr(chapter, "build_targets", counting)
    got = chapter.sparsity_curves(train, test, systems, **kw)
    # per removal: AR-AN, then the 1R and AR sets of Eq. 4.2 once for both systems; the size curve
    # builds |N_u| = 20 and reuses |N_u| = 99 of the full test set
    assert sorted(built) == sorted(["TI-AR-AN", "TI-1R-NN(n=99)", "TI-AR-NN(n=99)"] * 2
                                   + ["TI-1R-NN(n=20)", "TI-AR-NN(n=20)"])
    # the same curves when every call builds its own sets, as before they were shared
    who = chapter.sample_users(test, kw["users"], kw["seed"])

    def own_sets(*a, targets=None, **k):
        return real_evaluate(*a, **{**k, "users": who}) if targets is not None and "1R" in str(a[3]) \
            else real_evaluate(*a, targets=targets, **k)

    monkeypatch.setattr(chapter, "evaluate", own_sets)
    monkeypatch.setattr(chapter, "eq42_bounds", lambda *a, targets=None, **k: real_bounds(*a, **k))
    want = chapter.sparsity_curves(train, test, systems, **kw)
    pd.testing.assert_frame_equal(got.table, want.table, check_exact=True)
