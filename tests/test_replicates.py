"""The data split's replicates (issue 25 §1): user groups, study views, per-replicate DP and robustness."""
import numpy as np
import pandas as pd
import pytest

from recmetrics import study
from recmetrics.errors import InputError
from recmetrics.evaluation import parse_metrics, score_judged
from recmetrics.meta import reduced_sets as rs
from recmetrics.meta import replicates as rp
from recmetrics.meta import robustness as rb
from recmetrics.metrics.aggregate import aggregate

from test_recommenders import synthetic

SYSTEMS = ["Random", "Pop", "ItemKNN(k=20)"]


@pytest.fixture(scope="module")
def st(tmp_path_factory):
    root = tmp_path_factory.mktemp("reps")
    return study.Study(synthetic(seed=3), SYSTEMS, ["P", "nDCG", "RR"], [10], k=2, seed=0,
                       cache_dir=root / "runs", progress=False)


def test_unit_labels_deal_users_into_groups(st):
    labels = rp.unit_labels(st, 4, seed=1)
    assert labels.shape == st.cube.shape[-2:]
    present = ~np.isnan(st.cube[0, 0, 0])
    assert (labels[~present] == -1).all() and (labels[present] >= 0).all()
    group = labels.max(axis=0)                    # a user is in one group in every fold
    for f in range(labels.shape[0]):
        assert ((labels[f] == group) | (labels[f] == -1)).all()
    sizes = np.bincount(group[group >= 0])
    assert len(sizes) == 4 and sizes.max() - sizes.min() <= 1
    np.testing.assert_array_equal(labels, rp.unit_labels(st, 4, seed=1))
    assert not np.array_equal(labels, rp.unit_labels(st, 4, seed=2))
    folds = rp.unit_labels(st, scheme="folds")
    assert set(np.unique(folds[present])) == {0, 1}


@pytest.mark.parametrize("kw", [dict(n=1), dict(n=10 ** 6), dict(n=4, scheme="days"), dict(n="4")])
def test_unit_labels_bad_input(st, kw):
    with pytest.raises(InputError):
        rp.unit_labels(st, **kw)


def test_views_partition_the_units(st):
    labels = rp.unit_labels(st, 3, seed=0)
    full = st.scores("P@10")
    parts = [rp.view(st, labels, r).scores("P@10") for r in range(3)]
    assert sum(p.shape[1] for p in parts) == full.shape[1]
    back = pd.concat(parts, axis=1).reindex(columns=full.columns)
    pd.testing.assert_frame_equal(back, full)
    table = rp.per_replicate(st, labels, lambda v: v.table(10)["P"])
    assert table.shape == (3, len(SYSTEMS))
    np.testing.assert_allclose(table.iloc[1].to_numpy(), parts[1].mean(axis=1).to_numpy())
    with pytest.raises(InputError, match="shape"):
        rp.view(st, labels[:, :5], 0)


def test_dp_by_replicate(st):
    labels = rp.unit_labels(st, 2, seed=0)
    dp = rp.dp_by_replicate(st, labels, lambda v: v.all_scores(10), n_permutations=200, seed=0)
    assert dp.shape == (2, 3) and list(dp.columns) == ["P", "nDCG", "RR"]
    assert np.isfinite(dp.to_numpy()).all()
    assert rp.spread([0.1, np.nan, 0.3]) == "0.1 to 0.3 over 2 replicates"


def test_robustness_samples_per_replicate_equal_masking_each_group(st):
    """Each replicate's aggregate of a reduced test set is the aggregate of masking every system's
    judged run and keeping that group's users; the pooled value is unchanged by replicates."""
    specs = parse_metrics(["P@10", "nDCG@10", "RR@10"])
    labels = rp.unit_labels(st, 3, seed=4)
    ctx = rs._Context(st, specs, st.ratings.groupby("user").size())
    plain = ctx.sample("ratings", 0.3, 5, "arithmetic")
    ctx.set_replicates(st, labels)
    got = ctx.sample("ratings", 0.3, 5, "arithmetic")
    assert got.shape == (4, len(specs), len(SYSTEMS))
    np.testing.assert_array_equal(got[0], plain)
    users = pd.Index(st.users)
    rng = np.random.default_rng(5)
    per = {(r, s): [] for r in range(3) for s in st.systems}
    for f, fold in enumerate(ctx.folds):
        keep = fold.keep("ratings", 0.3, rng)
        q = rs._subset_qrels(fold.qrels, keep)
        for s in st.systems:
            j = st.judged(s, f)
            mj = rb.mask_judged(j, keep[rs._hit_sources(j, fold)], q)
            if len(mj):
                lab = labels[f][users.get_indexer(mj.users)]
                v = score_judged(mj, specs)
                for r in range(3):
                    per[(r, s)].append(v[:, lab == r])
    for r in range(3):
        want = np.stack([aggregate(np.concatenate(per[(r, s)], axis=1), "arithmetic", axis=1) for s in st.systems],
                        axis=1)
        np.testing.assert_allclose(got[1 + r], want, rtol=1e-12, atol=1e-15)


