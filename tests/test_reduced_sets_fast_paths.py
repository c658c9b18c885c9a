"""The robustness engine's means of every system and replicate at once equal the system-by-system
computation bit for bit (recmetrics.meta.grouped_means, _Context._grouped_means)."""
import numpy as np
import pandas as pd
import pytest

from recmetrics import study
from recmetrics.data.qrels import Qrels
from recmetrics.data.run import Run
from recmetrics.errors import InputError
from recmetrics.evaluation import parse_metrics
from recmetrics.meta import grouped_means as gm
from recmetrics.meta import reduced_sets as rs
from recmetrics.meta import replicates as rp
from recmetrics.meta import robustness as rb
from recmetrics.metrics.aggregate import aggregate, parse_aggregate

from test_recommenders import synthetic

SYSTEMS = ["Random", "Pop", "ItemKNN(k=20)"]
MEANS = ("arithmetic", "geometric", "geometric(rec_eval)", "harmonic", "quadratic")


@pytest.fixture(scope="module")
def st(tmp_path_factory):
    root = tmp_path_factory.mktemp("grouped")
    return study.Study(synthetic(seed=3), SYSTEMS, ["P", "F1", "nDCG", "RR", "AP", "bpref"], [10], k=2, seed=0,
                       cache_dir=root / "runs", progress=False)


