"""Stopping a robustness study's sampling at a target Monte Carlo se (meta.sample_stopping)."""
import numpy as np
import pandas as pd
import pytest

from recmetrics import study
from recmetrics.errors import InputError
from recmetrics.meta import replicates as rp
from recmetrics.meta import robustness as rb
from recmetrics.meta import sample_stopping as ss

from test_recommenders import synthetic

SYSTEMS = ["Random", "Pop", "ItemKNN(k=20)", "UserKNN(k=20)"]
SIZES = {"ratings": [1.0, 0.9, 0.5, 0.1], "random-items": [0.8, 0.3], "popular-items": [1.0, 0.95, 0.9],
         "random-users": [0.5], "large-users": [0.7]}


@pytest.fixture(scope="module")
def st(tmp_path_factory):
    root = tmp_path_factory.mktemp("stop")
    return study.Study(synthetic(seed=3), SYSTEMS, ["P", "nDCG", "RR", "AP"], [5, 10], k=2, seed=0,
                       cache_dir=root / "runs", progress=False)


def _studies(st, **kw):
    return rb.robustness_studies(st, ["arithmetic", "geometric"], sizes=SIZES, n_samples=12, seed=4,
                                 progress=False, **kw)


def _rule_counts(samples: pd.DataFrame, target: float, points) -> dict:
    """The rule recomputed from a fixed study's samples with pandas: per (scenario, size, metric),
    the first checkpoint whose prefix has 0 < se = std/sqrt(n) <= target (all samples if none)."""
    out = {}
    for (sc, size, name), g in samples[samples["size"] < 1.0].groupby(["scenario", "size", "metric"], sort=False):
        tau = g.sort_values("sample")["tau"].fillna(0.0).to_numpy()
        stop = len(tau)
        for p in points:
            if 2 <= p <= len(tau) and 0 < tau[:p].std(ddof=1) / np.sqrt(p) <= target:
                stop = p
                break
        out[(sc, size, name)] = stop
    return out


@pytest.mark.parametrize("target", [0.08, 0.15])
def test_stopped_study_is_the_fixed_one_cut_by_the_rule(st, target):
    labels = rp.unit_labels(st, 3, seed=1)
    fixed = _studies(st, replicates=labels)
    stopped = _studies(st, replicates=labels, target_se=target, min_samples=4)
    points = ss.checkpoints(12, 4)
    counts_seen = set()
    for agg in ("arithmetic", "geometric"):
        f, s = fixed[agg], stopped[agg]
        want = _rule_counts(f.samples, target, points)
        counts_seen |= set(want.values())
        key = list(zip(f.samples["scenario"], f.samples["size"], f.samples["metric"]))
        keep = np.array([smp < want.get(k, 1) for k, smp in zip(key, f.samples["sample"])])
        pd.testing.assert_frame_equal(s.samples, f.samples[keep].reset_index(drop=True), check_exact=True)
        rk = list(zip(f.replicate_samples["scenario"], f.replicate_samples["size"], f.replicate_samples["metric"]))
        rkeep = np.array([smp < want.get(k, 1) for k, smp in zip(rk, f.replicate_samples["sample"])])
        pd.testing.assert_frame_equal(s.replicate_samples, f.replicate_samples[rkeep].reset_index(drop=True),
                                      check_exact=True)
        pd.testing.assert_frame_equal(s.full, f.full, check_exact=True)
        # what the summary reports: each kept count, and an se at most the target where the rule stopped early
        summ = s.summary()
        summ = summ[summ["size"] < 1.0]
        for row in summ.itertuples():
            assert row.samples == want[(row.scenario, row.size, row.metric)]
            if row.samples < 12:
                assert 0 < row.tau_std / np.sqrt(row.samples) <= target
    assert len(counts_seen) > 1, "the rule stopped every size at the same count: the test reaches no edge"
    assert min(counts_seen) == 4 and max(counts_seen) == 12


def test_a_metric_stops_on_its_own_samples(st):
    both = _studies(st, target_se=0.12, min_samples=3)
    # (two metrics: one metric alone is averaged by another numpy path, equal to the last bit or so)
    alone = rb.robustness_studies(st, ["geometric"], sizes=SIZES, n_samples=12, seed=4, progress=False,
                                  metrics=["RR", "nDCG"], cutoffs=[5], target_se=0.12, min_samples=3)
    mine = alone["geometric"].samples
    for name in ("RR@5", "nDCG@5"):
        pd.testing.assert_frame_equal(mine[mine["metric"] == name].reset_index(drop=True),
                                      both["geometric"].select([name]).samples, check_exact=True)
    assert mine.groupby(["scenario", "size", "metric"]).size().nunique() > 1


def test_target_extremes(st):
    fixed = _studies(st)["arithmetic"]
    tiny = _studies(st, target_se=1e-12, min_samples=5)["arithmetic"]
    pd.testing.assert_frame_equal(tiny.samples, fixed.samples, check_exact=True)   # never precise enough: all 12
    huge = _studies(st, target_se=10.0, min_samples=5)["arithmetic"].summary()
    huge = huge[huge["size"] < 1.0]
    # always precise enough, unless τ did not move over the first 5 samples: an se of 0 is unknown, so
    # those go on to all 12 (and may never move: the se is then 0, as with the fixed design)
    taus = fixed.samples[fixed.samples["size"] < 1.0].sort_values("sample", kind="stable")
    moved_by = {}
    for key, t in taus.groupby(["scenario", "size", "metric"], sort=False)["tau"]:
        t = t.fillna(0.0).to_numpy()
        moved_by[key] = next((p for p in (5, 10) if len(set(t[:p])) > 1), 12)
    want = np.array([moved_by[k] for k in zip(huge["scenario"], huge["size"], huge["metric"])])
    assert huge["samples"].tolist() == want.tolist() and {5, 12} <= set(want.tolist())
    # fewer samples than the first checkpoint: the one checkpoint is n_samples
    few = rb.robustness_study(st, sizes={"ratings": [0.5]}, n_samples=3, seed=4, progress=False, target_se=10.0)
    assert set(few.summary()["samples"]) == {3}