def test_robustness_study_with_replicates(st):
    labels = rp.unit_labels(st, 3, seed=0)
    sizes = {"ratings": [1.0, 0.5, 0.2]}
    plain = rb.robustness_study(st, sizes=sizes, n_samples=3, seed=1, progress=False)
    r = rb.robustness_study(st, sizes=sizes, n_samples=3, seed=1, progress=False, replicates=labels)
    pd.testing.assert_frame_equal(plain.samples, r.samples)        # the pooled study is unchanged
    assert plain.area_replicates("ratings") is None
    reps = r.area_replicates("ratings")
    assert reps.shape == (3, 3) and set(reps.columns) == set(r.area("ratings").index)
    assert ((reps.to_numpy() >= -1) & (reps.to_numpy() <= 1)).all()
    assert r.area_n("ratings") == 3


def test_area_diff_se_is_paired_over_the_shared_samples(st):
    r = rb.robustness_study(st, sizes={"ratings": [1.0, 0.5, 0.2]}, n_samples=4, seed=2, progress=False)
    d = r.area_diff_se("ratings")
    s = r.samples[(r.samples["size"] < 1) & (r.samples["scenario"] == "ratings")].fillna({"tau": 0.0})
    a, b = d.index[0], d.index[1]
    per = []
    for _, g in s.groupby("size"):
        x = g.pivot(index="sample", columns="metric", values="tau")
        per.append(np.var(x[a] - x[b], ddof=1) / len(x))
    assert d.loc[a, b] == pytest.approx(np.sqrt(sum(per)) / len(per))
    assert d.loc[a, a] == 0 and d.loc[a, b] == d.loc[b, a]


@pytest.mark.parametrize("n_specs", [1, 2, 9, 45])
def test_replicate_means_from_one_transform_equal_each_group_alone(n_specs):
    """The robustness engine aggregates a system's rows for the pooled value and every replicate from
    one transform per mean (rs._means): bit-identical to aggregating each replicate's rows alone, as
    it did, for every mean and reading, one spec or many (numpy's summation order follows the layout)."""
    rng = np.random.default_rng(n_specs)
    names = ["P@10", "RR@10", "F1@10", "nDCG@10", "AP@10"]
    specs = parse_metrics([names[i % len(names)] for i in range(n_specs)])
    n = 997
    x = rng.random((n, n_specs)) * (rng.random((n, n_specs)) > 0.4)     # many zeros (floor, rec_eval's log 1)
    x = np.asfortranarray(x.T).T                                        # C-ordered rows, as the engine lays them
    labels = rng.integers(0, 7, n)
    labels[labels == 5] = 6                                             # replicate 5 has no row
    means = ["arithmetic", "geometric", "geometric(rec_eval)", "harmonic", "quadratic"]
    got = rs._means(x, means, specs, labels, 7)
    for a, (pooled, (have, per_rep)) in zip(means, got):
        np.testing.assert_array_equal(pooled, aggregate(x.T, a, axis=1, metric=specs))
        assert have.tolist() == [0, 1, 2, 3, 4, 6]
        for r, values in zip(have, per_rep):
            want = aggregate(x[labels == r].T, a, axis=1, metric=specs)
            assert values.tobytes() == want.tobytes(), (a, r)
    assert len(rs._means(x, ["arithmetic"], specs)[0][1][0]) == 0


def test_folds_of_a_repeated_split_are_not_replicates(tmp_path):
    repeated = study.Study(synthetic(seed=3), ["Pop", "Random"], ["P"], [10], k=2, seed=0, repeats=2,
                           cache_dir=tmp_path, progress=False)
    with pytest.raises(InputError, match="share test ratings"):
        rp.unit_labels(repeated, scheme="folds")
    assert rp.unit_labels(repeated, 4, seed=0).shape == (4, len(repeated.users))   # user groups span every fold
