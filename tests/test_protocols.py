"""Designs, target sets, analytic expectations and bounds of paper 004 (recmetrics.protocols)."""
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.protocols import parse, NAMES


@pytest.fixture(scope="module")
def ml():
    ds = rm.datasets.load("movielens-small")
    return rm.splits.holdout(ds.ratings, 0.2, seed=0)


@pytest.fixture(scope="module")
def sim():
    ds = rm.datasets.load("powerlaw", alpha=1.4, like="movielens-small")
    return rm.splits.holdout(ds.ratings, 0.2, seed=0)


def _toy():
    rng = np.random.default_rng(3)
    rows = [(u, i, float(rng.integers(1, 6))) for u in range(30) for i in rng.choice(60, 25, replace=False)]
    frame = pd.DataFrame(rows, columns=["user", "item", "rating"])
    return rm.splits.holdout(frame, 0.3, seed=1)


def _within_ci(result, expected, metric="P@10", z=4.0):
    """Cluster-robust (by user) z-interval around the Eq. 4.1 mean of the per-set values."""
    per = result.per_set
    x = per[metric].to_numpy()
    mu = x.mean()
    dev = pd.Series(x - mu).groupby(per["user"].to_numpy()).sum().to_numpy()
    se = np.sqrt((dev ** 2).sum()) / len(x)
    assert abs(mu - expected) <= z * se + 1e-12, (mu, expected, se)


@pytest.mark.parametrize("name", NAMES)
def test_every_design_round_trips(name):
    d = parse(name)
    assert parse(str(d)) == d
    assert parse(str(d).lower()) == d


def test_params_round_trip_and_unknown_names():
    d = parse("TI-1R-NN(n=50)")
    assert d.n == 50 and str(d) == "TI-1R-NN(n=50)"
    assert parse("P1R(m=5)").m == 5 and str(parse("P1R(m=5)")) == "P1R(m=5,n=99,popularity=full)"
    assert parse("P1R(popularity=train)").popularity == "train"
    with pytest.raises(InputError, match="popularity"):
        parse("P1R(popularity=test)")
    # the thesis' 1R: |T_u| = 100, i.e. n = 99 non-relevant items (§4.3.3)
    assert parse("TI-1R-NN").n == 99 and parse("U1R").n == 99 and parse("head10").n == 99
    assert str(parse("AI-UAR")) == "AI-UAR" and parse("AI-UAR").candidates == "AI" and parse("UAR").candidates == "TI"
    with pytest.raises(UnknownNameError, match="TI-1R-NN"):
        parse("TI-1R-MN")
    with pytest.raises(UnknownNameError, match="P1R"):
        parse("P1RR")
    with pytest.raises(UnknownNameError):
        parse("TI-AR-NN(k=3)")
    with pytest.raises(InputError, match="n .* >= 1"):
        parse("TI-1R-NN(n=0)")
    with pytest.raises(InputError):
        parse(3)


@pytest.mark.parametrize("design", ["AI-AR-AN", "AI-AR-NN(n=10)", "AI-1R-AN", "AI-1R-NN(n=10)",
                                    "TI-AR-AN", "TI-AR-NN(n=10)", "TI-1R-AN", "TI-1R-NN(n=10)",
                                    "P1R(m=2,n=5)", "head10(relevant=1R,n=5)", "head10(relevant=AR)"])
def test_all_designs_evaluate_with_several_metrics(design):
    train, test = _toy()
    s = rm.recommenders.create("Pop").fit(train)
    r = rm.protocols.evaluate(s, train, test, design, ["P@5", "nDCG@5", "AP"])
    assert list(r.aggregate.index) == ["P@5", "nDCG@5", "AP"]
    assert ((r.per_set[["P@5", "nDCG@5", "AP"]] >= 0) & (r.per_set[["P@5", "nDCG@5", "AP"]] <= 1)).all().all()
    if "1R" in design or design.startswith("P1R") or "relevant=1R" in design:
        assert "item" in r.per_set.columns
        # one set per relevant test item among the candidates
        assert len(r.per_set) == r.metadata["n_sets"]


