"""Beyond-accuracy metrics: coverage, exposure (Gini, entropy), popularity bias, novelty, ILD.

Hand cases first (every number derived in the comments), then loop oracles written from the
frameworks' definitions (Elliot's bias/novelty metrics, RankSys' Gini/entropy/EILD, RecBole's Gini),
then the per-run plumbing through evaluate, compare and the command line."""
import math

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.cli import main
from recmetrics.errors import InputError
from recmetrics.meta import compare as cmp
from recmetrics.metrics import exposure as ex, popularity as popm

LOG = [1.0, 1 / math.log2(3), 0.5]  # 1/log2(r + 1) at ranks 1, 2, 3


# ------------------------------------------------------------------ hand case A: exposure
@pytest.fixture()
def exposure_case():
    # popularity: a 2 (users 1, 2), b 1, c 1; catalogue from train a, b, c plus the ranked d
    train = pd.DataFrame({"user": [1, 1, 2, 3], "item": ["a", "b", "a", "c"], "rating": 5.0})
    test = pd.DataFrame({"user": [1, 2, 4], "item": ["c", "b", "a"], "rating": 5.0})
    run = rm.Run.from_lists({1: ["c", "d", "a"], 2: ["c", "b"]})  # user 4 has no list
    return train, rm.Qrels(test), run


def test_coverage_gini_entropy_by_hand(exposure_case):
    train, q, run = exposure_case
    ms = ["ItemCoverage@2", "Gini@2", "Entropy@2", "ItemCoverage@3", "Gini@3", "Entropy@3",
          "UserCoverage", "UserCoverage@3"]
    res = rm.evaluate(run, q, ms, train=train)
    v = res.run_values
    # @2: counts a 0, b 1, c 2, d 1 -> 3 of 4 items; shares sorted 0 .25 .25 .5:
    # G = (-3*0 - .25 + .25 + 3*.5) / 3 = .5; H = -(.25 lg .25 * 2 + .5 lg .5) = 1.5 bits
    assert v["ItemCoverage@2"] == 0.75 and v["Gini@2"] == pytest.approx(0.5) and v["Entropy@2"] == pytest.approx(1.5)
    # @3: counts 1 1 2 1 -> every item; shares .2 .2 .2 .4: G = (-.6 - .2 + .2 + 1.2) / 3 = .2
    assert v["ItemCoverage@3"] == 1.0 and v["Gini@3"] == pytest.approx(0.2)
    assert v["Entropy@3"] == pytest.approx(-(3 * 0.2 * math.log2(0.2) + 0.4 * math.log2(0.4)))
    # users 1, 2, 4 evaluated; 4 has no list, only 1 has three items
    assert v["UserCoverage"] == pytest.approx(2 / 3) and v["UserCoverage@3"] == pytest.approx(1 / 3)
    # per-run metrics: no per-user column, their value in the aggregate, in the order asked
    assert res.per_user.shape == (3, 0) and list(res.aggregate.index) == ms
    assert res.aggregate["Gini@2"] == v["Gini@2"]


def test_catalogue_given_and_checked(exposure_case):
    train, q, run = exposure_case
    cat = ["a", "b", "c", "d", "e", "f"]
    v = rm.evaluate(run, q, ["ItemCoverage@2", "Gini@2"], catalog=cat).run_values
    # counts over 6 items 0 0 0 1 1 2 (shares .25 .25 .5): G = (1*.25 + 3*.25 + 5*.5) / 5 = .7
    assert v == {"ItemCoverage@2": 0.5, "Gini@2": pytest.approx(0.7)}
    with pytest.raises(InputError, match=r"item 'd' ranked for user 1 in run 'run' is not in the catalog \(3 items"):
        rm.evaluate(run, q, ["ItemCoverage@2"], catalog=["a", "b", "c"])


