"""Robustness to incompleteness (000 §4.2): masks over judged positions equal re-judging."""
import numpy as np
import pytest

from recmetrics import study
from recmetrics.data.qrels import Qrels
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.evaluation import evaluate, parse_metrics, score_judged
from recmetrics.meta import reduced_sets as rs
from recmetrics.meta import robustness as rb

from test_recommenders import synthetic

SYSTEMS = ["Random", "Pop", "ItemKNN(k=20)"]


@pytest.fixture(scope="module")
def st(tmp_path_factory):
    root = tmp_path_factory.mktemp("rob")
    return study.Study(synthetic(seed=3), SYSTEMS, ["P", "nDCG", "RR", "AP", "bpref"], [10], k=2, seed=0,
                       cache_dir=root / "runs", progress=False)


@pytest.mark.filterwarnings("ignore:run .* have no judgments")
@pytest.mark.parametrize("scenario", rb.SCENARIOS)
def test_mask_equals_rejudging(st, scenario):
    fold = rs._Fold(st.qrels[0], st.ratings.groupby("user").size())
    keep = fold.keep(scenario, 0.4, np.random.default_rng(1))
    q = Qrels(fold.frame[keep], st.qrels[0].threshold, st.qrels[0].max_rating)
    fast = rs._subset_qrels(st.qrels[0], keep)
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10"])
    for s in SYSTEMS:
        j = st.judged(s, 0)
        want = evaluate(st.runs[(s, 0)], q, specs).per_user
        for qq in (q, fast):
            mj = rb.mask_judged(j, keep[rs._hit_sources(j, fold)], qq)
            assert np.array_equal(mj.users, want.index.to_numpy())
            assert np.allclose(score_judged(mj, specs).T, want.to_numpy())


@pytest.mark.filterwarnings("ignore:run .* have no judgments")
def test_mask_judged_rows_in_any_order(st):
    """Rows in any order (gathered by range), or ascending and most of their span (one pass over the
    span: the whole run, a block in its middle, every third row): the same judged rows, in the order asked."""
    fold = rs._Fold(st.qrels[0], None)
    keep = fold.keep("ratings", 0.6, np.random.default_rng(4))
    q = rs._subset_qrels(st.qrels[0], keep)
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10", "infAP@10"])
    j = st.judged(SYSTEMS[2], 0)
    hit_keep = keep[rs._hit_sources(j, fold)]
    every = rb.mask_judged(j, hit_keep, q)
    want = score_judged(every, specs)
    rows = np.flatnonzero(np.isin(j.users, every.users))
    assert len(rows) > 60
    for pick in (rows[::-1], rows[::3], rows[[2, 0, 1]], rows[5:-5], rows[::20], rows[-1:], rows[:1]):
        got = rb.mask_judged(j, hit_keep, q, pick)
        assert np.array_equal(got.users, j.users[pick])
        assert np.array_equal(score_judged(got, specs), want[:, np.searchsorted(rows, pick)])
        assert (np.diff(got.hits.rows) >= 0).all()


