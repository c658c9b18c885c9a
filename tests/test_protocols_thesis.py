"""Paper 004's set-up and claims (recmetrics.papers.bellogin2012), the bootstrap over users behind their
verdicts (recmetrics.protocols.uncertainty) and the chapter computations that feed them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import findings
from recmetrics.papers import bellogin2012 as paper
from recmetrics.protocols import chapter, uncertainty
from recmetrics.protocols.chapter import RANDOM, DesignRun, Sweep

ROLES = paper.ROLES
POP, PLSA, KNN, MF, RND = ROLES["pop"], ROLES["plsa"], ROLES["knn"], ROLES["mf"], ROLES["random"]
assert set(ROLES.values()) == set(paper.SYSTEMS)


@pytest.fixture(scope="module")
def ml():
    ds = rm.datasets.load("movielens-small")
    return rm.splits.holdout(ds.ratings, 0.2, seed=0)


def _frames(means: dict, n_users: int, noise: float, seed: int):
    """Per-set tables (one set per user) with the given means and Gaussian per-user noise."""
    rng = np.random.default_rng(seed)
    users = np.arange(n_users)
    shared = rng.normal(0, noise, n_users)  # a user effect shared by the systems (paired data)
    return {k: pd.DataFrame({"user": users, "value": m + shared + rng.normal(0, noise, n_users)})
            for k, m in means.items()}


def fake_run(values: dict, random: dict | None = None, n_users: int = 400, noise: float = 0.01, seed: int = 0,
             T: int = 100) -> DesignRun:
    """A DesignRun from ``{design name: {system: mean P@10}}`` (random expectation 0.01 unless given)."""
    means = {}
    for name, per_sys in values.items():
        d = chapter.design_spec(name, T)
        for s, m in per_sys.items():
            means[(d, s, "P@10")] = m
        means[(d, RANDOM, "P@10")] = (random or {}).get(name, 0.01)
    frames = _frames(means, n_users, noise, seed)
    frames = {k: (f.assign(value=means[k]) if k[1] == RANDOM else f) for k, f in frames.items()}  # exact
    reps = uncertainty.replicates(frames, n_bootstrap=300, seed=seed)
    pt = uncertainty.point(frames)
    table = pd.DataFrame([(*k, float(pt[k]), float(reps[k].std())) for k in frames if k[1] != RANDOM],
                         columns=["design", "system", "metric", "value", "se"])
    table["random_expected"] = [means[(d, RANDOM, m)] for d, m in zip(table.design, table.metric)]
    per_user = pd.concat([f.assign(design=k[0], system=k[1], metric=k[2]) for k, f in frames.items()
                          if k[1] != RANDOM], ignore_index=True)
    return DesignRun(table, {"T": T}, reps, per_user, {})


def verdict(claim_id: str, results: dict) -> findings.Evidence:
    claim = {c.id: c for c in paper.CLAIMS}[claim_id]
    return claim.check({"systems": ROLES, **results})


# --- set-up --------------------------------------------------------------------------------------

def test_setup_is_the_thesis():
    s = paper.SETUP
    assert s["threshold"] == 5.0 and s["extra"]["n_nonrelevant"] == 99
    assert set(s["systems"]) == {"Random", "Pop", "pLSA", "NNCosNgbr-UB(form=rating)", "SVD"}
    assert paper.SYSTEMS["kNN"] == "NNCosNgbr-UB(form=rating)" and paper.SYSTEMS["MF"] == "SVD"
    assert "UserKNN" not in s["systems"] and "PureSVD" not in s["systems"]
    assert "TI-AR-NN(n={T})" in s["designs"] and "AI-UAR" in s["designs"]
    # the keys are the fields of the papers package's set-up record
    assert {"paper", "citation", "datasets", "systems", "split", "test_size", "cutoffs", "threshold", "metrics",
            "designs", "options", "notes", "extra"} <= set(s)
    assert paper.CHAPTERS == {"08_popularity_bias": paper.CLAIMS}
    assert len({c.id for c in paper.CLAIMS}) == len(paper.CLAIMS)


def test_notebook_parameters_are_the_notebook_parameters():
    nb = json.loads(Path(__file__).resolve().parents[1].joinpath("notebooks", "08_popularity_bias.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    declared = set(re.findall(r"^(\w+)\s*=", "".join(cell["source"]), flags=re.M))
    quick, full = (paper.notebook_parameters(p)["08_popularity_bias"] for p in ("quick", "paper"))
    assert set(quick) <= declared and set(full) <= declared
    assert full["users"] is None and quick["users"] == 300 and full["threshold"] == 5.0
    for p in (quick, full):  # papermill cannot parse a parameter line with '=' inside a string
        assert all("=" not in str(v) for v in p.values())
    assert "=" not in "".join(line.split("=", 1)[1] for line in cell["source"] if "=" in line)
    with pytest.raises(rm.errors.UnknownNameError):
        paper.notebook_parameters("fast")


# --- the bootstrap over users ------------------------------------------------------------------

def test_point_is_the_protocol_aggregate_and_se_matches_the_cluster_formula(ml):
    train, test = ml
    pop = rm.recommenders.create("Pop").fit(train)
    for design in ("TI-1R-NN(n=99)", "P1R(m=10,n=99)", "TI-AR-AN"):
        r = rm.protocols.evaluate(pop, train, test, design, ["P@10"], threshold=5)
        f = {design: chapter._frame(r.per_set, "P@10")}
        assert uncertainty.point(f)[design] == pytest.approx(r.aggregate["P@10"], rel=1e-12)
        if design.startswith("TI-1R"):  # cluster-robust (by user) standard error of a mean over sets
            x = r.per_set["P@10"].to_numpy()
            dev = pd.Series(x - x.mean()).groupby(r.per_set["user"].to_numpy()).sum().to_numpy()
            analytic = np.sqrt((dev ** 2).sum()) / len(x)
            se = uncertainty.standard_errors(f, n_bootstrap=2000)[design]
            assert se == pytest.approx(analytic, rel=0.1)


def test_replicates_are_paired_seeded_and_checked():
    f = _frames({"a": 0.5, "b": 0.4}, 300, 0.1, 0)
    r1 = uncertainty.replicates(f, n_bootstrap=200, seed=4)
    r2 = uncertainty.replicates(f, n_bootstrap=200, seed=4)
    pd.testing.assert_frame_equal(r1, r2)
    # half of each value is a user effect shared by a and b: paired draws give sqrt(1/2) of the unpaired spread
    assert (r1["a"] - r1["b"]).std() < 0.85 * np.hypot(r1["a"].std(), r1["b"].std())
    with pytest.raises(InputError, match="user"):
        uncertainty.replicates({"a": pd.DataFrame({"value": [1.0]})})
    with pytest.raises(InputError, match="NaN"):
        uncertainty.replicates({"a": pd.DataFrame({"user": [1], "value": [np.nan]})})


# --- claims on constructed evidence ----------------------------------------------------------------

BASE = {POP: 0.062, PLSA: 0.071, KNN: 0.040, MF: 0.045, RND: 0.010}


def designs(**overrides):
    out = {}
    for name in chapter.THESIS_DESIGNS:
        out[name] = dict(BASE, **overrides.get(name.replace("-", "_"), {}))
    return out


def test_level_of_random_agrees_disagrees_and_flips_with_the_percentile_counts():
    near = {POP: 0.013}
    run = fake_run(designs(P1R=near, P1R_train=near, U1R={POP: 0.016}))
    assert verdict("level-of-random", {"designs": run}).verdict == "agrees"
    far = fake_run(designs(P1R={POP: 0.060}, P1R_train={POP: 0.060}, U1R={POP: 0.016}))
    assert verdict("level-of-random", {"designs": far}).verdict == "disagrees"
    flip = fake_run(designs(P1R=near, P1R_train={POP: 0.060}, U1R={POP: 0.016}))
    ev = verdict("level-of-random", {"designs": flip})
    assert ev.verdict == "inconclusive" and "flips" in ev.detail
    # at the midpoint (lead 0.5) the noise decides nothing
    mid = fake_run(designs(P1R={POP: 0.0405}, P1R_train={POP: 0.0405}, U1R={POP: 0.0405}))
    assert verdict("level-of-random", {"designs": mid}).verdict == "inconclusive"


def test_plsa_best_needs_every_rival_beaten_beyond_the_noise_and_by_the_test():
    assert verdict("plsa-best", {"designs": fake_run(designs())}).verdict == "agrees"
    tie = fake_run(designs(UAR={POP: 0.071}))
    assert verdict("plsa-best", {"designs": tie}).verdict == "inconclusive"
    beaten = fake_run(designs(UAR={KNN: 0.090}))
    ev = verdict("plsa-best", {"designs": beaten})
    assert ev.verdict == "disagrees" and "against it (Holm): UAR: pLSA − kNN" in ev.detail


def test_pop_close_to_best_is_second_and_nearer_the_best():
    assert verdict("pop-close-to-best", {"designs": fake_run(designs())}).verdict == "agrees"
    far = fake_run(designs(**{"1R": {POP: 0.046}}))  # second, but nearer the third than the best
    assert verdict("pop-close-to-best", {"designs": far}).verdict == "disagrees"
    # the words: pLSA best and Pop next; Pop ranked first (close to pLSA, above the rest) fails
    first = fake_run(designs(**{"1R": {POP: 0.080}, "AR_AN": {POP: 0.080}}))
    ev = verdict("pop-close-to-best", {"designs": first})
    assert ev.verdict == "disagrees" and "): Pop 0.0" in ev.detail  # Pop listed first
    # pLSA best but MF second: Pop not next
    mf_second = fake_run(designs(**{"1R": {MF: 0.066}}))
    assert verdict("pop-close-to-best", {"designs": mf_second}).verdict == "disagrees"


def test_bias_orderings_uar_knn_ai_uar_and_head10():
    run = fake_run(designs(P1R={POP: 0.012}, P1R_train={POP: 0.012}, U1R={POP: 0.020}, UAR={POP: 0.050},
                           AI_UAR={POP: 0.060}, head10={POP: 0.040}, AR={POP: 0.065}))
    res = {"designs": run}
    for cid in ("neutralised", "p1r-beyond-u1r", "more-effective-1r", "uar-pop-above-knn", "ai-uar", "head10"):
        assert verdict(cid, res).verdict == "agrees", (cid, verdict(cid, res).detail)
    worse = fake_run(designs(P1R={POP: 0.012}, P1R_train={POP: 0.012}, U1R={POP: 0.020}, UAR={POP: 0.030},
                             AI_UAR={POP: 0.020}, head10={POP: 0.015}))
    res = {"designs": worse}
    assert verdict("uar-pop-above-knn", res).verdict == "disagrees"  # Pop 0.030 below kNN 0.040
    assert verdict("ai-uar", res).verdict == "disagrees"
    assert verdict("head10", res).verdict == "disagrees"  # head10 as good as U1R and better


def fake_sweep(pop, knn, mf, plsa, alphas=(0.0, 1.0, 2.0), se=0.0005, rnd=0.01) -> Sweep:
    rows, reps = [], {}
    rng = np.random.default_rng(0)
    for k, a in enumerate(alphas):
        for s, v in ((POP, pop[k]), (KNN, knn[k]), (MF, mf[k]), (PLSA, plsa[k])):
            rows.append((a, s, v, se, rnd))
            reps[(a, s)] = v + rng.normal(0, se, 500)
        reps[(a, RANDOM)] = np.full(500, rnd)
    table = pd.DataFrame(rows, columns=["alpha", "system", "value", "se", "random_expected"])
    return Sweep(table, pd.DataFrame(reps), "TI-1R-NN(n=99)", 270.0)


def test_sweep_claims():
    sw = fake_sweep(pop=[0.0077, 0.04, 0.07], knn=[0.0098, 0.012, 0.015], mf=[0.0099, 0.013, 0.02],
                    plsa=[0.009, 0.035, 0.068])
    res = {"sweep": sw}
    for cid in ("alpha-rises", "alpha0-below-random", "knn-mf-sim", "plsa-matches-pop-sim"):
        assert verdict(cid, res).verdict == "agrees", (cid, verdict(cid, res).detail)
    far_below = fake_sweep(pop=[0.0039, 0.04, 0.07], knn=[0.01, 0.04, 0.06], mf=[0.01] * 3, plsa=[0.009, 0.012, 0.07])
    res = {"sweep": far_below}
    assert verdict("alpha0-below-random", res).verdict == "disagrees"  # 0.39 of random is not 'slightly'
    assert verdict("knn-mf-sim", res).verdict == "disagrees"          # kNN as good as Pop
    assert verdict("plsa-matches-pop-sim", res).verdict == "disagrees"
    flat = fake_sweep(pop=[0.01, 0.03, 0.03], knn=[0.01] * 3, mf=[0.01] * 3, plsa=[0.01, 0.03, 0.03])
    assert verdict("alpha-rises", {"sweep": flat}).verdict == "inconclusive"
    assert verdict("alpha0-below-random", {"sweep": flat}).verdict == "inconclusive"


def constructed_frames(removed=(0.0, 0.5), seed: int = 1) -> dict:
    """Per-user P@10 of one system and Random at each share of ratings removed (AR falls with the
    density, 1R flat), keyed ``(removed, system, series)``."""
    frames = {}
    rng = np.random.default_rng(seed)
    users = np.arange(300)
    for x in removed:
        frames[(x, "s", "AR")] = pd.DataFrame({"user": users, "value": 0.05 * (1 - x) + rng.normal(0, 0.005, 300)})
        frames[(x, "s", "1R")] = pd.DataFrame({"user": users, "value": 0.05 + rng.normal(0, 0.002, 300)})
        frames[(x, RANDOM, "AR")] = pd.DataFrame({"user": users, "value": np.full(300, 0.002 * (1 - x))})
    return frames


def curves_of(frames: dict):
    """The sparsity curves (``chapter.Curves``) of :func:`constructed_frames`, with bootstrap replicates."""
    reps = uncertainty.replicates(frames, n_bootstrap=300)
    pt = uncertainty.point(frames)
    table = pd.DataFrame([("removed", k[0], k[1], k[2], pt[k], reps[k].std()) for k in frames],
                         columns=["curve", "x", "system", "series", "value", "se"])
    return chapter.Curves(table, reps)


def test_sparsity_claims_on_constructed_curves():
    frames = constructed_frames()
    cur = curves_of(frames)
    assert verdict("sparsity-ar", {"curves": cur}).verdict == "agrees"
    assert verdict("sparsity-1r", {"curves": cur}).verdict == "agrees"
    flat_ar = {k: (f.assign(value=frames[(0.0, "s", "AR")]["value"]) if k[1:] == ("s", "AR") else f)
               for k, f in frames.items()}  # AR does not follow the halved density
    reps2 = uncertainty.replicates(flat_ar, n_bootstrap=300)
    pt2 = uncertainty.point(flat_ar)
    t2 = cur.table.assign(value=[pt2[k] for k in frames])
    assert verdict("sparsity-ar", {"curves": chapter.Curves(t2, reps2)}).verdict == "disagrees"


# --- the chapter on real data ----------------------------------------------------------------------

def test_compare_designs_shares_targets_and_carries_uncertainty():
    ratings = rm.datasets.load("movielens-small").ratings
    run = chapter.compare_designs(ratings, ["Random", "Pop"], ["1R", "AR", "P1R", "UAR", "AI-UAR"], ["P@10"],
                                  users=60, threshold=5.0, n_bootstrap=100)
    t = run.table
    assert set(t["system"]) == {"Random", "Pop"} and (t[t.system == "Pop"]["se"] > 0).all()
    assert f"TI-AR-NN(n={run.info['T']})" in set(t["design"])  # Fig. 4.7's AR: |N_u| = |T|
    one = t[t["design"] == "TI-1R-NN(n=99)"].set_index("system")
    assert one.loc["Pop", "random_expected"] == pytest.approx(0.01)
    assert one.loc["Pop", "value"] > one.loc["Random", "value"]
    assert ("UAR", RANDOM, "P@10") in run.replicates.columns and len(run.replicates) == 100
    assert run.metadata["AI-UAR"]["n_candidates"] > run.metadata["UAR"]["n_candidates"] == run.info["T"]
    assert set(run.per_user["design"]) == set(t["design"])


def test_random_precision_variance_is_hypergeometric(ml):
    from scipy.stats import hypergeom

    train, test = ml
    for design in ("TI-AR-AN", "TI-1R-NN(n=20)"):
        ts = rm.protocols.build_targets(train, test, design, threshold=5)
        var = rm.protocols.random_precision_variance_per_set(ts, 10)
        exp = rm.protocols.random_precision_per_set(ts, 10)
        K = np.ones(len(ts.lengths)) if ts.rel_item is not None else exp * ts.lengths  # n_rel (|T| > 10 here)
        want = [hypergeom.var(T, int(round(k)), min(10, T)) / 100 for T, k in zip(ts.lengths[:50], K[:50])]
        np.testing.assert_allclose(var[:50], want, rtol=1e-9)