def test_gini_and_entropy_against_ranksys_and_recbole(exposure_case):
    """RankSys' GiniIndex (Elliot's port) is 1 - G; RecBole's divides by n instead of n - 1; RankSys'
    Entropy gives each user weight 1 and equals ours when the lists have the same length (@2)."""
    train, q, run = exposure_case
    cat = ["a", "b", "c", "d", "e", "f"]
    ours = rm.evaluate(run, q, ["Gini@2", "Entropy@2"], catalog=cat).run_values
    lists = [["c", "d"], ["c", "b"]]
    counts = pd.Series([i for lst in lists for i in lst]).value_counts()
    cs, n, free = np.sort(counts.to_numpy()), len(cat), counts.sum()
    # RankSys GiniIndex.evaluate(): never-recommended items fill the first n - |cs| sorted positions
    gi = sum((2 * (j + (n - len(cs)) + 1) - n - 1) * (c / free) for j, c in enumerate(cs)) / (n - 1)
    assert 1 - gi == pytest.approx(1 - ours["Gini@2"])
    # RecBole GiniIndex.get_gini(): same numerator over the total, divided by n
    idx = np.arange(n - len(cs) + 1, n + 1)
    assert np.sum((2 * idx - n - 1) * cs) / free / n == pytest.approx(ours["Gini@2"] * (n - 1) / n)
    # RankSys EIUFD: sum_i (sum_{u: i in L_u} 1/|L_u|) * -log2(c_i / free) / #users
    w = {}
    for lst in lists:
        for i in lst:
            w[i] = w.get(i, 0) + 1 / len(lst)
    assert sum(w[i] * -math.log2(counts[i] / free) for i in w) / len(lists) == pytest.approx(ours["Entropy@2"])


# ------------------------------------------------------------------ hand case B: popularity, novelty
@pytest.fixture()
def pop_case():
    # popularity a 4, b 2, c 1, d 1 (8 interactions, 4 users). Short head at 0.8: 6.4 interactions;
    # cumulative a 4, b 6, c 7 -> a, b, c (c and d tie at 1: c comes first by id). Tail: d; e has no
    # training rating: in neither group (as in Elliot).
    train = pd.DataFrame({"user": [1, 2, 3, 4, 1, 2, 3, 4], "item": list("aaaabbcd"), "rating": 3.0})
    test = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3], "item": list("deacbd"), "rating": [5, 4, 2, 5, 4, 3.0]})
    run = rm.Run.from_lists({1: ["a", "d", "e"], 2: ["c", "d"], 3: ["b", "e"]})
    return train, rm.Qrels(test, threshold=4), run  # evaluated by default: users 1, 2 (3 has no relevant item)


def test_short_head_crossing_item_and_ties(pop_case):
    train = pop_case[0]
    tr = ex.training(train)
    assert set(tr.items[popm.short_head(tr, 0.8)]) == {"a", "b", "c"}
    assert set(tr.items[popm.short_head(tr, 0.5)]) == {"a"}      # a alone holds 4 of 8 = the limit
    assert set(tr.items[popm.short_head(tr, 0.51)]) == {"a", "b"}


def test_arp_aplt_aclt_by_hand(pop_case):
    train, q, run = pop_case
    pu = rm.evaluate(run, q, ["ARP@3", "APLT@3", "ACLT@3", "ARP@1", "APLT@3(head=0.5)"], train=train).per_user
    assert pu["ARP@3"].tolist() == pytest.approx([(4 + 1 + 0) / 3, (1 + 1) / 2])
    assert pu["APLT@3"].tolist() == pytest.approx([1 / 3, 1 / 2])   # d | d (e is cold: not long tail)
    assert pu["ACLT@3"].tolist() == [1.0, 1.0]
    assert pu["ARP@1"].tolist() == [4.0, 1.0]
    assert pu["APLT@3(head=0.5)"].tolist() == pytest.approx([1 / 3, 1.0])  # head {a}: c is tail too


def test_epc_efd_by_hand(pop_case):
    train, q, run = pop_case
    ms = ["EPC@3", "EFD@3", "EPC@3(relevant=false,discount=none)", "EFD@3(relevant=false,discount=none)"]
    pu = rm.evaluate(run, q, ms, train=train).per_user
    pu.columns = ms
    # EPC novelty 1 - pop/4: a 0, b .5, c .75, d .75, e (no training rating) 1
    # user 1: a (not relevant), d (relevant, rank 2), e (relevant, rank 3); user 2: c (relevant), d
    assert pu["EPC@3"].tolist() == pytest.approx([(LOG[1] * .75 + LOG[2] * 1) / sum(LOG), .75 / sum(LOG[:2])])
    # EFD novelty -log2(pop/8): a 1, b 2, c 3, d 3, e the largest of a training item, 3
    assert pu["EFD@3"].tolist() == pytest.approx([(LOG[1] * 3 + LOG[2] * 3) / sum(LOG), 3 / sum(LOG[:2])])
    # the RankSys example's form: no relevance, no discount
    assert pu["EPC@3(relevant=false,discount=none)"].tolist() == pytest.approx([(0 + .75 + 1) / 3, (.75 + .75) / 2])
    assert pu["EFD@3(relevant=false,discount=none)"].tolist() == pytest.approx([(1 + 3 + 3) / 3, 3.0])


