"""Claims of chapters 01 and 02 (recmetrics.meta.baseline_claims): verdicts through the one rule."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.errors import InputError
from recmetrics.meta import baseline_claims as bc
from recmetrics.meta import findings


def test_paired_difference_is_paired_and_checked():
    a = pd.Series([0.5, 0.6, 0.7], index=["u1", "u2", "u3"])
    b = pd.Series([0.4, 0.5, 0.6, 9.0], index=["u1", "u2", "u3", "u4"])  # u4 has no partner: left out
    d = bc.paired_difference(a, b)
    assert d["n"] == 3 and d["difference"] == pytest.approx(0.1) and d["se"] == pytest.approx(0.0, abs=1e-12)
    assert d["mean_b"] == pytest.approx(0.5)
    with pytest.raises(InputError, match="share no evaluation unit"):
        bc.paired_difference(a, pd.Series([1.0], index=["x"]))
    with pytest.raises(InputError, match="NaN"):
        bc.paired_difference(a, pd.Series([0.1, np.nan, 0.2], index=a.index))
    with pytest.raises(InputError, match="once per system"):
        bc.paired_difference(pd.Series([1.0, 2.0], index=["u", "u"]), a)


def _long(values):
    """evaluate_systems-like long table from {system: [[fold0 users...], [fold1 users...]]} for one metric."""
    rows = [(s, f, u, "P@10", v) for s, folds in values.items() for f, users in enumerate(folds)
            for u, v in enumerate(users)]
    return pd.DataFrame(rows, columns=["system", "fold", "user", "metric", "value"])


def test_orderings_decide_against_two_standard_errors():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 0.2, size=(2, 200))
    clear = _long({"Pop": base + 0.05, "Random": base, "EASE": base + 0.10})
    table = findings.assess(bc.ZOO_CLAIMS, {"pop_vs_random": bc.system_pairs(clear, "Pop", "Random"),
                                            "personalised_vs_pop": {"EASE": bc.system_pairs(clear, "EASE", "Pop")}})
    assert list(table.verdict) == ["agrees", "agrees"]
    assert "not run here: PureSVD, WRMF" in table.our_evidence.iloc[1]
    # a difference inside the noise is inconclusive; a clear loss disagrees
    noisy = _long({"Pop": base + rng.normal(0, 0.05, size=base.shape) + 1e-4, "Random": base,
                   "EASE": base - 0.05})
    table = findings.assess(bc.ZOO_CLAIMS, {"pop_vs_random": bc.system_pairs(noisy, "Pop", "Random"),
                                            "personalised_vs_pop": {"EASE": bc.system_pairs(noisy, "EASE", "Pop")}})
    assert list(table.verdict) == ["inconclusive", "disagrees"]
    # a system that was not run: the claim says so instead of deciding
    table = findings.assess(bc.ZOO_CLAIMS, {"pop_vs_random": {}, "personalised_vs_pop": {}})
    assert list(table.verdict) == ["inconclusive", "inconclusive"]
    with pytest.raises(KeyError):
        bc.system_pairs(clear, "WRMF", "Pop")
    # per-user frames (chapter 01): one column per metric
    per_user = {"Pop": pd.DataFrame({"P@5": [0.4, 0.6, 0.5]}), "Random": pd.DataFrame({"P@5": [0.0, 0.0, 0.2]})}
    assert bc.ordering_evidence(bc.system_pairs(per_user, "Pop", "Random"), "Pop", "Random").verdict == "agrees"


def test_table2_claim():
    claim = [c for c in bc.DATASET_CLAIMS if c.id == "table2-statistics"][0]
    row = dict(bc.TABLE2["movielens-1m"])
    assert claim.check({"dataset": "movielens-1m", "stats": row}).verdict == "agrees"
    # within the printed precision (4.468% is 4.4675% .. 4.4685%) still agrees; beyond it not
    assert claim.check({"dataset": "movielens-1m", "stats": {**row, "density": 0.044684}}).verdict == "agrees"
    ev = claim.check({"dataset": "movielens-1m", "stats": {**row, "item_gini": 0.640}})
    assert ev.verdict == "disagrees" and "item_gini" in ev.detail
    ev = claim.check({"dataset": "movielens-small", "stats": row})
    assert ev.verdict == "not testable" and "movielens-small" in ev.detail