def _same(a, b) -> bool:
    """Bit for bit, NaN and the sign of zero included."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n_specs", [2, 3, 9])
def test_group_means_equal_each_group_aggregated_alone(n_specs):
    """Every group's mean from one transform and slice-by-slice sums equals ``aggregate`` of the
    group's rows alone: many zeros (floor, rec_eval's log 1), ties, -0.0, one-row and empty groups."""
    rng = np.random.default_rng(n_specs)
    names = ["P@10", "RR@10", "F1@10", "nDCG@10", "AP@10"]
    specs = parse_metrics([names[i % len(names)] for i in range(n_specs)])
    for trial in range(24):
        n, n_groups = int(rng.integers(1, 900)), int(rng.integers(1, [40, 400][trial % 2]))
        x = [rng.random((n, n_specs)) * (rng.random((n, n_specs)) > 0.4), rng.integers(0, 4, (n, n_specs)) / 3.0,
             np.where(rng.random((n, n_specs)) < 0.5, -0.0, 0.0)][trial % 3]
        groups = np.sort(rng.integers(0, n_groups, n))
        groups[groups == n_groups // 2] = max(n_groups - 1, 0)   # a group without rows (when there are 2+)
        groups.sort()
        aggs = MEANS if trial % 3 != 2 else ("arithmetic", "geometric")
        columns, where = gm.column_plan(aggs, specs)
        t = gm.transform_columns(x, aggs, specs, columns)
        present = sorted(set(groups.tolist()))
        want = [np.stack([aggregate(x[groups == g].T, a, axis=1, metric=specs) for g in present]) for a in aggs]
        for layout in (None, "loop", "running"):   # rows already sorted by group: summed where they are
            have, values = gm.group_means(t, groups, n_groups, [parse_aggregate(a)[0] for a in aggs], where, layout,
                                          grouped=True)
            assert have.tolist() == present
            assert all(_same(val, ref) for val, ref in zip(values, want)), layout
        shuffle = rng.permutation(n)   # rows in any order: each group's rows are read in their order in t
        t, x, groups = t[shuffle], x[shuffle], groups[shuffle]
        present = sorted(set(groups.tolist()))
        want = [np.stack([aggregate(x[groups == g].T, a, axis=1, metric=specs) for g in present]) for a in aggs]
        for layout in (None, "loop", "running"):
            have, values = gm.group_means(t, groups, n_groups, [parse_aggregate(a)[0] for a in aggs], where, layout)
            assert have.tolist() == present
            for a, val, ref in zip(aggs, values, want):
                assert _same(val, ref), (a, layout)
    # more groups than 16-bit keys hold (the sort then reads the keys as they are)
    n_groups = 40_000
    groups = rng.choice(n_groups, 300)
    groups[:50] = groups[50]
    x = rng.random((300, n_specs))
    columns, where = gm.column_plan(MEANS, specs)
    t = gm.transform_columns(x, MEANS, specs, columns)
    have, values = gm.group_means(t, groups, n_groups, [parse_aggregate(a)[0] for a in MEANS], where)
    assert have.tolist() == sorted(set(groups.tolist()))
    for a, val in zip(MEANS, values):
        assert _same(val, np.stack([aggregate(x[groups == g].T, a, axis=1, metric=specs) for g in have])), a


def test_the_arithmetic_mean_alone_reads_the_scores_as_they_are():
    """Every column a spec's own values (the arithmetic mean alone): the array itself, the numbers a
    copy would hold; NaN is refused as before; another layout or a second mean gets its own array."""
    specs = parse_metrics(["P@10", "RR@10"])
    x = np.random.default_rng(0).random((50, 2)) * (np.random.default_rng(1).random((50, 2)) > 0.5)
    columns, where = gm.column_plan(["arithmetic"], specs)
    assert gm.transform_columns(x, ["arithmetic"], specs, columns) is x
    assert gm.transform_columns(np.asfortranarray(x), ["arithmetic"], specs, columns).tobytes() == x.tobytes()
    both = gm.transform_columns(x, ["arithmetic", "geometric"], specs, gm.column_plan(["arithmetic", "geometric"], specs)[0])
    assert both is not x and both[:, :2].tobytes() == x.tobytes()
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        gm.transform_columns(bad, ["arithmetic"], specs, columns)


def test_column_plan_shares_what_the_readings_compute_alike():
    specs = parse_metrics(["P@10", "RR@10", "F1@10"])
    columns, where = gm.column_plan(["geometric", "geometric(rec_eval)", "arithmetic"], specs)
    # rec_eval's reading differs from trec_eval's only on RR and F1 (their zeros count as log 1)
    assert columns == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    assert where.tolist() == [0, 1, 2, 0, 3, 4, 5, 6, 7]


def test_group_means_refuse_one_column():
    with pytest.raises(ValueError):
        gm.group_means(np.ones((3, 1)), np.zeros(3, dtype=int), 1, ["arithmetic"], np.array([0]))


def _both(ctx, *args):
    ctx.grouped = True
    calls = []
    grouped = ctx._grouped_means
    ctx._grouped_means = lambda *a: calls.append(1) or grouped(*a)
    try:
        fast = ctx.samples(*args)
    finally:
        del ctx._grouped_means
    assert calls or len(ctx.specs) < 2   # the grouped means were computed (one spec: system by system)
    ctx.grouped = False
    slow = ctx.samples(*args)
    ctx.grouped = True
    return fast, slow


@pytest.mark.filterwarnings("ignore:run .* have no judgments")
@pytest.mark.parametrize("replicates", [0, 3, 40])
def test_samples_of_every_scenario_equal_the_per_system_means(st, replicates):
    """Every scenario (fresh scores, the users' shortcut over the full scores, tie-breaks re-scoring
    some rows of a base) and size, several means at once, with and without replicates (40: most
    (system, replicate) groups empty or of one unit): the same bits as system by system."""
    names = [f"{m}@10" for m in st.metrics]
    ctx = rs._Context(st, parse_metrics(names), st.ratings.groupby("user").size())
    if replicates:
        ctx.set_replicates(st, rp.unit_labels(st, replicates, seed=1))
    for scenario in rb.SCENARIOS:
        for size in (1.0, 0.6, 0.2, 0.01):
            for aggs in (MEANS, "geometric(rec_eval)", ("arithmetic",)):
                fast, slow = _both(ctx, scenario, size, [3, 4, 5], aggs)
                for f, s in zip(fast, slow):
                    for a, b in zip(f if isinstance(aggs, tuple) else [f], s if isinstance(aggs, tuple) else [s]):
                        assert _same(a, b), (scenario, size, aggs)


def test_robustness_studies_are_unchanged(st):
    """End to end: the samples, per-replicate τ and full values of a study under several means."""
    labels = rp.unit_labels(st, 4, seed=0)
    sizes = {"ratings": [1.0, 0.5, 0.1], "popular-items": [1.0, 0.9], "random-users": [1.0, 0.3]}
    got = {}
    for grouped in (True, False):
        orig = rs._Context.__init__

        def init(self, *a, _g=grouped, **k):
            orig(self, *a, **k)
            self.grouped = _g
        rs._Context.__init__ = init
        try:
            got[grouped] = rb.robustness_studies(st, ["arithmetic", "geometric", "geometric(rec_eval)"], sizes=sizes,
                                                 n_samples=3, seed=2, progress=False, replicates=labels)
        finally:
            rs._Context.__init__ = orig
    for a in got[True]:
        x, y = got[True][a], got[False][a]
        for u, v in ((x.samples, y.samples), (x.replicate_samples, y.replicate_samples), (x.full, y.full)):
            pd.testing.assert_frame_equal(u, v)
            assert all(_same(u[c].to_numpy(), v[c].to_numpy()) for c in u.columns if u[c].dtype.kind == "f")


def _tiny(n_users=30, n_specs=("P@3", "RR@3")):
    from recmetrics.study import Study

    rng = np.random.default_rng(0)
    q = pd.DataFrame({"user": np.repeat(np.arange(n_users), 4), "item": np.tile(np.arange(4), n_users),
                      "rating": rng.choice([1.0, 4.0, 5.0], 4 * n_users)})
    q.loc[q.groupby("user").head(1).index, "rating"] = 5.0    # every user has a relevant item
    runs = [Run.from_lists({u: list(rng.permutation(6)) for u in range(n_users)}, name=f"s{s}") for s in range(3)]
    st = Study.from_runs(runs, [Qrels(q)], [m.split("@")[0] for m in n_specs], [3], progress=False)
    return rs._Context(st, parse_metrics(list(n_specs)), None)


def test_a_nan_or_negative_score_is_refused_as_before():
    """An array holding NaN (or a negative value, for a mean other than the arithmetic one) is read
    system by system: refused when a kept row holds it, ignored otherwise, as it always was."""
    ctx = _tiny()
    values, kept, cols, _, _ = ctx._full_rows()[0]
    for bad_value, means in ((np.nan, ("arithmetic",)), (np.nan, ("geometric",)), (-0.5, ("geometric", "arithmetic"))):
        bad = values.copy()
        bad[5, 1] = bad_value
        with pytest.raises(InputError):
            ctx._aggregate([[(bad, kept, cols, None, None)]], means)
        left_out = kept.copy()
        left_out[5] = False
        for grouped in (True, False):
            ctx.grouped = grouped
            got = ctx._aggregate([[(bad, left_out, cols, None, None)]], means)[0]
            want = ctx._aggregate([[(values, left_out, cols, None, None)]], means)[0]
            assert all(_same(a, b) for a, b in zip(got, want))
        ctx.grouped = True
    neg = values.copy()
    neg[5, 1] = -0.5   # a negative value under the arithmetic mean alone is averaged, as before
    fast = ctx._aggregate([[(neg, kept, cols, None, None)]], ("arithmetic",))[0]
    ctx.grouped = False
    assert _same(fast[0], ctx._aggregate([[(neg, kept, cols, None, None)]], ("arithmetic",))[0][0])


@pytest.mark.parametrize("n_users,specs", [(1, ("P@3", "RR@3")), (30, ("RR@3",)), (2, ("P@3", "AP@3", "RR@3"))])
def test_one_user_one_metric_and_nobody_left(n_users, specs):
    ctx = _tiny(n_users, specs)
    for scenario in rb.SCENARIOS:
        for size in (1.0, 0.5, 0.01):
            fast, slow = _both(ctx, scenario, size, [0, 1], MEANS)
            assert all(_same(a, b) for f, s in zip(fast, slow) for a, b in zip(f, s)), (scenario, size)
    values, kept, cols, _, _ = ctx._full_rows()[0]
    nobody = ctx._aggregate([[(values, np.zeros_like(kept), cols, None, None)]], ("arithmetic", "geometric"))[0]
    assert all(np.isnan(a).all() for a in nobody)


@pytest.mark.parametrize("n_parts,n_reps", [(0, 3), (1, 1), (4, 3), (3, 0)])
def test_replicate_frame_equals_one_tuple_per_row(n_parts, n_reps):
    """The per-replicate τ table built column by column equals the table of one tuple per row (dtypes,
    NaN and order included), empty ones too."""
    rng = np.random.default_rng(n_parts)
    names = ["P@10", "RR@10"]
    parts = [(["ratings", "popular-items"][i % 2], [0.5, 0.01][i % 2], i + 7,
              np.where(rng.random((n_reps, len(names))) < 0.2, np.nan, rng.random((n_reps, len(names)))))
             for i in range(n_parts)]
    rows = [(sc, size, r, q, name, float(taus[q, m])) for sc, size, r, taus in parts
            for q in range(len(taus)) for m, name in enumerate(names)]
    want = pd.DataFrame(rows, columns=["scenario", "size", "sample", "replicate", "metric", "tau"])
    got = rb._replicate_frame(parts, names)
    pd.testing.assert_frame_equal(got, want)
    assert list(got.dtypes) == list(want.dtypes) and got.equals(want)
    assert _same(got["tau"].to_numpy(), want["tau"].to_numpy())


def test_stable_argsort_is_numpys_stable_sort_at_every_key_range():
    """The one stable order of integer keys, by radix sort when they fit 16 bits: the edges of int16,
    past them, negative keys, many ties, one key and none."""
    from recmetrics.arrays import stable_argsort

    rng = np.random.default_rng(2)
    for lo, hi in [(0, 3), (-40, 40), (-2 ** 15, 2 ** 15 - 1), (-2 ** 15 - 1, 10), (0, 2 ** 15), (0, 10 ** 9)]:
        keys = rng.integers(lo, hi, 2000, endpoint=True)
        keys[:2] = lo, hi
        assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable")), (lo, hi)
    assert stable_argsort(np.array([7])).tolist() == [0] and stable_argsort(np.zeros(0, dtype=np.int64)).tolist() == []


def test_ranges_are_the_concatenated_aranges():
    """One ``ranges`` serves the reduced sets, the target sets and the recommenders' target scoring:
    runs of any length (zero too), in any order, overlapping, and none at all."""
    from recmetrics.arrays import ranges

    rng = np.random.default_rng(4)
    for _ in range(50):
        starts, lengths = rng.integers(0, 100, 12), rng.integers(0, 6, 12)
        want = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)])
        got = ranges(starts, lengths)
        assert got.dtype == np.int64 and np.array_equal(got, want)
    assert ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).tolist() == []
    assert ranges([5, 9], [0, 0]).tolist() == []


def test_places_in_runs_count_within_each_run_of_equal_keys():
    from recmetrics.arrays import places_in_runs

    assert places_in_runs(np.array([0, 0, 0, 2, 5, 5])).tolist() == [0, 1, 2, 0, 0, 1]
    assert places_in_runs(np.array([3])).tolist() == [0] and places_in_runs(np.zeros(0)).tolist() == []
    keys = np.sort(np.random.default_rng(1).integers(0, 30, 500))
    assert np.array_equal(places_in_runs(keys), np.arange(500) - np.searchsorted(keys, keys))