def test_pop_rsp_and_pop_reo_by_hand(pop_case):
    train, q, run = pop_case
    v = rm.evaluate(run, q, ["PopRSP@3", "PopRSP@1", "PopREO@1", "PopREO@2"], train=train).run_values
    # RSP@3, users 1 and 2 (head a b c, tail d; e in neither): recommended head 2 (a, c), tail 2 (d, d);
    # outside each user's training items (both {a, b}): head 1 + 1, tail 1 + 1 -> rates 1 and 1
    assert v["PopRSP@3"] == pytest.approx(0.0)
    assert v["PopRSP@1"] == pytest.approx(1.0)    # a, c: rates 2/2 and 0/2
    # REO@2: relevant hits d (user 1, tail), c (user 2, head); relevant test items d (tail; e is cold)
    # and c (head; b is relevant too but one of user 2's training items: left out, else 1/2 vs 1/1)
    assert v["PopREO@2"] == pytest.approx(0.0)
    assert v["PopREO@1"] == pytest.approx(1.0)    # only c: rates 1/1 and 0/1
    # every user with a list (user 3: b head, e cold; outside {a, c}: head 1 (b), tail 1 (d))
    allu = rm.evaluate(run, q, ["PopRSP@3"], train=train, users="all").run_values
    assert allu["PopRSP@3"] == pytest.approx((1 - 2 / 3) / (1 + 2 / 3))


def test_undefined_disparity_is_nan_with_a_warning(pop_case):
    train, q, run = pop_case
    no_hit = rm.Run.from_lists({1: ["a"], 2: ["d"]})  # neither list holds a relevant item
    with pytest.warns(UserWarning, match="PopREO: neither group"):
        v = rm.evaluate(no_hit, q, ["PopREO@1"], train=train).run_values
    assert math.isnan(v["PopREO@1"])


# ------------------------------------------------------------------ ILD
def test_ild_by_hand():
    aspects = pd.Series({"a": ("x",), "b": ("x", "y"), "c": ("z",), "d": ()})  # e: absent
    q = rm.Qrels(pd.DataFrame({"user": [1, 2, 3, 4], "item": ["a"] * 4, "rating": 5.0}))
    run = rm.Run.from_lists({1: ["a", "b", "c"], 2: ["a", "d", "b"], 3: ["a"], 4: ["d", "e"]})
    pu = rm.evaluate(run, q, ["ILD@3", "ILD@3(distance=jaccard)"], aspects=aspects).per_user
    assert list(pu.columns) == ["ILD@3", "ILD@3(distance='jaccard')"]
    pu.columns = ["ILD@3", "ILD@3(distance=jaccard)"]
    dab = 1 - 1 / math.sqrt(2)   # cosine distance of {x} and {x, y}; {z} is at 1 from both
    # user 1: per item (dab + 1)/2, (dab + 1)/2, 1; user 2: d has no aspect (no distance, still counted)
    assert pu["ILD@3"].tolist() == pytest.approx([(dab + 1 + 1) / 3, 2 * dab / 3, 0.0, 0.0])
    assert pu["ILD@3(distance=jaccard)"].tolist() == pytest.approx([(0.75 + 0.75 + 1) / 3, 2 * 0.5 / 3, 0.0, 0.0])
    with pytest.raises(InputError, match="distance='euclid' must be one of"):
        rm.evaluate(run, q, ["ILD@3(distance=euclid)"], aspects=aspects)


# ------------------------------------------------------------------ loop oracles on random data
def _random_case(seed):
    rng = np.random.default_rng(seed)
    n_users, n_items = 30, 40
    train_rows, test_rows, lists = [], [], {}
    weights = 1.0 / np.arange(1, n_items + 1)  # skewed popularity
    for u in range(n_users):
        seen = rng.choice(n_items, size=rng.integers(1, 15), replace=False, p=weights / weights.sum())
        train_rows += [(u, int(i), 4.0) for i in seen]
        rest = np.setdiff1d(np.arange(n_items), seen)
        judged = rng.choice(rest, size=min(len(rest), rng.integers(1, 8)), replace=False)
        test_rows += [(u, int(i), float(rng.integers(1, 6))) for i in judged]
        if u % 7 != 3:  # some users without a list
            trained = np.unique(np.array([r[1] for r in train_rows]))
            cand = np.setdiff1d(trained, seen)  # Elliot recommends training items the user has not seen
            lists[u] = [int(i) for i in rng.choice(cand, size=min(len(cand), rng.integers(0, 12)), replace=False)]
    return pd.DataFrame(train_rows, columns=["user", "item", "rating"]), \
        pd.DataFrame(test_rows, columns=["user", "item", "rating"]), lists


