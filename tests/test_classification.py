"""Classification, ROC and boolean Kendall's tau metrics (Schröder et al. 2011, §4.2-§5)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import kendalltau

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.metrics import classification as C

CLS_K = ["fallout@3", "missrate@3", "inverse_precision@3", "inverse_recall@3", "markedness@3",
         "informedness@3", "MCC@3", "LAUC@3", "BKTau@3", "BKTau", "AUC", "Fbeta@3"]


def judged_of(qrels_rows, lists, users="all", depth=None):
    q = rm.Qrels(pd.DataFrame(qrels_rows, columns=["user", "item", "rating"]))
    return rm.judge(rm.Run.from_lists(lists), q, users=users, depth=depth)


EMPTY_TRAIN = pd.DataFrame({"user": pd.Series(dtype=int), "item": pd.Series(dtype=int)})


# ------------------------------------------------------------------------------ confusion
def test_confusion_all_items_universe():
    # catalog 0..9; user 1 rated 8, 9 in training -> universe of 8 items; relevant test items 0, 3, 5
    q = [(1, 0, 5), (1, 3, 4), (1, 5, 4.5), (1, 6, 2)]
    j = judged_of(q, {1: [0, 1, 6, 3, 2]})
    train = pd.DataFrame({"user": [1, 1, 2], "item": [8, 9, 0]})
    c = C.confusion(j, 4, train=train, catalog=np.arange(10))
    # top-4 = 0(R) 1(unjudged) 6(judged non-relevant) 3(R)
    assert (c.tp, c.fp, c.fn, c.tn) == ([2], [2], [1], [3])
    assert c.n.tolist() == [8]
    # the judged universe: items 0, 3, 5, 6; unjudged item 1 is skipped
    cj = C.confusion(j, 4, universe="judged")
    assert (cj.tp, cj.fp, cj.fn, cj.tn) == ([2], [1], [1], [0])


def test_confusion_vectorised_over_users_matches_per_user():
    rng = np.random.default_rng(3)
    rows, lists, train = [], {}, []
    for u in range(40):
        items = rng.permutation(60)
        train += [(u, int(i)) for i in items[:10]]
        rows += [(u, int(i), float(rng.integers(1, 6))) for i in items[10:25]]
        lists[u] = [int(i) for i in items[10:10 + rng.integers(0, 30)]]
    train = pd.DataFrame(train, columns=["user", "item"])
    j = judged_of(rows, lists, depth=30)
    c = C.confusion(j, 7, train=train, catalog=np.arange(60))
    q = pd.DataFrame(rows, columns=["user", "item", "rating"])
    for x, u in enumerate(j.users):
        rel = set(q[(q.user == u) & (q.rating >= 4)].item)
        top = set(lists[u][:7])
        universe = set(range(60)) - set(train[train.user == u].item)
        tp = len(top & rel)
        assert (c.tp[x], c.fp[x], c.fn[x], c.tn[x]) == (tp, len(top) - tp, len(rel) - tp,
                                                        len(universe - top - rel))


def test_rates_of_a_known_table():
    c = C.Confusion(np.array([3]), np.array([1]), np.array([2]), np.array([4]))
    r = C.rates(c, beta=2).iloc[0]
    assert r.precision == 3 / 4 and r.recall == 3 / 5 and r.fallout == 1 / 5 and r.missrate == 2 / 5
    assert r.inverse_precision == 4 / 6 and r.inverse_recall == 4 / 5
    assert np.isclose(r.markedness, 3 / 4 + 4 / 6 - 1) and np.isclose(r.informedness, 3 / 5 + 4 / 5 - 1)
    assert np.isclose(r.MCC, (12 - 2) / np.sqrt(4 * 6 * 5 * 5))
    assert np.isclose(r.F2, 5 * 0.75 * 0.6 / (4 * 0.75 + 0.6))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 4), min_size=1, max_size=8))
def test_identities_and_zero_denominators(cells):
    tp, fp, fn, tn = (np.array(x) for x in zip(*cells))
    c = C.Confusion(tp, fp, fn, tn)
    mk, inf, mcc = C.markedness_of(c), C.informedness_of(c), C.mcc_of(c)
    for v in (mk, inf, mcc):
        assert np.all(np.isfinite(v)) and np.all(np.abs(v) <= 1 + 1e-12)
    # MCC = ±sqrt(informedness · markedness), sign shared by all three (the paper's convention)
    assert np.allclose(mcc ** 2, inf * mk)
    assert np.all(np.sign(mcc) == np.sign(inf)) and np.all(np.sign(mcc) == np.sign(mk))
    # where defined, markedness = precision + inverse precision - 1, informedness = recall + inv. recall - 1
    ok = (tp + fp > 0) & (fn + tn > 0)
    assert np.allclose(mk[ok], (C.precision_of(c) + C.inverse_precision_of(c) - 1)[ok])
    ok = (tp + fn > 0) & (fp + tn > 0)
    assert np.allclose(inf[ok], (C.recall_of(c) + C.inverse_recall_of(c) - 1)[ok])
    assert np.allclose(C.inverse_recall_of(c)[ok], 1 - C.fallout_of(c)[ok])
    # documented zero-denominator values
    assert np.all(C.precision_of(c)[tp + fp == 0] == 0) and np.all(mk[(tp + fp == 0) | (fn + tn == 0)] == 0)
    assert np.all(C.recall_of(c)[tp + fn == 0] == 0) and np.all(C.miss_rate_of(c)[tp + fn == 0] == 0)
    assert np.all(C.fallout_of(c)[fp + tn == 0] == 0) and np.all(C.inverse_recall_of(c)[fp + tn == 0] == 0)
    assert np.all(C.inverse_precision_of(c)[fn + tn == 0] == 0)
    assert np.all(inf[(tp + fn == 0) | (fp + tn == 0)] == 0)
    # the unordered boolean tau-b of a 2x2 table is the Matthews correlation
    assert np.allclose(C.bktau_of(c), mcc)


# ------------------------------------------------------------------------------ ROC / AUC / tau
def _random_case(seed, n_items=15):
    rng = np.random.default_rng(seed)
    n_users = 12
    rows, lists = [], {}
    for u in range(n_users):
        rel = rng.random(n_items) < rng.uniform(0.1, 0.6)
        rel[rng.integers(n_items)] = True
        rel[rng.integers(n_items)] = False  # at least one irrelevant item (usually)
        rows += [(u, i, 5.0 if rel[i] else 1.0) for i in range(n_items)]
        lists[u] = [int(i) for i in rng.permutation(n_items)[: rng.integers(1, n_items + 1)]]
    return rows, lists


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_and_bktau_match_brute_force_and_scipy(seed):
    n_items = 15
    rows, lists = _random_case(seed, n_items)
    j = judged_of(rows, lists, depth=n_items)
    ctx = dict(train=EMPTY_TRAIN, catalog=np.arange(n_items))
    q = pd.DataFrame(rows, columns=["user", "item", "rating"])
    for k in (None, 1, 4, n_items):
        c, kk, U = C._conf(j, k, "all", EMPTY_TRAIN, np.arange(n_items))
        disc = C._discordant_in_list(j, kk, U)
        auc, tau = C.auc_of(c, disc), C.bktau_of(c, disc)
        for x, u in enumerate(j.users):
            shown = lists[u][: (kk if k else None)]
            score = np.zeros(n_items)  # unranked items tie at 0
            score[shown] = np.arange(len(shown), 0, -1)
            rel = q[q.user == u].sort_values("item").rating.to_numpy() >= 4
            pos, neg = score[rel], score[~rel]
            diff = np.sign(pos[:, None] - neg[None, :])
            expect_auc = ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size
            assert np.isclose(auc[x], expect_auc)
            expect_tau = kendalltau(score, rel.astype(int)).statistic
            assert np.isclose(tau[x], 0.0 if np.isnan(expect_tau) else expect_tau)
    # registered names give the same
    ev = rm.evaluate(rm.Run.from_lists(lists), rm.Qrels(q), ["AUC", "LAUC@4", "BKTau", "BKTau@4"], users="all", **ctx)
    c, kk, U = C._conf(j, 4, "all", EMPTY_TRAIN, np.arange(n_items))
    assert np.allclose(ev.per_user["LAUC@4"], C.auc_of(c, C._discordant_in_list(j, kk, U)))
    assert np.allclose(ev.per_user["BKTau@4"],
                       C.bktau_of(c, C._discordant_in_list(j, kk, U)))


def test_roc_curve_area_equals_auc():
    rows, lists = _random_case(5)
    j = judged_of(rows, lists, depth=15)
    ctx = dict(train=EMPTY_TRAIN, catalog=np.arange(15))
    roc = C.roc_curve(j, 6, **ctx)
    assert set(roc.groupby("user").size()) == {8}
    lauc = rm.metrics.parse("LAUC@6")(j, **ctx)
    for x, (u, g) in enumerate(roc.groupby("user", sort=False)):
        assert (g.fpr.iloc[0], g.tpr.iloc[0]) == (0, 0) and (g.fpr.iloc[-1], g.tpr.iloc[-1]) == (1, 1)
        assert g.part.iloc[-1] == "rest"
        assert np.isclose(np.trapezoid(g.tpr, g.fpr), lauc[x])


def test_lauc_properties_of_section_5_2():
    # ten judged items, four relevant, top-4 list
    def lauc(pattern, k=4):
        from recmetrics.meta.guidelines import toy_case

        case = toy_case([pattern])
        return rm.evaluate(case.run, case.qrels, [f"LAUC@{k}", "AUC"], users="all", **case.context).per_user.iloc[0]

    assert lauc([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])["LAUC@4"] == 1.0        # all relevant first, inside the list
    assert lauc([1, 1, 0, 0, 0, 0, 0, 0, 0, 0], k=2)["LAUC@2"] == 1.0
    assert lauc([0, 0, 0, 0, 1, 1, 1, 1, 1, 1], k=4)["LAUC@4"] == 0.0   # all irrelevant first and inside
    assert lauc([0, 0, 0, 1, 1, 1, 1, 0, 0, 0], k=3)["LAUC@3"] > 0.0    # minimal but not zero otherwise
    # a swap at the top and at the bottom of the top-k list change it by the same amount, 1/(R (N-R))
    base = lauc([1, 0, 1, 0, 1, 1, 0, 0, 0, 0], k=5)["LAUC@5"]
    top = lauc([0, 1, 1, 0, 1, 1, 0, 0, 0, 0], k=5)["LAUC@5"]      # swap ranks 1-2
    bottom = lauc([1, 0, 1, 1, 0, 1, 0, 0, 0, 0], k=5)["LAUC@5"]   # swap ranks 4-5
    assert np.isclose(base - top, 1 / 24) and np.isclose(bottom - base, 1 / 24)
    # changes beyond the list are ignored; the full-list AUC sees them
    a = lauc([1, 0, 1, 0, 1, 0, 0, 0, 0, 1], k=4)
    b = lauc([1, 0, 1, 0, 0, 1, 0, 0, 0, 1], k=4)
    assert a["LAUC@4"] == b["LAUC@4"] and a["AUC"] > b["AUC"]


# ------------------------------------------------------------------------------ bad input
def test_k_larger_than_the_universe_raises_naming_the_user():
    q = [(7, 0, 5), (7, 1, 1)]
    j = judged_of(q, {7: [0, 1, 2]}, depth=6)
    train = pd.DataFrame({"user": [7, 7], "item": [3, 4]})
    with pytest.raises(InputError, match=r"k=6 exceeds the universe of user 7 \(3 items"):
        rm.metrics.parse("markedness@6")(j, train=train, catalog=np.arange(5))
    # in the judged universe k counts ranks and may exceed the judged items (documented)
    v = rm.metrics.parse("markedness@6(universe=judged)")(j, train=train, catalog=[])
    assert np.isfinite(v).all()


def test_ranked_item_outside_the_universe_raises():
    q = [(1, 0, 5), (1, 1, 1)]
    j = judged_of(q, {1: [0, 3, 1]})
    with pytest.raises(InputError, match=r"item 3 at rank 2 of user 1 is one of the user's training items"):
        C.confusion(j, 3, train=pd.DataFrame({"user": [1], "item": [3]}), catalog=np.arange(5))
    with pytest.raises(InputError, match=r"item 3 at rank 2 of user 1 is not in the catalog"):
        C.confusion(j, 3, train=EMPTY_TRAIN, catalog=[0, 1, 2])
    with pytest.raises(InputError, match="missing from the catalog"):  # relevant test item outside the catalog
        judged = judged_of([(1, 0, 5), (1, 1, 5), (1, 9, 5)], {1: [0]})
        C.confusion(judged, 1, train=EMPTY_TRAIN, catalog=[0, 1])


def test_missing_context_and_bad_parameters():
    j = judged_of([(1, 0, 5), (1, 1, 1)], {1: [0, 1]})
    with pytest.raises(InputError, match="AllItems universe needs train=.* and catalog="):
        rm.metrics.parse("MCC@1")(j)
    # the judged-items universe needs neither
    assert np.isfinite(rm.metrics.parse("MCC@1(universe=judged)")(j)).all()
    with pytest.raises(InputError, match="universe must be one of"):
        rm.metrics.parse("MCC@1(universe=everything)")(j, train=EMPTY_TRAIN, catalog=[0, 1])
    with pytest.raises(InputError, match="lacks column"):
        rm.metrics.parse("MCC@1")(j, train=pd.DataFrame({"u": [1]}), catalog=[0, 1])
    with pytest.raises(InputError, match="catalog is empty"):
        rm.metrics.parse("MCC@1")(j, train=EMPTY_TRAIN, catalog=[])
    with pytest.raises(InputError, match="beta > 0"):
        rm.metrics.parse("Fbeta@1(beta=0)")(j)
    with pytest.raises(InputError, match="needs a cut-off"):
        rm.metrics.parse("LAUC")
    with pytest.raises(InputError, match="takes no cut-off"):
        rm.metrics.parse("AUC@5")


def test_users_without_list_without_relevant_or_without_judged_items():
    rows = [(1, 0, 5), (1, 1, 1), (2, 0, 2), (2, 1, 1), (3, 2, 5), (3, 3, 1)]
    lists = {1: [0, 1], 2: [1, 0]}  # user 3 has no list; user 2 has no relevant item
    ctx = dict(train=EMPTY_TRAIN, catalog=np.arange(6))
    ev = rm.evaluate(rm.Run.from_lists(lists), rm.Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"])),
                     CLS_K, users="all", **ctx).per_user
    no_list, no_rel = ev.loc[3], ev.loc[2]
    # empty recommended set: chance level for markedness/informedness/MCC/tau, ties for AUC
    assert no_list[["markedness@3", "informedness@3", "MCC@3", "BKTau@3", "Fbeta@3"]].eq(0).all()
    assert no_list["missrate@3"] == 1 and no_list["inverse_recall@3"] == 1 and no_list["fallout@3"] == 0
    assert no_list["AUC"] == 0.5 and no_list["LAUC@3"] == 0.5
    # no relevant item: ratios over relevant items are 0, chance-centred measures at chance level
    assert no_rel[["missrate@3", "informedness@3", "MCC@3", "BKTau@3", "BKTau"]].eq(0).all()
    assert no_rel["AUC"] == 0.5
    # judged universe, a list with no judged item: nothing is recommended
    j = judged_of([(5, 0, 5), (5, 1, 1)], {5: [7, 8]})
    c = C.confusion(j, 2, universe="judged")
    assert (c.tp, c.fp, c.fn, c.tn) == ([0], [0], [1], [1])
    assert rm.metrics.parse("AUC(universe=judged)")(j, train=EMPTY_TRAIN, catalog=[0]).tolist() == [0.5]


# ------------------------------------------------------------------------------ aggregation
def test_negative_values_and_geometric_harmonic_means():
    from recmetrics.meta.guidelines import toy_case

    case = toy_case([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]])
    signed = ["markedness@4", "informedness@4", "MCC@4", "BKTau@4"]
    for method in ("geometric", "harmonic"):
        for name in signed:
            with pytest.raises(InputError, match="non-negative"):
                rm.evaluate(case.run, case.qrels, [name], users="all", aggregate=method, **case.context)
            unit = str(rm.metrics.parse(name + "(unit=true)"))
            ev = rm.evaluate(case.run, case.qrels, [unit, name], users="all", aggregate="arithmetic",
                             **case.context)
            assert np.allclose(ev.per_user[unit], (1 + ev.per_user[name]) / 2)
            agg = rm.evaluate(case.run, case.qrels, [unit], users="all", aggregate=method, **case.context)
            assert 0 < agg.aggregate.iloc[0] <= 1
        # the non-negative metrics work with every mean
        others = ["fallout@4", "missrate@4", "inverse_precision@4", "inverse_recall@4", "Fbeta@4", "LAUC@4", "AUC"]
        agg = rm.evaluate(case.run, case.qrels, others, users="all", aggregate=method, **case.context).aggregate
        assert agg.between(0, 1).all()
    # the arithmetic mean takes the signed values as they are; the quadratic mean would drop the sign
    rm.evaluate(case.run, case.qrels, signed, users="all", aggregate="arithmetic", **case.context)
    with pytest.raises(InputError, match="unit=true"):
        rm.evaluate(case.run, case.qrels, signed, users="all", aggregate="quadratic", **case.context)


def test_registry_entries():
    for name in ["fallout", "missrate", "inverse_precision", "inverse_recall", "Fbeta", "markedness",
                 "informedness", "MCC", "AUC", "LAUC", "BKTau"]:
        d = rm.metrics.get(name)
        assert d.family == "classification" and d.description
    assert rm.metrics.get("specificity").name == "inverse_recall"
    assert str(rm.metrics.parse("bktau@5(ordered=false)")) == "BKTau@5(ordered=False)"
    assert rm.metrics.get("MCC").bounds == (-1.0, 1.0)


def test_fbeta_reuses_precision_and_recall():
    rows, lists = _random_case(9)
    q = rm.Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"]))
    ev = rm.evaluate(rm.Run.from_lists(lists), q, ["F1@5", "Fbeta@5", "Fbeta@5(beta=2)", "P@5", "Recall@5"],
                     users="all").per_user
    assert np.allclose(ev["F1@5"], ev["Fbeta@5"])
    p, r = ev["P@5"], ev["Recall@5"]
    expect = np.where(p + r > 0, 5 * p * r / np.where(4 * p + r > 0, 4 * p + r, 1), 0)
    assert np.allclose(ev["Fbeta@5(beta=2)"], expect)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_values_within_registered_bounds(seed):
    rows, lists = _random_case(seed, n_items=12)
    q = rm.Qrels(pd.DataFrame(rows, columns=["user", "item", "rating"]))
    for universe in ("all", "judged"):
        names = [n if n.startswith("Fbeta") else n.replace("@3", "@3(universe=%s)" % universe)
                 if "@" in n else n + "(universe=%s)" % universe for n in CLS_K]
        ev = rm.evaluate(rm.Run.from_lists(lists), q, names, users="all",
                         train=EMPTY_TRAIN, catalog=np.arange(12)).per_user
        for name in ev:
            lo, hi = rm.metrics.parse(name).definition.bounds
            assert ev[name].between(lo - 1e-12, hi + 1e-12).all(), name


def test_universe_is_computed_once_per_context():
    rows, lists = _random_case(1)
    j = judged_of(rows, lists, depth=15)
    a = C.item_universe(j, train=EMPTY_TRAIN, catalog=np.arange(15))
    assert C.item_universe(j, train=EMPTY_TRAIN, catalog=np.arange(15)) is not a  # another catalog object
    cat = np.arange(15)
    b = C.item_universe(j, train=EMPTY_TRAIN, catalog=cat)
    assert C.item_universe(j, train=EMPTY_TRAIN, catalog=cat) is b


def test_judged_universe_matches_brute_force_on_the_judged_items():
    rng = np.random.default_rng(11)
    rows, lists = _random_case(11, 15)
    rows = [r for r in rows if rng.random() < 0.6]  # ~40% of the items unjudged
    q = pd.DataFrame(rows, columns=["user", "item", "rating"])
    j = judged_of(rows, lists, depth=15)
    for k in (None, 5):
        c, kk, U = C._conf(j, k, "judged", None, None)
        disc = C._discordant_in_list(j, kk, U)
        auc, tau = C.auc_of(c, disc), C.bktau_of(c, disc)
        for x, u in enumerate(j.users):
            judged = q[q.user == u].set_index("item").rating
            shown = [i for i in lists[u][: (kk if k else None)] if i in judged.index]
            score = pd.Series(0.0, index=judged.index)
            score[shown] = np.arange(len(shown), 0, -1)
            rel = (judged >= 4).to_numpy()
            assert (c.tp[x], c.fp[x]) == (rel[judged.index.isin(shown)].sum(), (~rel[judged.index.isin(shown)]).sum())
            pos, neg = score.to_numpy()[rel], score.to_numpy()[~rel]
            if len(pos) and len(neg):
                diff = np.sign(pos[:, None] - neg[None, :])
                assert np.isclose(auc[x], ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)
                expect = kendalltau(score.to_numpy(), rel.astype(int)).statistic
                assert np.isclose(tau[x], 0.0 if np.isnan(expect) else expect)
            else:
                assert auc[x] == 0.5 and tau[x] == 0.0