def test_area_diff_se_pairs_the_samples_both_kept(st):
    r = _studies(st, target_se=0.12, min_samples=3)["arithmetic"]
    n = r.summary().set_index(["scenario", "size", "metric"])["samples"]
    assert n.loc["ratings"].groupby(level="size").nunique().max() > 1, "every metric kept as many samples"
    got = r.area_diff_se("ratings")
    s = r.samples[(r.samples["scenario"] == "ratings") & (r.samples["size"] < 1.0)]
    a, b = got.index[0], got.index[-1]
    total = 0.0
    for size, g in s.groupby("size", sort=False):
        x = g.pivot(index="sample", columns="metric", values="tau").fillna(0.0)
        k = min(int(n.loc[("ratings", size, a)]), int(n.loc[("ratings", size, b)]))
        d = (x[a] - x[b]).to_numpy()[:k]
        total += d.var(ddof=1) / k
    assert n.loc[("ratings", slice(None), a)].nunique() + n.loc[("ratings", slice(None), b)].nunique() > 2, \
        "the pair compared kept as many samples at every size"
    assert got.loc[a, b] == pytest.approx(np.sqrt(total) / s["size"].nunique(), rel=1e-12)
    assert np.isfinite(got.to_numpy()).all()


@pytest.mark.parametrize("bad, match", [
    ({"target_se": 0}, "positive number"), ({"target_se": -0.1}, "positive number"),
    ({"target_se": float("nan")}, "positive number"), ({"target_se": "small"}, "positive number"),
    ({"target_se": 0.01, "min_samples": 1}, "at least 2"), ({"target_se": 0.01, "min_samples": 0}, "min_samples"),
])
def test_bad_rule(st, bad, match):
    with pytest.raises(InputError, match=match):
        rb.robustness_study(st, sizes={"ratings": [0.5]}, n_samples=4, progress=False, **bad)


def _coverage(draw, truth, target, n_max=50, step=20, reps=4000, seed=0):
    """Shares of sequences whose mean ± 2 se covers ``truth``: under the rule, and with all ``n_max``
    samples (the same draws); and the mean count the rule keeps."""
    rng = np.random.default_rng(seed)
    x = draw(rng, (reps, n_max))
    stop = ss.stop_counts(x.T, target, ss.checkpoints(n_max, step))
    stop = np.where(stop == 0, n_max, stop)
    ruled, fixed = [], []
    for row, n in zip(x, stop):
        v = row[:n]
        ruled.append(abs(v.mean() - truth) <= 2 * v.std(ddof=1) / np.sqrt(n))
        fixed.append(abs(row.mean() - truth) <= 2 * row.std(ddof=1) / np.sqrt(n_max))
    return float(np.mean(ruled)), float(np.mean(fixed)), float(stop.mean())


@pytest.mark.parametrize("name, draw, truth, loss", [
    # a τ that swings (a small reduced set: never stops early), one that barely moves (stops at 20):
    # symmetric, so stopping costs no coverage
    ("swinging", lambda r, s: r.normal(0.6, 0.08, s), 0.6, 0.01),
    ("steady", lambda r, s: r.normal(0.95, 0.02, s), 0.95, 0.01),
    # τ near its ceiling: skewed, or 1 but for a rare swap of two systems. A run of samples without
    # the tail looks precise and stops: the rule's known cost (3 points here; the module docstring)
    ("skewed", lambda r, s: 1.0 - r.gamma(0.5, 0.04, s), 1.0 - 0.02, 0.04),
    ("rare", lambda r, s: 1.0 - 0.05 * (r.random(s) < 0.1), 1.0 - 0.005, 0.04),
])
def test_rule_calibration(name, draw, truth, loss):
    ruled, fixed, kept = _coverage(draw, truth, target=0.01)
    assert fixed - loss <= ruled <= 0.975, (name, ruled, fixed, kept)
    assert 20 <= kept <= 50


def test_explorer_cuts_known_samples_by_the_same_rule(st):
    from recmetrics.explorers import explorer_table

    kw = dict(cutoffs=[10], n_permutations=50, sizes=SIZES, n_samples=12, seed=4, target_se=0.12, min_samples=3)
    alone = explorer_table(st, **kw)
    fixed = rb.robustness_studies(st, ["arithmetic", "geometric"], sizes=SIZES, n_samples=12, seed=4, cutoffs=[10],
                                  progress=False)
    read = explorer_table(st, known_robustness={a: r.samples for a, r in fixed.items()}, **kw)
    # (the curve areas are summed in another order when read: equal but for the last bit, as without the rule)
    pd.testing.assert_frame_equal(read, alone, check_exact=False, rtol=1e-14, atol=0)
    rows = alone["view"] != "summary"
    pd.testing.assert_frame_equal(read[rows], alone[rows], check_exact=True)
    rob = alone[alone["view"] == "robustness"]
    assert alone.attrs["explorer"]["target_se"] == 0.12 and rob["se"].notna().any()
    full = explorer_table(st, **{**kw, "target_se": None})
    assert not rob["value"].equals(full.loc[full["view"] == "robustness", "value"])
    assert ss.rule_note(alone.attrs["explorer"]).startswith("up to 12 samples per size")