def _elliot(train, test, lists, k, users, threshold=4.0, ratio=0.8):
    """Elliot's bias and novelty metrics, one user at a time, as its classes compute them."""
    tdict = {u: set(g.item) for u, g in train.groupby("user")}
    pop = train.groupby("item").user.nunique().to_dict()
    order = sorted(pop, key=lambda i: (-pop[i], i))       # Elliot's order, with the ties by id
    head, limit = [], len(train) * ratio
    for i in order:
        head.append(i)
        limit -= pop[i]
        if limit <= 0:
            break
    head, tail = set(head), set(order) - set(head)
    rel = {u: set(g.item[g.rating >= threshold]) for u, g in test.groupby("user")}
    n_users, norm = len(tdict), sum(pop.values())
    epc_nov = {i: 1 - p / n_users for i, p in pop.items()}
    efd_nov = {i: -math.log2(p / norm) for i, p in pop.items()}
    out = {m: {} for m in ("ARP", "APLT", "ACLT", "EPC", "EFD")}
    rsp_num, rsp_den, reo_num, reo_den = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
    for u in users:
        top = lists.get(u, [])[:k]
        if top:
            out["ARP"][u] = sum(pop[i] for i in top) / len(top)
            out["APLT"][u] = len(set(top) & tail) / len(top)
        out["ACLT"][u] = len(set(top) & tail)
        for name, nov in (("EPC", epc_nov), ("EFD", efd_nov)):
            disc = [1 / math.log(r + 2) * math.log(2) for r in range(len(top))]
            val = sum(d * (i in rel.get(u, ())) * nov[i] for d, i in zip(disc, top))
            out[name][u] = val / sum(disc) if disc else 0.0
        if lists.get(u):  # Elliot's recommendations: the users with a list (a run file has no empty list)
            rec = set(top)
            rsp_num += [len(rec & head), len(rec & tail)]
            rsp_den += [len(head - tdict[u]), len(tail - tdict[u])]
            if rel.get(u):
                hits = rec & rel[u]
                reo_num += [len(hits & head), len(hits & tail)]
                reo_den += [len((head & rel[u]) - tdict[u]), len((tail & rel[u]) - tdict[u])]
    rsp, reo = rsp_num / rsp_den, reo_num / reo_den
    return out, np.std(rsp) / np.mean(rsp), np.std(reo) / np.mean(reo)


@pytest.mark.parametrize("seed", range(6))
def test_popularity_and_novelty_equal_elliot_loops(seed):
    train, test, lists = _random_case(seed)
    k = 5
    res = rm.evaluate(rm.Run.from_lists(lists), rm.Qrels(test), [f"{m}@{k}" for m in
                      ("ARP", "APLT", "ACLT", "EPC", "EFD", "PopRSP", "PopREO")], train=train)
    per_user, rsp, reo = _elliot(train, test, lists, k, res.users.tolist())
    for m, ref in per_user.items():
        # ARP, APLT, ACLT describe a list: undefined for a user without one (Elliot leaves the user out);
        # EPC and EFD: such a user scores 0 (coverage shortfall)
        listed = [bool(lists.get(u, [])[:k]) for u in res.users.tolist()]
        want = [ref.get(u, 0.0) if ok or m in ("EPC", "EFD") else np.nan for u, ok in zip(res.users.tolist(), listed)]
        np.testing.assert_allclose(res.per_user[f"{m}@{k}"], want, rtol=1e-12, atol=1e-12, err_msg=m)
        if m in ("ARP", "APLT", "ACLT"):  # the mean: over the users with a list, as Elliot's
            assert res.aggregate[f"{m}@{k}"] == pytest.approx(np.mean([ref[u] for u, ok in zip(res.users.tolist(), listed)
                                                                     if ok]), rel=1e-12)
    assert res.run_values[f"PopRSP@{k}"] == pytest.approx(rsp, rel=1e-12)
    assert res.run_values[f"PopREO@{k}"] == pytest.approx(reo, rel=1e-12)