def test_target_set_contents():
    train, test = _toy()
    ts = rm.protocols.build_targets(train, test, "TI-1R-NN(n=7)", seed=0)
    assert (ts.lengths == 8).all()
    seen = train.groupby("user")["item"].agg(set)
    rel = test[test.rating >= 4].groupby("user")["item"].agg(set)
    test_items = set(test["item"])
    for s in range(len(ts.lengths)):
        items = ts.items[ts.starts[s]:ts.starts[s + 1]]
        u = ts.users[s]
        assert items[0] == ts.rel_item[s] and len(set(items)) == len(items)
        assert not (set(items[1:]) & (seen.get(u, set()) | rel[u]))
        assert set(items) <= test_items  # TI
    # N_u is shared by the user's 1R sets (the lemma's N_u^r = N_u)
    first = {}
    for s in range(len(ts.lengths)):
        n = frozenset(ts.items[ts.starts[s] + 1:ts.starts[s + 1]])
        assert first.setdefault(ts.users[s], n) == n


def test_an_is_all_candidates_minus_relevant_and_training():
    train, test = _toy()
    ts = rm.protocols.build_targets(train, test, "AI-AR-AN")
    items = set(train["item"]) | set(test["item"])
    u = ts.users[0]
    expect = items - set(train[train.user == u]["item"])
    assert set(ts.items[ts.starts[0]:ts.starts[1]]) == expect


def test_scoring_is_batched_per_user_not_per_set():
    train, test = _toy()
    s = rm.recommenders.create("Pop").fit(train)
    calls = []
    orig = s.score_targets
    s.score_targets = lambda users, targets: (calls.append(len(users)), orig(users, targets))[1]
    r = rm.protocols.evaluate(s, train, test, "TI-1R-NN(n=5)")
    assert len(calls) == 1 and r.metadata["n_sets"] > calls[0]


def test_random_1r_precision_is_one_over_t(ml, sim):
    for train, test in (ml, sim):
        s = rm.recommenders.create("Random", seed=1).fit(train)
        design = "TI-1R-NN(n=100)"
        exp = rm.protocols.expected_random_precision(train, test, design)
        assert exp == pytest.approx(1 / 101)
        _within_ci(rm.protocols.evaluate(s, train, test, design, "P@10", seed=1), exp)


def test_random_ar_precision_is_sigma_delta(ml, sim):
    for train, test in (ml, sim):
        s = rm.recommenders.create("Random", seed=2).fit(train)
        exp = rm.protocols.expected_random_precision(train, test, "TI-AR-AN")
        _within_ci(rm.protocols.evaluate(s, train, test, "TI-AR-AN", "P@10", seed=2), exp)
        sd = rm.protocols.sigma_delta(train, test, "TI-AR-AN")
        assert sd["sigma"] == pytest.approx(0.2, abs=0.01)
        assert sd["sigma_delta"] == pytest.approx(exp, rel=0.35)  # Eq. 4.4 is an approximation (~)


@pytest.mark.parametrize("system", ["Random", "Pop", "UserKNN", "PureSVD", "pLSA"])
def test_eq42_bounds_hold(ml, system):
    train, test = ml
    s = rm.recommenders.create(system).fit(train)
    b = rm.protocols.eq42_bounds(s, train, test, n=10, size=50)
    assert b["lower"] - 1e-12 <= b["value"] <= b["upper"] + 1e-12, b


def test_eq42_value_matches_evaluate(ml):
    train, test = ml
    s = rm.recommenders.create("Pop").fit(train)
    b = rm.protocols.eq42_bounds(s, train, test, n=10, size=50, seed=4)
    r = rm.protocols.evaluate(s, train, test, "TI-1R-NN(n=50)", "P@10", seed=4)
    assert b["value"] == pytest.approx(r.aggregate["P@10"])


