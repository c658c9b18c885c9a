"""A user's scores depend on its own judged positions only, bit for bit: whoever else is judged with
it, and however the users are cut into blocks (:func:`recmetrics.meta.reduced_sets.score_rows`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics.data.qrels import Qrels
from recmetrics.data.run import Run
from recmetrics.evaluation import score_judged
from recmetrics.judged import judge
from recmetrics.meta import reduced_sets as rs
from recmetrics.metrics.gains import seg_cumsum, seg_exclusive
from recmetrics.metrics.registry import parse

NAMES = ["P", "Recall", "F1", "AP", "nDCG", "nDCG(dcg=exp-log2)", "DCG", "RR", "ERR", "ERR(max_rating=6)", "bpref",
         "infAP", "infAP(unjudged=pooled)"]


@pytest.fixture(scope="module")
def edge():
    """Fractional and tied grades, pooled-but-unjudged labels (−1), lists shorter than the judgments
    and than the cut-offs, users without a list, long lists of many relevant items (long ERR cascades)."""
    rng = np.random.default_rng(11)
    rows = []
    for u in range(300):
        items = rng.choice(120, size=rng.integers(1, 60), replace=False)
        grades = rng.choice([-1.0, 0.5, 1.0, 2.5, 3.0, 4.0, 4.0, 4.5, 5.0, 5.0], size=len(items))
        rows += [(u, f"i{i}", g) for i, g in zip(items, grades)]
    qrels = Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"]), threshold=4.0, negative="unjudged")
    lists = {u: [f"i{i}" for i in rng.permutation(120)[:rng.integers(0, 100)]] for u in range(300)}
    return qrels, lists


def test_seg_cumsum_sums_each_segment_from_its_start():
    rng = np.random.default_rng(2)
    lengths = rng.integers(1, 40, size=500)
    x = rng.standard_normal(lengths.sum()) * 10.0 ** rng.integers(-8, 8, size=lengths.sum())
    pos = np.concatenate([np.arange(n) for n in lengths])
    want = np.concatenate([np.cumsum(part) for part in np.split(x, np.cumsum(lengths)[:-1])])
    assert seg_cumsum(x, pos).tobytes() == want.tobytes()
    before = np.concatenate([np.r_[0.0, np.cumsum(part)[:-1]] for part in np.split(x, np.cumsum(lengths)[:-1])])
    assert seg_exclusive(x, pos).tobytes() == before.tobytes()
    assert len(seg_cumsum(np.zeros(0), np.zeros(0, dtype=np.int64))) == 0


def test_a_users_scores_do_not_depend_on_who_else_is_judged(edge):
    """Judged with every user or with a third of them, in another order of runs: the same bytes per
    user. ERR's cascade (a product over the hits above) summed its logs over every user's hits and
    subtracted the user's start, so its last bits followed the users judged before it."""
    qrels, lists = edge
    specs = [parse(f"{m}@{k}") for m in NAMES for k in (1, 5, 20, 100)]
    full_run = Run.from_lists({u: items for u, items in lists.items() if items})
    every = judge(full_run, qrels, depth=100, users="all")
    together = score_judged(every, specs)
    some = [u for u in range(299, 0, -3) if lists[u]]
    part = judge(Run.from_lists({u: lists[u] for u in some}), qrels, depth=100, users="run")
    alone = score_judged(part, specs)
    at = pd.Index(every.users).get_indexer(part.users)
    for row, spec in enumerate(specs):
        assert together[row, at].tobytes() == alone[row].tobytes(), spec


@pytest.mark.parametrize("chunk", [1, 7, 500, 1 << 30])
def test_scores_in_blocks_of_rows_equal_one_call(edge, chunk):
    qrels, lists = edge
    specs = [parse(f"{m}@{k}") for m in NAMES for k in (3, 50)]
    j = judge(Run.from_lists({u: items for u, items in lists.items() if items}), qrels, depth=50, users="all")
    keep = np.random.default_rng(chunk % 97).random(len(j.hits.rows)) < 0.7
    for rows in (np.arange(len(j)), np.arange(0, len(j), 4)):
        want = score_judged(rs.mask_judged(j, keep, qrels, rows), specs).T
        got = rs.score_rows(j, keep, qrels, rows, specs, chunk=chunk)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert rs.score_rows(j, keep, qrels, np.zeros(0, dtype=np.int64), specs).shape == (0, len(specs))


def test_cut_offs_in_any_order_equal_each_cut_off_alone(edge):
    """A metric's per-hit terms are memoised across its cut-offs: the values of cut-offs asked in
    ascending order, in descending order or in a mixed order equal those of one cut-off per fresh
    Judged, byte for byte."""
    qrels, lists = edge
    run = Run.from_lists({u: items for u, items in lists.items() if items})
    cutoffs = (1, 2, 5, 20, 37, 100)
    fresh = {(m, k): score_judged(judge(run, qrels, depth=100, users="all"), [parse(f"{m}@{k}")])[0]
             for m in NAMES for k in cutoffs}
    for order in (cutoffs, cutoffs[::-1], (5, 1, 20, 2, 100, 37)):
        j = judge(run, qrels, depth=100, users="all")
        for m in NAMES:
            for k in order:
                got = score_judged(j, [parse(f"{m}@{k}")])[0]
                assert got.tobytes() == fresh[m, k].tobytes(), (m, k, order)