@pytest.mark.filterwarnings("ignore:run 'run'")  # the judgments do not matter to ILD
@pytest.mark.parametrize("seed", range(4))
def test_ild_equals_ranksys_eild_loop(seed):
    rng = np.random.default_rng(seed)
    items = list(range(25))
    aspects = pd.Series({i: tuple(a for a in "pqrst" if rng.random() < 0.35) for i in items if i != 24})
    lists = {u: [int(i) for i in rng.choice(items, size=rng.integers(0, 9), replace=False)] for u in range(12)}
    q = rm.Qrels(pd.DataFrame({"user": list(range(12)), "item": 0, "rating": 5.0}))
    for dist in ("cosine", "jaccard"):
        got = rm.evaluate(rm.Run.from_lists(lists), q, [f"ILD@6(distance={dist})"], aspects=aspects).per_user
        got.columns = [f"ILD@6(distance={dist})"]
        for u, lst in lists.items():
            top = lst[:6]
            feats = [set(aspects.get(i, ())) for i in top]
            eild = 0.0
            for a, fa in enumerate(feats):   # EILD.evaluate with no relevance and no discount
                s = n = 0.0
                for b, fb in enumerate(feats):
                    if a == b or not fa or not fb:
                        continue           # an item without features: NaN distance, skipped
                    inter = len(fa & fb)
                    sim = inter / math.sqrt(len(fa) * len(fb)) if dist == "cosine" else inter / len(fa | fb)
                    s, n = s + 1 - sim, n + 1
                eild += s / n if n else 0.0
            assert got.loc[u, f"ILD@6(distance={dist})"] == pytest.approx(eild / len(top) if top else 0.0)


# ------------------------------------------------------------------ one scatter; ids; context
def test_one_scatter_serves_coverage_gini_entropy_arp(exposure_case):
    train, q, run = exposure_case
    j = rm.judge(run, q)
    specs = [rm.metrics.parse(m) for m in ("ItemCoverage@2", "Gini@2", "Entropy@2", "ARP@2", "APLT@2")]
    for s in specs:
        s(j, train=train)
    cache = j.__dict__["_exposure_cache"]
    assert len(cache) == 1                                  # one lookup of the run's items
    assert list(next(iter(cache.values()))[2]._counts) == [2]  # one count vector at the cut-off
    counts = ex.item_counts(j, 2, train=train)
    assert counts.to_dict() == {"a": 0, "b": 1, "c": 2, "d": 1}


def test_int_and_str_ids_are_matched_by_one_rule(pop_case):
    train, q, run = pop_case
    ms = ["ARP@3", "EPC@3", "ItemCoverage@3", "PopREO@2"]
    base = rm.evaluate(run, q, ms, train=train)
    codes = {c: i for i, c in enumerate("abcde")}
    q_int = rm.Qrels(q.to_frame().assign(item=lambda d: d.item.map(codes)), threshold=4)
    train_int = train.assign(item=train.item.map(codes))
    run_str = rm.Run.from_lists({u: [str(codes[i]) for i in v] for u, v in {1: "ade", 2: "cd", 3: "be"}.items()})
    other = rm.evaluate(run_str, q_int, ms, train=train_int)   # run str, judgments and train int
    assert other.aggregate.to_dict() == pytest.approx(base.aggregate.to_dict())


def test_item_ids_of_other_types_keep_user_ids_matched():
    """Judging converts only the side whose id types differ (int users, str vs int items)."""
    q = rm.Qrels(pd.DataFrame({"user": [1, 2], "item": [0, 2], "rating": 5.0}))
    assert rm.evaluate(rm.Run.from_lists({1: ["0", "3"], 2: ["2"]}), q, ["P@1"]).per_user["P@1"].tolist() == [1.0, 1.0]