def test_scenario_sizes(st):
    fold = rs._Fold(st.qrels[0], None)
    rng = np.random.default_rng(0)
    assert fold.keep("ratings", 0.25, rng).sum() == round(0.25 * len(fold.frame))
    items = fold.frame["item"][fold.keep("popular-items", 0.5, rng)]
    kept_pop = fold.item_pop[fold.qrels.item_index.get_indexer(items.unique())]
    assert kept_pop.max() <= np.sort(fold.item_pop)[len(fold.item_pop) // 2]
    users = fold.frame["user"][fold.keep("random-users", 0.5, rng)].nunique()
    assert users == round(0.5 * len(fold.qrels.user_index))


def test_robustness_study(st):
    r = rb.robustness_study(st, sizes=(1.0, 0.5, 0.1), n_samples=3, seed=0, progress=False)
    assert np.allclose(r.full.to_numpy(), st.table(10).to_numpy())
    s = r.summary()
    assert set(s.scenario) == set(rb.SCENARIOS) and (s[s["size"] == 1.0].tau == 1.0).all()
    assert (s[s["size"] < 1].samples == 3).all()   # tie-breaks are sampled like the random draws
    again = rb.robustness_study(st, sizes=(1.0, 0.5, 0.1), n_samples=3, seed=0, progress=False, n_jobs=2)
    assert r.samples.equals(again.samples)
    other = rb.robustness_study(st, ["ratings"], sizes=(0.1,), n_samples=3, seed=1, progress=False)
    assert not np.allclose(other.samples.mean_value, r.samples.query("scenario == 'ratings' and size == 0.1")
                           .mean_value)
    assert r.curve("ratings").index[0] == 1.0


def test_robustness_bad_input(st):
    for size in (0.0, 1.5, -0.1):
        with pytest.raises(InputError, match="outside"):
            rb.robustness_study(st, sizes=(size,), progress=False)
    with pytest.raises(InputError, match="cut-off 100 is not in the study"):
        rb.robustness_study(st, cutoffs=100, progress=False)
    with pytest.raises(UnknownNameError):
        rb.robustness_study(st, metrics=["ERR"], progress=False)
    with pytest.raises(UnknownNameError):
        rb.robustness_study(st, scenarios=["popular-users"], progress=False)
    with pytest.raises(InputError, match="n_samples"):
        rb.robustness_study(st, n_samples=0, progress=False)
    with pytest.raises(InputError, match="tie_break"):
        rb.robustness_study(st, tie_break="last", progress=False)
    with pytest.raises(InputError, match="no grid for scenario 'large-users'"):
        rb.robustness_study(st, ["ratings", "large-users"], sizes=rb.GRIDS_003, progress=False)
    with pytest.raises(InputError, match=r"sizes\['popular-items'\].*0.0 is outside"):
        rb.robustness_study(st, sizes={"ratings": [0.5], "popular-items": [0.9, 0.0]}, progress=False)
    with pytest.raises(UnknownNameError):
        rb.resolve_grids({"popular": [0.9]})
    with pytest.raises(InputError, match="two grids"):
        rb.resolve_grids({"popular-items": [0.9], "popular_items": [0.8]})


def test_user_scenarios_shortcut_equals_masking(st):
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10"])
    ctx = rs._Context(st, specs, st.ratings.groupby("user").size())
    for scenario in ("random-users", "large-users"):
        fast = ctx.sample(scenario, 0.4, 11, "arithmetic")
        ctx.users_shortcut = False
        slow = ctx.sample(scenario, 0.4, 11, "arithmetic")
        ctx.users_shortcut = True
        assert np.allclose(fast, slow)


def test_stacked_sample_equals_per_system_masking(st):
    """The stacked path (one mask and one scoring call per fold for every system) gives the numbers
    of masking and scoring each system's judged run on its own."""
    from recmetrics.evaluation import score_judged
    from recmetrics.metrics.aggregate import aggregate

    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10", "infAP@10", "ERR@10"])
    ctx = rs._Context(st, specs, st.ratings.groupby("user").size())
    for scenario, size, seed in (("ratings", 0.3, 5), ("random-items", 0.5, 2), ("popular-items", 0.2, 0)):
        got = ctx.sample(scenario, size, seed, "geometric")
        rng = np.random.default_rng(seed)
        per_system = {s: [] for s in st.systems}
        for f, fold in enumerate(ctx.folds):
            keep = fold.keep(scenario, size, rng)
            q = rs._subset_qrels(fold.qrels, keep)
            for s in st.systems:
                j = st.judged(s, f)
                mj = rb.mask_judged(j, keep[rs._hit_sources(j, fold)], q)
                if len(mj):
                    per_system[s].append(score_judged(mj, specs))
        want = np.stack([aggregate(np.concatenate(per_system[s], axis=1), "geometric", axis=1)
                         for s in st.systems], axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_discriminative_power_takes_a_study(st):
    from recmetrics.meta import discriminative_power

    one = discriminative_power(st, 2000, seed=1, metric="nDCG@10")
    same = discriminative_power(st.scores("nDCG", 10), 2000, seed=1)
    assert one.pvalues.equals(same.pvalues)
    every = discriminative_power(st, 2000, seed=1)
    assert set(every) == set(st.metrics) and every["nDCG"].pvalues.equals(same.pvalues)
    with pytest.raises(InputError, match="cut-off 100 is not in the study"):
        discriminative_power(st, 2000, metric="P", cutoff=100)
    with pytest.raises(InputError, match="select from a Study"):
        discriminative_power(st.scores("P", 10), 2000, metric="P")


def test_stack_checks_its_inputs(st):
    from recmetrics.judged import judge, stack

    a, b = st.judged(st.systems[0], 0), st.judged(st.systems[1], 0)
    s = stack([a, b])
    assert len(s) == len(a) + len(b) and s.metadata["offsets"].tolist() == [0, len(a), len(a) + len(b)]
    with pytest.raises(InputError, match="at least one"):
        stack([])
    other = judge(st.runs[(st.systems[1], 1)], st.qrels[1], depth=a.depth)
    with pytest.raises(InputError, match="same Qrels"):
        stack([a, other])
    with pytest.raises(InputError, match="stacks several runs"):
        s.items


# ------------------------------------------------------------------ grids per scenario (issue 16)
def test_default_grids_are_each_papers_per_scenario():
    """003 §5: sparsity 100% -> 5% in 5% steps, popularity 100% -> 80% of the items in 1% steps;
    000 §4.2: ratings (and the random scenarios) 100% -> 1%. The popular-items default ends at 80%."""
    assert rb.GRIDS_003["ratings"] == tuple(round(1 - 0.05 * i, 2) for i in range(20))
    assert rb.GRIDS_003["ratings"][-1] == 0.05 and len(rb.GRIDS_003["ratings"]) == 20
    assert rb.GRIDS_003["popular-items"] == tuple(round(1 - 0.01 * i, 2) for i in range(21))
    assert set(rb.GRIDS_003) == {"ratings", "popular-items"}
    assert set(rb.GRIDS_000) == set(rb.SCENARIOS)
    assert rb.GRIDS_000["ratings"][0] == 1.0 and rb.GRIDS_000["ratings"][-1] == 0.01
    assert rb.GRIDS_000["random-items"] == rb.GRIDS_000["random-users"] == rb.GRIDS_000["ratings"]
    assert rb.DEFAULT_GRIDS["popular-items"][-1] == 0.8 and min(rb.DEFAULT_GRIDS["popular-items"]) == 0.8
    assert rb.resolve_grids(None) == {k: tuple(v) for k, v in rb.DEFAULT_GRIDS.items()}
    assert set(rb.QUICK_GRIDS) == set(rb.SCENARIOS) and min(rb.QUICK_GRIDS["popular-items"]) == 0.8
    # large users: the random users' grid (000 §6.3.3's "fall short" cannot show on 100% -> 80%), one
    # definition shared with paper 000's set-up
    from recmetrics.papers import valcarce2020

    assert rb.GRIDS_000["large-users"] == rb.PAPER_SIZES and rb.QUICK_GRIDS["large-users"] == rb.QUICK_SIZES
    assert valcarce2020.SETUP.robustness_sizes == dict(rb.GRIDS_000)
    with pytest.raises(TypeError):
        rb.GRIDS_003["ratings"] = (1.0,)    # module constants the papers' set-ups point to: read-only


def test_default_run_uses_the_grid_of_each_scenario(st):
    r = rb.robustness_study(st, n_samples=1, seed=0, progress=False)
    sizes = r.samples.groupby("scenario")["size"].agg(["min", "nunique"])
    assert sizes.loc["popular-items", "min"] == 0.8 and sizes.loc["popular-items", "nunique"] == 21
    assert sizes.loc["large-users", "min"] == 0.01 and sizes.loc["large-users", "nunique"] == 12
    assert sizes.loc["ratings", "min"] == 0.01 and sizes.loc["ratings", "nunique"] == 12
    assert r.grids["popular-items"] == rb.POPULARITY_003 and r.tie_break == "sample"


def test_sizes_per_scenario(st):
    r = rb.robustness_study(st, sizes={"ratings": (1.0, 0.5), "popular_items": (0.9, 0.85)}, n_samples=2,
                            progress=False)
    got = r.samples.groupby("scenario", sort=False)["size"].unique()
    assert list(got.index) == ["ratings", "popular-items"]   # the mapping's scenarios, nothing else
    assert sorted(got["ratings"]) == [0.5, 1.0] and sorted(got["popular-items"]) == [0.85, 0.9]
    one = rb.robustness_study(st, ["ratings", "large-users"], (0.5,), n_samples=2, progress=False)
    assert set(one.samples["size"]) == {0.5} and set(one.samples.scenario) == {"ratings", "large-users"}
    r3 = rb.robustness_study(st, "popular-items", rb.GRIDS_003, n_samples=1, progress=False)
    assert set(r3.samples.scenario) == {"popular-items"} and r3.samples["size"].min() == 0.8


def test_cutoff_robustness_defaults_to_003s_grids(st):
    r = rb.cutoff_robustness(st, "nDCG", n_samples=1, scenario=["ratings", "popular-items"], progress=False)
    assert r.grids == {"ratings": rb.SPARSITY_003, "popular-items": rb.POPULARITY_003}
    assert set(r.samples.metric) == {"nDCG@10"}


# ------------------------------------------------------------------ tie-breaks are sampled (issue 16)
def test_tie_breaks_give_different_orders_when_counts_tie(st):
    from recmetrics.parallel import task_seeds

    fold = rs._Fold(st.qrels[0], st.ratings.groupby("user").size())
    for scenario, weight in (("popular-items", fold.item_pop), ("large-users", fold.user_size)):
        assert len(np.unique(weight)) < len(weight)               # counts tie in this data
        seeds = task_seeds(rb._mix(0, scenario, 0.5), 8)
        orders = [fold.order(scenario, np.random.default_rng(s)) for s in seeds]
        assert len({o.tobytes() for o in orders}) == 8            # n_samples different orders
        for o in orders:                                          # ... each sorted by count
            assert (np.diff(weight[o]) >= 0).all()
        # the kept sets differ too where the cut falls inside a group of equal counts
        w = np.sort(weight)
        k = int(np.flatnonzero(w[1:] == w[:-1])[len(w) // 3]) + 1   # keep k: cut between two equal counts
        kept = {fold.keep(scenario, k / len(w), np.random.default_rng(s)).tobytes() for s in seeds}
        assert len(kept) > 1


def test_tie_break_noise_enters_area_se(st):
    grids = {"popular-items": (1.0, 0.9, 0.7, 0.5), "large-users": (1.0, 0.9, 0.7, 0.5)}
    r = rb.robustness_study(st, sizes=grids, n_samples=8, seed=0, progress=False)
    s = r.summary()
    assert (s[s["size"] < 1].samples == 8).all()
    se = r.area_se()
    for scenario in grids:
        assert (se[scenario] > 0).any()                           # the tie-breaks move τ
        assert se[scenario].notna().all()
    first = rb.robustness_study(st, sizes=grids, n_samples=8, seed=0, progress=False, tie_break="first")
    assert (first.summary().query("size < 1").samples == 1).all() and first.area_se().isna().all()
    # "first" is the first of the sampled tie-breaks (the single order earlier versions drew)
    zero = r.samples[r.samples["sample"] == 0].reset_index(drop=True)
    assert zero.equals(first.samples.reset_index(drop=True))


def test_tie_break_samples_share_work_but_not_results(st):
    """The batched path (one task per size; samples keeping the same judgments scored once, other
    samples re-scoring only the users whose judgments differ) is bit-identical to each sample alone,
    and equal to masking every row afresh."""
    from recmetrics.parallel import task_seeds

    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10", "infAP@10", "ERR@10"])
    ctx = rs._Context(st, specs, st.ratings.groupby("user").size())
    for scenario, size in (("popular-items", 0.7), ("popular-items", 0.3), ("large-users", 0.6), ("ratings", 0.4)):
        seeds = task_seeds(rb._mix(3, scenario, size), 6)
        batch = ctx.samples(scenario, size, seeds, "geometric")
        alone = [ctx.sample(scenario, size, s, "geometric") for s in seeds]
        for b, a in zip(batch, alone):
            assert np.array_equal(b, a, equal_nan=True)
        ctx.users_shortcut = False
        slow = ctx.samples(scenario, size, seeds, "geometric")
        ctx.users_shortcut = True
        for b, a in zip(batch, slow):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)


def test_same_seed_is_bit_identical_for_any_n_jobs(st):
    kw = dict(sizes={"ratings": (1.0, 0.4), "popular-items": (0.9, 0.6), "large-users": (0.8, 0.5),
                     "random-items": (0.5,), "random-users": (0.5,)}, n_samples=4, seed=7, progress=False)
    one = rb.robustness_study(st, **kw)
    for n_jobs, prefer in ((2, "threads"), (3, "threads"), (2, "processes")):
        other = rb.robustness_study(st, n_jobs=n_jobs, prefer=prefer, **kw)
        assert one.samples.equals(other.samples), (n_jobs, prefer)
        assert one.full.equals(other.full)
    assert not one.samples.equals(rb.robustness_study(st, **{**kw, "seed": 8}).samples)


def test_subset_of_some_users_equals_the_masked_subset(st):
    fold = rs._Fold(st.qrels[0], None)
    keep = fold.keep("popular-items", 0.6, np.random.default_rng(2))
    users = np.unique(fold.ucodes)[::3]
    part = rs._subset_qrels(st.qrels[0], keep, users)
    want = rs._subset_qrels(st.qrels[0], keep & np.isin(fold.ucodes, users))
    for name in ("_ucodes", "_icodes", "_ratings", "_keys", "_desc", "n_relevant", "n_nonrelevant"):
        assert np.array_equal(getattr(part, name), getattr(want, name)), name
    assert np.array_equal(part.ideal_dcg(part.users, 10), want.ideal_dcg(want.users, 10))
    assert part.negative == want.negative == st.qrels[0].negative   # a full Qrels, re-judgeable


def test_an_undefined_tau_counts_as_no_agreement():
    """A metric that ties every system at a small size (τ undefined) must not look more robust."""
    import pandas as pd
    from recmetrics.meta.robustness import Robustness

    rows = [("ratings", 1.0, 0, m, 1.0, 0.1) for m in ("A", "B")]
    for size, a, b in ((0.5, 0.9, 0.9), (0.2, 0.6, float("nan")), (0.1, 0.1, float("nan"))):
        rows += [("ratings", size, 0, "A", a, 0.05), ("ratings", size, 0, "B", b, 0.05)]
    r = Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                   pd.DataFrame())
    area = r.area("ratings")
    assert area["A"] == pytest.approx(1.6 / 3) and area["B"] == pytest.approx(0.3)
    assert r.summary().set_index(["size", "metric"]).loc[(0.2, "B"), "undefined"] == 1


def test_taus_of_many_rankings_at_once_equal_each_call():
    """The robustness study forms every sample's τ in one call (agreement.tau_rows): bit-identical to
    kendall_tau (scipy's form) and tau_b row by row, over the systems both sides rank, ties, constant
    rows and rows left with fewer than two systems included."""
    from recmetrics.meta.agreement import kendall_tau, tau_b, tau_rows

    rng = np.random.default_rng(7)
    rows, n = 400, 21
    x = rng.integers(0, 6, (rows, n)).astype(float) / 7          # many ties
    x[::3] = rng.random((len(x[::3]), n))                         # and rows without
    y = rng.random((rows, n))
    y[::5] = np.round(y[::5], 1)
    x[rng.random((rows, n)) < 0.1] = np.nan                       # systems a sample leaves without users
    y[rng.random((rows, n)) < 0.05] = np.nan
    x[1, :] = 0.5                                                 # constant
    x[2, 2:] = np.nan                                             # two systems left
    x[3, 1:] = np.nan                                             # one
    for form, one in (("kendall_tau", kendall_tau), ("tau_b", tau_b)):
        got = tau_rows(x, y, form)
        for k in range(rows):
            ok = ~np.isnan(x[k]) & ~np.isnan(y[k])
            want = one(x[k][ok], y[k][ok]) if ok.sum() >= 2 and len(set(x[k][ok])) > 1 else float("nan")
            assert np.array_equal(got[k], want, equal_nan=True) and np.float64(got[k]).tobytes() == \
                np.float64(want).tobytes(), (form, k, got[k], want)
    with pytest.raises(InputError, match="form"):
        tau_rows(x, y, "c")
    with pytest.raises(InputError, match="one shape"):
        tau_rows(x, y[:, :3])


def test_summary_of_some_metrics_is_their_rows_of_the_summary_of_all():
    """A group's mean τ, std and minimum come from its own rows only: a study of some metrics summarises
    as those metrics' rows of a larger table, bit for bit (pandas' grouped mean moved in the last bit
    with the table's size: chapter 9's explorer read chapter 7's cut-off 0.7653333333333332 alone and
    0.7653333333333334 beside three other cut-offs). Values against numpy's own statistics per group."""
    import pandas as pd
    from recmetrics.meta.robustness import Robustness

    rng = np.random.default_rng(9)
    rows = [("large-users", size, s, f"{m}@{k}", float(rng.choice([0.76, 0.78, 0.8, 0.7733333333333333, np.nan])),
             float(rng.random()) if rng.random() > 0.1 else np.nan)
            for size in (1.0, 0.5, 0.05) for s in range(50) for m in ("AP", "P") for k in (5, 100)]
    samples = pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"])
    every = Robustness(samples, pd.DataFrame()).summary()
    part = Robustness(samples[samples["metric"] == "AP@100"].reset_index(drop=True), pd.DataFrame()).summary()
    pd.testing.assert_frame_equal(part, every[every["metric"] == "AP@100"].reset_index(drop=True), check_exact=True)
    for (size, metric), g in samples.groupby(["size", "metric"]):
        row = every[(every["size"] == size) & (every["metric"] == metric)].iloc[0]
        tau = g["tau"].fillna(0.0).to_numpy()
        assert row["tau"] == pytest.approx(tau.mean(), abs=1e-15) and row["tau_min"] == tau.min()
        assert row["tau_std"] == pytest.approx(tau.std(ddof=1), abs=1e-15)
        assert row["mean_value"] == pytest.approx(np.nanmean(g["mean_value"]), abs=1e-15)
        assert (row["samples"], row["undefined"]) == (len(g), g["tau"].isna().sum())
    one = Robustness(samples.iloc[:1], pd.DataFrame()).summary()
    assert one["samples"].tolist() == [1] and np.isnan(one["tau_std"].iloc[0])
    assert Robustness(samples.iloc[:0], pd.DataFrame()).summary().empty
