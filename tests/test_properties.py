"""Properties of every registered ranking metric (hypothesis)."""
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

import recmetrics as rm

RANKING = ["P@5", "Recall@5", "F1@5", "AP@10", "nDCG@10", "RR", "ERR@10", "bpref", "infAP", "AP", "nDCG"]
# metrics promising 1 for a perfect ranking (every judged item, in rating order; cut-offs >= |R| for AP)
PERFECT_ONE = ["AP@40", "nDCG@10", "RR", "bpref", "infAP", "AP", "nDCG", "Recall@40"]


@st.composite
def cases(draw):
    n_users = draw(st.integers(1, 6))
    n_items = draw(st.integers(2, 25))
    rows, lists = [], {}
    for u in range(n_users):
        judged = draw(st.lists(st.integers(0, n_items - 1), min_size=1, max_size=n_items, unique=True))
        ratings = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), min_size=len(judged), max_size=len(judged)))
        rows += [(u, i, r) for i, r in zip(judged, ratings)]
        lists[u] = draw(st.lists(st.integers(0, n_items - 1), max_size=n_items, unique=True))
    return pd.DataFrame(rows, columns=["user", "item", "rating"]), lists


def scores(qrels_df, lists, metrics=RANKING, users="all"):
    return rm.evaluate(rm.Run.from_lists(lists), rm.Qrels(qrels_df), metrics, users=users).per_user


@settings(max_examples=60, deadline=None)
@given(cases())
def test_values_in_documented_range(case):
    qrels_df, lists = case
    per_user = scores(qrels_df, lists)
    for name in per_user:
        lo, hi = rm.metrics.parse(name).definition.bounds
        assert ((per_user[name] >= lo - 1e-12) & (per_user[name] <= hi + 1e-12)).all(), name


@settings(max_examples=60, deadline=None)
@given(cases())
def test_perfect_ranking_scores_one(case):
    qrels_df, _ = case
    q = qrels_df.sort_values(["user", "rating", "item"], ascending=[True, False, True])
    lists = {u: g.item.tolist() for u, g in q.groupby("user")}
    per_user = scores(qrels_df, lists, PERFECT_ONE, users="relevant") if (qrels_df.rating >= 4).any() else None
    if per_user is not None:
        for name in PERFECT_ONE:
            assert np.allclose(per_user[name], 1.0), (name, per_user[name])


@settings(max_examples=40, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_invariant_to_user_order_and_item_relabelling(case, rnd):
    qrels_df, lists = case
    base = scores(qrels_df, lists)
    # user order
    shuffled = dict(sorted(lists.items(), key=lambda kv: rnd.random()))
    assert scores(qrels_df.sample(frac=1, random_state=1), shuffled).sort_index().equals(base.sort_index())
    # item relabelling that keeps the lists (ranked lists have no ties, so order is kept)
    n = int(max(qrels_df.item.max(), max((max(v) for v in lists.values() if v), default=0))) + 1
    perm = np.array(rnd.sample(range(1000, 1000 + n), n))
    relabel_q = qrels_df.assign(item=perm[qrels_df.item.to_numpy()])
    relabel_l = {u: perm[np.asarray(v, dtype=int)].tolist() for u, v in lists.items()}
    assert np.allclose(scores(relabel_q, relabel_l).sort_index().to_numpy(), base.sort_index().to_numpy())


@settings(max_examples=40, deadline=None)
@given(cases())
def test_recall_non_decreasing_in_cutoff(case):
    qrels_df, lists = case
    per_user = scores(qrels_df, lists, [f"Recall@{k}" for k in range(1, 12)])
    assert (np.diff(per_user.to_numpy(), axis=1) >= -1e-15).all()


def _context(qrels_df, lists, rnd):
    """Everything any registered metric may need, for a generated case."""
    items = sorted(set(qrels_df.item) | {i for v in lists.values() for i in v})
    aspects = pd.Series({i: tuple(a for a in "abc" if rnd.random() < 0.5) for i in items})
    train = pd.DataFrame({"user": list(lists), "item": [10_000 + u for u in lists], "rating": 4.0})
    predictions = qrels_df[["user", "item"]].assign(prediction=[rnd.uniform(1, 5) for _ in range(len(qrels_df))])
    spare = list(range(20_000, 20_010))  # unrated items: every universe holds a top-5 list
    return dict(aspects=aspects, train=train, catalog=items + list(train.item) + spare, predictions=predictions)


def _every_metric(k=5):
    # NMAE needs the declared rating scale
    params = {"NMAE": "(rmin=1,rmax=5)"}
    names = []
    for name in rm.metrics.names():
        mode, p = rm.metrics.get(name).cutoff, params.get(name, "")
        names += {"required": [f"{name}@{k}{p}"], "optional": [f"{name}{p}", f"{name}@{k}{p}"],
                  "none": [f"{name}{p}"]}[mode]
    return names


@settings(max_examples=25, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_every_registered_metric_stays_in_its_documented_range(case, rnd):
    import warnings

    qrels_df, lists = case
    names = _every_metric()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. users whose profile shows no aspect
        res = rm.evaluate(rm.Run.from_lists(lists), rm.Qrels(qrels_df), names, users="all",
                          **_context(qrels_df, lists, rnd))
    per_user = res.per_user
    specs = [rm.metrics.parse(n) for n in names]
    per_run = [str(s) for s in specs if s.per_run]
    assert list(per_user.columns) + list(res.run_values) == [str(s) for s in specs if not s.per_run] + per_run
    assert len(names) == len(set(names)) and per_run
    for name in per_user:
        lo, hi = rm.metrics.parse(name).definition.bounds
        values = per_user[name].to_numpy()
        if rm.metrics.parse(name).definition.list_only:  # ARP, APLT, ACLT: undefined exactly without a list
            assert (np.isnan(values) == (res.judged.lengths == 0)).all(), name
            values = values[~np.isnan(values)]
        assert np.isfinite(values).all(), name
        assert ((values >= lo - 1e-12) & (values <= hi + 1e-12)).all(), (name, values)
    for name, value in res.run_values.items():  # one value per run; NaN only where documented undefined
        lo, hi = rm.metrics.parse(name).definition.bounds
        if math.isnan(value):
            assert name.startswith(("PopREO", "PopRSP", "Gini", "Entropy")), name
        else:
            assert lo - 1e-12 <= value <= hi + 1e-12, (name, value)