def test_missing_context_names_what_to_pass(pop_case):
    train, q, run = pop_case
    with pytest.raises(InputError, match=r"metric ARP@3 needs train= \(pass it to evaluate"):
        rm.evaluate(run, q, ["ARP@3"])
    with pytest.raises(InputError, match=r"metric ItemCoverage@3 needs train= or catalog="):
        rm.evaluate(run, q, ["ItemCoverage@3"])
    with pytest.raises(InputError, match=r"metric ILD@3 needs aspects="):
        rm.evaluate(run, q, ["ILD@3"])
    with pytest.raises(InputError, match=r"head=1.5 must lie in \(0, 1\)"):
        rm.evaluate(run, q, ["APLT@3(head=1.5)"], train=train)
    with pytest.raises(InputError, match=r"train lacks column\(s\) \['item'\]"):
        rm.evaluate(run, q, ["ARP@3"], train=train.drop(columns="item"))


def test_train_test_overlap_is_no_error_for_popularity(pop_case):
    """User 2's test item b is one of their training items: fine for the popularity metrics (PopREO
    leaves it out as Elliot does), still an error for the AllItems universe."""
    train, q, run = pop_case
    rm.evaluate(run, q, ["ARP@3", "PopREO@3", "ItemCoverage@3"], train=train)
    with pytest.raises(InputError, match="train/test overlap"):
        rm.evaluate(run, q, ["markedness@2"], train=train, catalog=list("abcde"))


def test_per_run_kind_in_registry_and_aggregation(pop_case):
    train, q, run = pop_case
    table = rm.metrics.table().set_index("metric")
    per_run = set(table.index[table.scope == "run"])
    assert per_run == {"ItemCoverage", "UserCoverage", "Gini", "Entropy", "PopRSP", "PopREO"}
    assert (table.loc[["ARP", "APLT", "ACLT", "EPC", "EFD", "ILD", "P"], "scope"] == "user").all()
    assert all(table.loc[m, "description"].startswith("Per-run") for m in per_run)
    ms = ["Gini@3", "ARP@3", "P@2"]
    arith = rm.evaluate(run, q, ms, train=train)
    geo = rm.evaluate(run, q, ms, train=train, aggregate="geometric")
    assert geo.aggregate["Gini@3"] == arith.aggregate["Gini@3"]          # no user aggregation
    assert geo.aggregate["ARP@3"] < arith.aggregate["ARP@3"]
    assert list(arith.per_user.columns) == ["ARP@3", "P@2"]
    from recmetrics.evaluation import score_judged
    with pytest.raises(InputError, match="Gini@3 is per-run"):
        score_judged(rm.judge(run, q), [rm.metrics.parse("Gini@3")], train=train)


# ------------------------------------------------------------------ compare and the command line
def test_compare_shows_per_run_metrics_untested(pop_case):
    train, q, run = pop_case
    other = rm.Run.from_lists({1: ["e", "d", "a"], 2: ["d", "c"], 3: ["e", "b"]}, name="other")
    run.name = "first"
    res = cmp.compare(runs=[run, other], qrels=q, metrics=["ARP@3", "Gini@3"], train=train, n_permutations=200)
    assert list(res.means.columns) == ["ARP@3", "Gini@3"] and res.per_run == ("Gini@3",)
    assert set(res.pairs.metric) == {"ARP@3"}
    assert res.means.loc["first", "Gini@3"] == rm.evaluate(run, q, ["Gini@3"], train=train).run_values["Gini@3"]
    assert "per-run metrics (one value per system, not tested): Gini@3" in res.to_text()
    only = cmp.compare(runs=[run, other], qrels=q, metrics=["Gini@3"], train=train)
    assert only.pairs.empty and "Gini@3" in only.to_text()


@pytest.fixture()
def cli_files(tmp_path, pop_case):
    train, q, run = pop_case
    qf, rf, tf = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "train.csv"
    qf.write_text("".join(f"{r.user} 0 {r.item} {int(r.rating)}\n" for r in q.to_frame().itertuples()))
    rf.write_text("".join(f"{u} Q0 {i} {n + 1} {10 - n} sys\n" for u, v in {1: "ade", 2: "cd", 3: "be"}.items()
                          for n, i in enumerate(v)))
    train.to_csv(tf, index=False)
    return qf, rf, tf


def test_cli_per_run_and_training_data(cli_files, capsys, pop_case):
    qf, rf, tf = cli_files
    train, q, run = pop_case
    assert main(["evaluate", str(qf), str(rf), "-l", "4", "-m", "ARP@3", "Gini@3", "PopRSP@3", "--train", str(tf),
                 "--format", "json"]) == 0
    import json
    got = {r["metric"]: r["value"] for r in json.loads(capsys.readouterr().out)}
    want = rm.evaluate(run, q, ["ARP@3", "Gini@3", "PopRSP@3"], train=train).aggregate.to_dict()
    assert got == pytest.approx(want)
    assert main(["evaluate", str(qf), str(rf), "-l", "4", "-m", "Gini@3", "--train", str(tf), "--format", "trec"]) == 0
    gini = rm.evaluate(run, q, ["Gini@3"], train=train, users="run").run_values["Gini@3"]  # trec: users with a list
    assert capsys.readouterr().out.split("\t")[1:] == ["all", f"{gini:.17g}\n"]