def test_p1r_limit_and_average(ml):
    train, test = ml
    n_c = len(rm.protocols.candidates(train, test, "P1R"))
    with pytest.raises(InputError, match=r"\|J\|/m"):
        rm.protocols.build_targets(train, test, f"P1R(m=10,n={n_c // 10})")
    s = rm.recommenders.create("Random").fit(train)
    r = rm.protocols.evaluate(s, train, test, "P1R(m=10,n=50)")
    assert sorted(r.per_set["percentile"].unique()) == list(range(10))
    assert r.aggregate["P@10"] == pytest.approx(r.per_set.groupby("percentile")["P@10"].mean().mean())


def test_nn_short_pool_strict_errors_default_takes_the_pool():
    train, test = _toy()
    with pytest.raises(InputError, match=r"user .* has only \d+ non-relevant candidate items.*use n <="):
        rm.protocols.build_targets(train, test, "TI-1R-NN(n=1000)", strict=True)
    with pytest.warns(rm.protocols.ShortPoolWarning, match="short"):
        ts = rm.protocols.build_targets(train, test, "TI-1R-NN(n=1000)")
    assert ts.metadata["short_sets"] == len(ts.lengths) and ts.short.all()
    # the chapter helpers report the short sets in their results instead of printing the warning
    import warnings

    from recmetrics.protocols import chapter

    with warnings.catch_warnings():
        warnings.simplefilter("error", rm.protocols.ShortPoolWarning)
        rnd = chapter.random_vs_analytic(train, test, ["TI-1R-NN(n=1000)"], seeds=(0,), n_bootstrap=20)
    assert (rnd["short_sets"] == len(ts.lengths)).all()
    # the random expectation follows the actual set sizes
    exp = rm.protocols.expected_random_precision(train, test, "TI-1R-NN(n=1000)", targets=ts)
    assert exp == pytest.approx(np.mean(np.minimum(10, ts.lengths) / 10 / ts.lengths))


def test_p1r_default_runs_on_movielens_small():
    """Issue 16: P1R failed by default (user 15 has 90 non-relevant items in the top percentile)."""
    ds = rm.datasets.load("movielens-small")
    train, test = rm.splits.holdout(ds.ratings, 0.2, seed=0)
    pop = rm.recommenders.create("Pop").fit(train)
    with pytest.warns(UserWarning, match="short"):
        r = rm.protocols.evaluate(pop, train, test, rm.protocols.parse("P1R"), ["P@10"])
    assert r.metadata["short_sets"] > 0 and r.metadata["short_users"] >= 1
    assert 0 < r.aggregate["P@10"] < 0.1
    with pytest.raises(InputError, match="user 15 has only"):
        rm.protocols.evaluate(pop, train, test, "P1R", ["P@10"], strict=True)


def test_p1r_percentiles_by_full_or_training_counts(ml):
    train, test = ml
    C = rm.protocols.candidates(train, test, "P1R")
    full = rm.protocols.percentiles(train, test, C, 10, "full")
    tr = rm.protocols.percentiles(train, test, C, 10, "train")
    assert np.bincount(full).max() - np.bincount(full).min() <= 1  # equal parts
    assert (full != tr).any()
    counts = rm.protocols.popularity(train, test).reindex(C).to_numpy()
    assert counts[full == 0].min() >= counts[full == 9].max()  # percentile 0 = most popular by full counts
    a = rm.protocols.build_targets(train, test, "P1R(popularity=full)", threshold=5)
    b = rm.protocols.build_targets(train, test, "P1R(popularity=train)", threshold=5)
    assert a.metadata["design"] != b.metadata["design"] and (a.group != b.group).any()


def test_nn_samples_do_not_depend_on_the_evaluated_users(ml):
    train, test = ml
    who = np.sort(test["user"].unique())[5:25]
    full = rm.protocols.build_targets(train, test, "TI-1R-NN(n=30)", seed=3)
    part = rm.protocols.build_targets(train, test, "TI-1R-NN(n=30)", seed=3, users=who)
    sets = lambda ts: {(u, i): frozenset(ts.items[a + 1:b]) for u, i, a, b in
                       zip(ts.users, ts.rel_item, ts.starts[:-1], ts.starts[1:])}
    sp, sf = sets(part), sets(full)
    assert sp and all(sf[k] == v for k, v in sp.items())


