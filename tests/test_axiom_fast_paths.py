"""The fast paths of chapter 3's axioms against the computations they stand for.

* ``score_lists`` makes its Qrels, Run and profile from arrays when it can: every score must be the
  one of the tables it builds otherwise, bit for bit;
* ``evaluate`` draws each universal axiom's scenes once for every metric scored together: every
  cell must be the one a metric's own check gives (verdict, count, message, examples);
* ``list_pairs`` sorts the pairs with one stable sort: the order of the three-key sort.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.meta import axioms as ax
from recmetrics.metrics import diversity as dv
from recmetrics.metrics.diversity import handmade

METRICS = ["ab-nDCG@5", "ab-nDCG@5(profile=test)", "a-nDCG@4", "NRBP", "EU", "RBU@5", "S-Recall@3", "S-RR",
           "ERR-IA@5", "P-IA@3", "nDCG-IA@5", "P@3", "nDCG@5", "AP", "RR@4", "ERR@5"]


def _case(seed):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(1, 4))
    labels = [f"g{a}" for a in range(c)]
    items = [f"i{t}" for t in range(int(rng.integers(2, 9)))]
    aspects = {i: tuple(a for a in labels if rng.random() < 0.5) for i in items + ["x"]}
    ratings = {i: float(rng.integers(0, 6)) for i in items if rng.random() < 0.7}
    ratings["x"] = 5.0                                  # an unlisted relevant judgment
    lists = [list(rng.permutation(items)[:int(rng.integers(1, len(items) + 1))]) for _ in range(int(rng.integers(1, 4)))]
    weights = {a: float(rng.integers(0, 4)) for a in labels}
    weights[labels[0]] = max(weights[labels[0]], 1.0)    # some interest (zero weights are left out)
    per_list = bool(seed % 2)
    profile = [dict(weights, **{labels[-1]: float(k)}) for k in range(len(lists))] if per_list else weights
    return lists, ratings, aspects, profile


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("seed", range(40))
def test_score_lists_from_arrays_equals_the_tables(seed, monkeypatch):
    lists, ratings, aspects, profile = _case(seed)
    got = dv.score_lists(lists, ratings, aspects, METRICS, profile=profile)
    monkeypatch.setattr(handmade, "_made_directly", lambda *a, **k: None)
    want = dv.score_lists(lists, ratings, aspects, METRICS, profile=profile)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.parametrize("profile", [None, {"g0": 0.0}, {"g0": -1.0}, {"g0": float("nan")}])
def test_score_lists_builds_the_tables_when_the_profile_is_not_plain_weights(profile):
    assert handmade._made_directly([["a"]], [(0, "a", 5.0)], [profile], 4.0, 5.0) is None


def test_score_lists_builds_the_tables_for_other_ids_and_grades():
    weights = [{"g0": 1.0}]
    assert handmade._made_directly([[1, 2]], [(0, 1, 5.0)], weights, 4.0, 5.0) is None      # integer ids
    assert handmade._made_directly([["a"]], [(0, "a", float("inf"))], weights, 4.0, 5.0) is None
    assert handmade._made_directly([[]], [(0, "a", 5.0)], weights, 4.0, 5.0) is None        # an empty list


def _cells(report):
    return {k: (r.satisfied, r.basis, r.cases, r.message, str(r.example), [str(e) for e in r.counterexamples])
            for k, r in report.results.items()}


@pytest.mark.parametrize("zero_weights", [False, True])
def test_metrics_searched_together_get_their_own_searchs_results(zero_weights):
    metrics = ["ab-nDCG@10", "EU", "a-nDCG@10", "S-RR", "RBU@3", "nDCG@10"]   # RBU@3: shorter lists
    axioms = ["Pri", "Deep", "AspRel", "MoreAsp", "MissOverNon"]
    together = ax.evaluate(metrics, axioms, max_examples=15, seed=4, zero_weights=zero_weights, n_counterexamples=2)
    alone = {}
    for m in metrics:
        for a in axioms:
            r = ax.check(a, m, max_examples=15, seed=4, zero_weights=zero_weights, n_counterexamples=2)
            alone[(r.metric, a)] = (r.satisfied, r.basis, r.cases, r.message, str(r.example),
                                    [str(e) for e in r.counterexamples])
    assert _cells(together) == alone
    assert any(r.basis == "search" for r in together.results.values())      # some cells rest on the shared search


@pytest.mark.parametrize("seed", range(8))
def test_list_pairs_order_is_the_three_key_sort(seed):
    rng = np.random.default_rng(seed)
    aspects = {f"i{j}": tuple(a for a in "ABCDE" if rng.random() < 0.4) for j in range(30)}
    items = np.array([rng.permutation(list(aspects))[:7] for _ in range(9)])
    valid = np.arange(7)[None, :] < rng.integers(0, 8, 9)[:, None]
    p = dv.list_pairs(items, valid, aspects)
    assert np.array_equal(p.order, np.lexsort((p.flat, p.aspect, p.flat // 7)))
    assert np.array_equal(p.group, (p.flat // 7 * 6 + p.aspect)[p.order])