@pytest.mark.parametrize("argv, message", [
    (["-q", "-m", "Gini@3", "--train", "T"], "metric Gini@3 is per-run (one value for the whole run): it has no "
                                             "per-user lines; drop -q/--per-user or evaluate Gini@3 apart"),
    (["-m", "ARP@10"], "metric ARP@10 needs train=: pass --train FILE (the training ratings"),
    (["-m", "ItemCoverage@10"], "metric ItemCoverage@10 needs train=: pass --train FILE"),
    (["-m", "ILD@10"], "metric ILD@10 needs aspects=: pass --aspects FILE (the items' aspects"),
])
def test_cli_bad_input_is_one_line(cli_files, capsys, argv, message):
    qf, rf, tf = cli_files
    argv = [str(tf) if a == "T" else a for a in argv]
    assert main(["evaluate", str(qf), str(rf), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("recmetrics: error: " + message)


def test_cli_compare_with_training_data(cli_files, capsys):
    qf, rf, tf = cli_files
    rf2 = rf.with_name("other.txt")
    rf2.write_text(rf.read_text().replace("sys", "other"))
    assert main(["compare", str(qf), str(rf), str(rf2), "-m", "ARP@3", "Gini@3", "--train", str(tf),
                 "--permutations", "100"]) == 0
    assert "per-run metrics (one value per system, not tested): Gini@3" in capsys.readouterr().out
    assert main(["compare", str(qf), str(rf), str(rf2), "-m", "Gini@3"]) == 2
    assert "needs train=: pass --train FILE" in capsys.readouterr().err


# ------------------------------------------------------------------ chapter 08 helpers
def test_chapter_list_popularity_and_bias_by_design(pop_case):
    from recmetrics import viz
    from recmetrics.protocols import chapter

    train, q, _ = pop_case
    test = q.to_frame()
    pop = rm.recommenders.create("Pop").fit(train)
    bias = chapter.list_popularity(train, test, {"Pop": pop}, n=2)
    run = pop.recommend(np.sort(test.user.unique()), n=2)
    want = rm.evaluate(run, rm.Qrels(test), ["ARP@2", "APLT@2", "ItemCoverage@2", "Gini@2"], users=[1, 2, 3],
                       train=train).summary()
    assert list(bias.columns) == list(chapter.LIST_BIAS) and bias.loc["Pop"].tolist() == pytest.approx(want)
    bias = pd.DataFrame({"ARP": [1.0, 5.0, 3.0]}, index=["r", "p", "k"])
    designs = pd.DataFrame({"design": ["AR"] * 3 + ["U"] * 3, "system": list("rpk") * 2, "metric": "P@10",
                            "value": [0.0, 0.2, 0.1, 0.1, 0.1, 0.4]})
    joined = chapter.bias_beside_designs(bias, designs)
    assert joined.ARP.tolist() == [1, 5, 3] * 2
    by = chapter.bias_by_design(joined)
    assert by.spearman.tolist() == pytest.approx([1.0, 0.0])  # U: ranks 1 3 2 against 1.5 1.5 3
    assert by.most_biased.tolist() == ["p", "p"]
    assert by.relative.tolist() == pytest.approx([1.0, 0.25])
    with pytest.raises(InputError, match=r"systems \['x'\] have no list bias"):
        chapter.bias_beside_designs(bias, designs.assign(system=list("rpx") * 2))
    spec = viz.bias_scatter(joined).to_dict()
    assert spec["facet"]["field"] == "design" and spec["columns"] == 3   # wrapped: legible in the column
    bars = viz.design_bars(designs.assign(random_expected=0.05)).to_dict()   # Fig. 4.7: the same layout
    assert bars["facet"]["field"] == "design" and bars["columns"] == 3


def test_docstring_examples_hold():
    import doctest

    from recmetrics.metrics import ild

    for module in (ex, popm, ild):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted and not result.failed, module.__name__