def test_uniform_size_gives_the_thesis_eta_on_movielens_1m_statistics():
    """§4.6.2: |T| = 1,703 and η = 118 on MovieLens 1M (σ = ε = 0.2); the old η = round(σ r/|T|) gave 117.
    The raw data are not available offline: 3,706 items, r = 1,000,209 ratings, and r(i_1703) = 147, the
    count at the edge of T that |T| = 1,703 implies (r(i_1703) >= 0.2 r / (0.8 · 1703) = 146.8 > r(i_1704))."""
    counts = np.r_[np.full(200, 3696), np.full(1503, 147), np.full(2003, 20)]
    counts[0] += 1_000_209 - counts.sum()
    assert len(counts) == 3706 and counts.sum() == 1_000_209
    zeta, eta = rm.protocols.uniform_size(counts, 0.2, 0.2)
    assert (zeta, eta) == (1703, 118)
    assert int(round(0.2 * 1_000_209 / 1703)) == 117  # the rounding the issue reported
    assert 1703 * eta / 1_000_209 == pytest.approx(0.2009, abs=1e-4)  # the test ratio reached


def test_uniform_split(ml):
    ratings = rm.datasets.load("movielens-small").ratings
    train, test, info = rm.protocols.uniform_split(ratings, 0.2, 0.2, seed=0)
    counts = test["item"].value_counts()
    assert counts.nunique() == 1 and counts.iloc[0] == info["eta"] and len(counts) == info["T"]
    r_i = rm.protocols.popularity(ratings)
    assert ((1 - 0.2) * r_i.loc[counts.index] >= info["eta"] - 0.5).all()  # η = (1-ε) r(i_ζ), rounded
    assert info["test_ratio"] == pytest.approx(len(test) / len(ratings))
    assert info["test_ratio"] == pytest.approx(info["T"] * info["eta"] / len(ratings))
    assert info["test_ratio"] >= 0.2  # η = round((1-ε) r(i_ζ)) reaches σ (the old rule gave 0.188 here)
    assert info["train_share_min"] == pytest.approx(1 - info["eta"] / r_i.iloc[info["T"] - 1])
    assert len(train) + len(test) == len(ratings)
    s = rm.recommenders.create("Pop").fit(train)
    r = rm.protocols.evaluate(s, train, test, "U1R(n=100)")
    assert r.metadata["n_candidates"] == info["T"]
    rm.protocols.evaluate(s, train, test, "UAR")
    # a non-uniform test set is refused by U designs
    tr, te = ml
    with pytest.raises(InputError, match="uniform_split"):
        rm.protocols.build_targets(tr, te, "U1R")


def test_uniform_split_errors():
    ratings = rm.datasets.load("movielens-small").ratings
    with pytest.raises(InputError, match="largest feasible σ"):
        rm.protocols.uniform_split(ratings, 0.95, 0.2)
    with pytest.raises(InputError, match="1/folds"):
        rm.protocols.uniform_split(ratings, 0.2, 0.1, folds=5)
    with pytest.raises(InputError, match="sigma"):
        rm.protocols.uniform_split(ratings, 1.5, 0.2)


def test_head10_removes_most_popular_items(ml):
    train, test = ml
    pop = rm.protocols.popularity(train, test)
    head = set(pop.index[: int(np.ceil(0.1 * len(pop)))])
    ts = rm.protocols.build_targets(train, test, "head10")
    assert not (set(ts.items) & head)


def test_evaluate_is_seeded(ml):
    train, test = ml
    s = rm.recommenders.create("Random").fit(train)
    a = rm.protocols.evaluate(s, train, test, "TI-1R-NN(n=20)", seed=5).aggregate
    b = rm.protocols.evaluate(s, train, test, "TI-1R-NN(n=20)", seed=5).aggregate
    pd.testing.assert_series_equal(a, b)


