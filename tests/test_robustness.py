"""Robustness to incompleteness (000 §4.2): masks over judged positions equal re-judging."""
import numpy as np
import pytest

from recmetrics import study
from recmetrics.data.qrels import Qrels
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.evaluation import evaluate, parse_metrics, score_judged
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
    fold = rb._Fold(st.qrels[0], st.ratings.groupby("user").size())
    keep = fold.keep(scenario, 0.4, np.random.default_rng(1))
    q = Qrels(fold.frame[keep], st.qrels[0].threshold, st.qrels[0].max_rating)
    fast = rb._subset_qrels(st.qrels[0], keep)
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10"])
    for s in SYSTEMS:
        j = st.judged(s, 0)
        want = evaluate(st.runs[(s, 0)], q, specs).per_user
        for qq in (q, fast):
            mj = rb.mask_judged(j, keep[rb._hit_sources(j, fold)], qq)
            assert np.array_equal(mj.users, want.index.to_numpy())
            assert np.allclose(score_judged(mj, specs).T, want.to_numpy())


def test_scenario_sizes(st):
    fold = rb._Fold(st.qrels[0], None)
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
    assert (s[s.scenario.isin(["popular-items", "large-users"]) & (s["size"] < 1)].samples == 1).all()
    assert (s[(s.scenario == "ratings") & (s["size"] < 1)].samples == 3).all()
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


def test_user_scenarios_shortcut_equals_masking(st):
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10", "AP@10", "bpref@10"])
    ctx = rb._Context(st, specs, st.ratings.groupby("user").size())
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
    ctx = rb._Context(st, specs, st.ratings.groupby("user").size())
    for scenario, size, seed in (("ratings", 0.3, 5), ("random-items", 0.5, 2), ("popular-items", 0.2, 0)):
        got = ctx.sample(scenario, size, seed, "geometric")
        rng = np.random.default_rng(seed)
        per_system = {s: [] for s in st.systems}
        for f, fold in enumerate(ctx.folds):
            keep = fold.keep(scenario, size, rng)
            q = rb._subset_qrels(fold.qrels, keep)
            for s in st.systems:
                j = st.judged(s, f)
                mj = rb.mask_judged(j, keep[rb._hit_sources(j, fold)], q)
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