def test_candidates_exclude_items_no_system_can_score():
    train = pd.DataFrame({"user": [1, 1, 2, 2], "item": [10, 11, 10, 12], "rating": [5.0, 1, 5, 5]})
    test = pd.DataFrame({"user": [1, 2, 2], "item": [12, 11, 99], "rating": [5.0, 5, 1]})
    assert 99 not in rm.protocols.candidates(train, test, "TI-1R-AN")
    assert 99 not in rm.protocols.candidates(train, test, "AI-1R-AN")


def test_users_restricts_evaluated_users_not_candidates(ml):
    train, test = ml
    who = np.sort(test["user"].unique())[:20]
    ts = rm.protocols.build_targets(train, test, "TI-1R-NN(n=10)", users=who)
    assert set(ts.users) <= set(who)
    assert ts.metadata["n_candidates"] == len(rm.protocols.candidates(train, test, "TI-1R-NN"))


def test_claims_assess_and_report_missing_results_inconclusive():
    from recmetrics.meta import findings
    from recmetrics.papers import bellogin2012 as paper

    rnd = pd.DataFrame({"design": ["TI-1R-NN(n=99)", "TI-AR-AN"], "seed": [0, 0], "measured": [0.0099, 0.004],
                        "expected": [0.0100, 0.0041], "se": [0.0004, 0.0002]})
    table = findings.assess(paper.CLAIMS, {"random": rnd}, context={"dataset": "toy"})
    assert len(table) == len(paper.CLAIMS)
    v = table.set_index("id")["verdict"]
    assert v["random-1r"] == "agrees" and v["random-ar"] == "agrees" and v["alpha-rises"] == "inconclusive"
    off = rnd.assign(measured=[0.0140, 0.004])
    assert findings.assess(paper.CLAIMS, {"random": off}).set_index("id")["verdict"]["random-1r"] == "disagrees"
    wide = rnd.assign(se=[0.004, 0.002])  # within the noise, but the noise is ±80 %: no test
    assert findings.assess(paper.CLAIMS, {"random": wide}).set_index("id")["verdict"]["random-1r"] == "inconclusive"


def test_identity_checks_decide_departures_as_one_family():
    """Two 1R designs whose Random precision departs from 1/t by 2.1 se each (a true identity: chance): each
    alone at 2 se read 'disagrees'; Holm over the two departures needs 2.28 se for the larger (issue 25 §2)."""
    from recmetrics.meta import findings
    from recmetrics.papers import bellogin2012 as paper

    rnd = pd.DataFrame({"design": ["TI-1R-NN(n=99)", "P1R(m=10,n=99)"], "seed": [0, 0],
                        "measured": [0.01 - 2.1 * 0.0009, 0.01 + 2.1 * 0.0009], "expected": [0.01, 0.01],
                        "se": [0.0009, 0.0009]})
    row = findings.assess(paper.CLAIMS, {"random": rnd}).set_index("id").loc["random-1r"]
    assert row.verdict == "inconclusive" and "Holm over the 2 designs" in row.our_evidence, row.our_evidence
    # one design far off (5 se) still disagrees; both within the noise with a narrow band agree
    far = rnd.assign(measured=[0.01 - 5 * 0.0009, 0.01])
    assert findings.assess(paper.CLAIMS, {"random": far}).set_index("id")["verdict"]["random-1r"] == "disagrees"
    near = rnd.assign(measured=[0.0098, 0.0101])
    assert findings.assess(paper.CLAIMS, {"random": near}).set_index("id")["verdict"]["random-1r"] == "agrees"


def test_positive_ratio_segments():
    from recmetrics.protocols import chapter

    ratings = rm.datasets.load("movielens-small").ratings
    r = chapter.positive_ratio(ratings, segments=10)
    assert len(r) == 10 and r["ratio"].between(0, 1).all()
    assert r["popularity"].is_monotonic_decreasing
