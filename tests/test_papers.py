"""recmetrics.papers: set-ups as data, deviations, the claims of papers 003/000 decided by the one verdict
rule with their uncertainty (group claims as worded, Monte Carlo floors, fold pooling, GF1 readings)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import papers
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.meta import findings
from recmetrics.meta.robustness import Robustness
from recmetrics.papers import checks, setup, tables

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]


def claim(paper, cid):
    return [c for c in papers.get(paper).CLAIMS if c.id == cid]


def verdict(paper, cid, results):
    return findings.assess(claim(paper, cid), results).verdict.iloc[0]


def robustness(taus: dict, spread: float = 0.0, n: int = 20, scenarios=("ratings",), seed: int = 0, default=0.8):
    """A Robustness with mean τ per metric exactly ``taus`` (others ``default``), sd ``spread`` over
    ``n`` samples at two sizes; ``spread=0`` gives a spread of 1e-6 (an se of 0 estimated from
    samples is unknown and decides nothing, issue 25 §2; 1e-6 is far below every gap tested here)."""
    spread = spread or 1e-6
    rng = np.random.default_rng(seed)
    rows = []
    for sc in scenarios:
        for m in METRICS:
            rows.append((sc, 1.0, 0, f"{m}@100", 1.0, 0.1))
            for size in (0.5, 0.2):
                z = rng.standard_normal(n)
                z = (z - z.mean()) / z.std(ddof=1)
                rows += [(sc, size, r, f"{m}@100", taus.get(m, default) + spread * z[r], 0.05) for r in range(n)]
    return Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                      pd.DataFrame())


# ------------------------------------------------------------------ registry, set-ups, notebook parameters
def test_registry_and_setups():
    assert {"000", "003"} <= set(papers.PAPERS)
    with pytest.raises(UnknownNameError):
        papers.get("999")
    for pid in ("000", "003"):
        mod = papers.get(pid)
        assert mod.PAPER == pid and mod.SETUP.paper == pid
        assert list(mod.SETUP.systems) == rm.recommenders.PAPER_SYSTEMS
        ids = [c.id for c in mod.CLAIMS]
        assert len(ids) == len(set(ids)) and all(c.paper == pid for c in mod.CLAIMS)
        assert sorted(c.id for cs in mod.CHAPTERS.values() for c in cs) == sorted(ids)
    assert len(papers.claims()) == sum(len(papers.get(pid).CLAIMS) for pid in papers.PAPERS)


def test_003_grids_are_the_papers():
    """003 §5: sparsity 100 % → 5 % in 5 % steps; popularity 100 % → 80 % of the items in 1 % steps."""
    sizes = papers.get("003").SETUP.robustness_sizes
    assert sizes["ratings"] == tuple(round(1 - 0.05 * i, 10) for i in range(20))
    assert sizes["popular-items"][0] == 1.0 and sizes["popular-items"][-1] == 0.8 and len(sizes["popular-items"]) == 21
    assert np.allclose(np.diff(sizes["popular-items"]), -0.01)
    params = papers.notebook_parameters("paper")["05_cutoffs"]["robustness_sizes"]
    assert params["popular-items"][-1] == 0.8 and min(params["ratings"]) == 0.05
    assert papers.get("000").SETUP.robustness_sizes["popular-items"] == sizes["popular-items"]  # 000 repeats 003
    assert papers.get("000").SETUP.robustness_sizes["ratings"][-1] == 0.01


def test_grid_helpers():
    assert setup.grid(1.0, 0.8, 0.05) == (1.0, 0.95, 0.9, 0.85, 0.8)
    with pytest.raises(InputError):
        setup.grid(1.0, 0.8, 0.03)
    assert setup.describe_grid([1.0, 0.99, 0.98]) == "1 → 0.98 in steps of 0.01, 3 sizes"


@pytest.mark.parametrize("stem", ["05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric", "09_explorers"])
def test_quick_parameters_are_the_notebook_defaults(stem):
    """The notebooks' own defaults are the quick profile of their paper's set-up (no drift)."""
    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    namespace: dict = {}
    exec("".join(cell["source"]), namespace)
    quick = papers.notebook_parameters("quick")[stem]
    for name, value in quick.items():
        assert name in namespace, f"{stem} does not declare {name}"
        assert namespace[name] == value, (stem, name)
    paper = papers.notebook_parameters("paper")[stem]
    assert set(paper) == set(quick) and all(name in namespace for name in paper)
    # the report passes only the names papermill reads from the parameters cell (a second "=" on a
    # line, e.g. "infAP(unjudged=pooled)", hides it)
    papermill = pytest.importorskip("papermill")
    declared = set(papermill.inspect_notebook(str(NOTEBOOKS / f"{stem}.ipynb")))
    assert set(quick) <= declared, set(quick) - declared


def test_notebook_parameters_rejects_unknown_profile():
    with pytest.raises(UnknownNameError):
        papers.notebook_parameters("fast")


def test_deviations_name_every_difference():
    s = papers.get("003").SETUP
    assert papers.deviations(s, {"dataset": "movielens-1m", "systems": list(s.systems), "split": "holdout",
                                 "n_samples": 50, "n_permutations": 100_000, "cutoffs": list(s.cutoffs),
                                 "robustness_sizes": s.robustness_sizes, "pool": ["concat", "mean"]}) == []
    dev = papers.deviations(s, {"dataset": "movielens-small", "systems": ["Random", "Pop", "UserKNN"],
                                "n_samples": 5, "n_permutations": 2000, "split": "kfold", "repeats": 3,
                                "robustness_sizes": {"popular-items": [1.0, 0.5, 0.01]}, "pool": ["sum"]})
    text = "\n".join(dev)
    assert "movielens-small" in text and "2 of the paper's 21" in text and "not in the paper: UserKNN" in text
    assert "samples per size: 5 (the paper: 50)" in text and "permutations: 2,000 (the paper: 100,000)" in text
    assert "popular-items grid: 1 → 0.01, 3 sizes (the paper: 1 → 0.8 in steps of 0.01, 21 sizes)" in text
    assert "split: kfold" in text and "pool: sum" in text
    assert "split drawn 3 times (the paper: 1)" in text
    assert not any("drawn" in d for d in papers.deviations(s, {"repeats": 1}))
    assert "scenarios not run: ratings" in text
    with pytest.raises(InputError):
        papers.deviations(s, ["dataset"])


def test_assess_carries_deviations():
    c = findings.Claim("x", "003", "w", "e", check=lambda r: findings.Evidence("agrees", 1.0, "d"))
    t = findings.assess([c], {}, deviations=["dataset: toy", "systems: 2 of 21"])
    assert t.deviations.iloc[0] == "dataset: toy; systems: 2 of 21"
    assert findings.assess([c], {}).deviations.iloc[0] == ""


# ------------------------------------------------------------------ one verdict rule, as worded
def test_group_claim_is_tested_as_worded():
    """000 §6.3.1: 'Precision, F1, and NDCG show the best robustness' — P alone on top is not enough."""
    good = {"robustness": robustness({"P": 0.95, "F1": 0.94, "nDCG": 0.93}), "n_systems": 21}
    assert verdict("000", "p-most-robust-ratings", good) == "agrees"
    f1_low = {"robustness": robustness({"P": 0.95, "F1": 0.5, "nDCG": 0.93}), "n_systems": 21}
    t = findings.assess(claim("000", "p-most-robust-ratings"), f1_low)
    assert t.verdict.iloc[0] == "disagrees" and "beats F1" in t.our_evidence.iloc[0]


def test_exact_tie_at_the_top_is_inconclusive():
    """A tie (one sample per size, no se) used to count as 'most robust'."""
    tied = {"robustness": robustness({"P": 0.9, "AP": 0.9}, scenarios=("popular-items",)), "n_systems": 21}
    assert verdict("000", "p-most-robust-popular", tied) == "inconclusive"
    clear = {"robustness": robustness({"P": 0.9}, scenarios=("popular-items",)), "n_systems": 21}
    assert verdict("000", "p-most-robust-popular", clear) == "agrees"


def test_noise_is_checked_against_every_rival():
    """The top rival is clearly beaten, a lower one is within its (larger) noise: inconclusive."""
    rows = []
    rng = np.random.default_rng(1)
    for m in METRICS:
        rows.append(("popular-items", 1.0, 0, f"{m}@100", 1.0, 0.1))
        mean, sd = {"P": (0.90, 0.001), "AP": (0.88, 0.001), "RR": (0.87, 0.2)}.get(m, (0.5, 0.001))
        for size in (0.5, 0.2):
            z = rng.standard_normal(20)
            z = (z - z.mean()) / z.std(ddof=1)
            rows += [("popular-items", size, r, f"{m}@100", mean + sd * z[r], 0.05) for r in range(20)]
    rob = Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                     pd.DataFrame())
    t = findings.assess(claim("000", "p-most-robust-popular"), {"robustness": rob, "n_systems": 21})
    assert t.verdict.iloc[0] == "inconclusive" and "RR" in t.our_evidence.iloc[0]


def test_among_the_least_robust():
    words = "mrr-err-least-robust"
    assert verdict("000", words, {"robustness": robustness({"RR": 0.5, "ERR": 0.55}), "n_systems": 21}) == "agrees"
    # one other metric below them: "among" the least robust under the project's reading (all but 1
    # other metric above), not under the stricter one (slack 0): the verdict flips within one step
    # of a project-chosen number, so it is inconclusive, saying so (issue 25 §2)
    t = findings.assess(claim("000", words), {"robustness": robustness({"RR": 0.5, "ERR": 0.55, "bpref": 0.4}),
                                              "n_systems": 21})
    assert t.verdict.iloc[0] == "inconclusive" and "flips within one step" in t.our_evidence.iloc[0]
    assert "the project's reading: agrees; at 0: disagrees / 2: agrees" in t.our_evidence.iloc[0]
    assert verdict("000", words, {"robustness": robustness({"RR": 0.95, "ERR": 0.55}), "n_systems": 21}) == "disagrees"
    noisy = {"robustness": robustness({"RR": 0.79, "ERR": 0.78}, spread=0.05), "n_systems": 21}
    assert verdict("000", words, noisy) == "inconclusive"


def test_dp_claim_at_the_monte_carlo_floor_is_inconclusive():
    """2,000 permutations × 15 pairs: DP floor 15/2001. nDCG at the floor, P one pair above it —
    within the Monte Carlo noise, so nDCG is not 'the most discriminative' here."""
    floor = 15 / 2001
    dp = pd.Series({m: 1.0 + i for i, m in enumerate(METRICS)})
    dp["nDCG"], dp["P"] = floor, floor + 2 / 2001
    se = pd.Series(0.001, index=METRICS)
    res = {"dp": dp, "dp_se": se, "dp_floor": floor, "n_systems": 21}
    assert verdict("000", "dp-ndcg-top", res) == "inconclusive"
    both = {**res, "dp": dp.copy()}
    both["dp"]["P"] = floor
    t = findings.assess(claim("000", "dp-ndcg-top"), both)
    assert t.verdict.iloc[0] == "inconclusive" and "floor" in t.our_evidence.iloc[0]
    clear = {**res, "dp": dp.copy()}
    clear["dp"]["P"] = 0.5
    assert verdict("000", "dp-ndcg-top", clear) == "agrees"
    worse = {**res, "dp": dp.copy()}
    worse["dp"]["nDCG"] = 3.0
    assert verdict("000", "dp-ndcg-top", worse) == "disagrees"


def test_dp_uncertainty_of_a_result():
    p = np.array([0.01, 0.5, 1 / 2001])
    r = rm.meta.discriminative.DiscriminativePower(pd.DataFrame({"a": [0, 0, 1], "b": [1, 2, 2], "p": p}), p.sum(),
                                                    np.sort(p), 1 / 3, 0.01, 0.05, 2000, False, "two-sided", 0)
    assert r.dp_se == pytest.approx(np.sqrt(np.sum(p * (1 - p)) / 2000))
    assert not r.at_floor and r.dp_floor == pytest.approx(3 / 2001)
    ev = tables.dp_evidence({"nDCG@100": r, "P@100": r})
    assert ev["dp_floor"] == pytest.approx(3 / 2001) and ev["dp_se"]["P@100"] == pytest.approx(r.dp_se)


def test_real_dp_results_feed_the_claim():
    rng = np.random.default_rng(0)
    base = rng.random((6, 40))
    scores = {m: pd.DataFrame(base + rng.normal(0, s, base.shape)) for m, s in zip(METRICS, np.linspace(0.01, 1, 9))}
    res = rm.meta.discriminative_power(scores, n_permutations=500, seed=0)
    ev = tables.dp_evidence({f"{m}@100": r for m, r in res.items()})
    t = findings.assess(claim("000", "dp-ndcg-top"), {**ev, "n_systems": 6})
    assert t.verdict.iloc[0] == "disagrees" and "Monte Carlo se" in t.our_evidence.iloc[0]  # P's noise is smallest
    _, _, table = tables.dp_summary(res, "toy")
    assert ("toy", "MC se") in table.columns and ("toy", "at floor") in table.columns


def test_deeper_cutoffs_decided_against_noise():
    c = "deeper-cutoffs-robust"
    flat = {"cutoff_robustness": pd.Series([0.958, 0.956, 0.955], index=[5, 50, 100]),
            "cutoff_robustness_se": pd.Series([0.004, 0.004, 0.004], index=[5, 50, 100]), "n_systems": 21}
    assert verdict("003", c, flat) == "inconclusive"
    steep = {**flat, "cutoff_robustness": pd.Series([0.90, 0.93, 0.96], index=[5, 50, 100])}
    assert verdict("003", c, steep) == "agrees"
    down = {**flat, "cutoff_robustness": pd.Series([0.96, 0.93, 0.90], index=[5, 50, 100])}
    assert verdict("003", c, down) == "disagrees"
    reversal = {**flat, "cutoff_robustness": pd.Series([0.90, 0.99, 0.96], index=[5, 50, 100])}
    t = findings.assess(claim("003", c), reversal)
    assert t.verdict.iloc[0] == "inconclusive" and "@50 > @100" in t.our_evidence.iloc[0]
    # a float-noise difference decides nothing (no se given)
    tiny = {"cutoff_robustness": pd.Series([0.9, 0.9 + 2e-16], index=[5, 100]), "n_systems": 21}
    assert verdict("003", c, tiny) == "inconclusive"


def test_popularity_half_of_the_cutoff_claim_is_checked():
    """003 §6, Fig. 3: the popularity half of 'deeper cut-offs are more robust' has its own claim."""
    c = claim("003", "deeper-cutoffs-robust-popularity")
    assert c and "popular" in c[0].claim
    res = {"cutoff_popularity": pd.Series([0.5, 0.6, 0.7], index=[5, 50, 100]), "n_systems": 21}
    assert findings.assess(c, res).verdict.iloc[0] == "agrees"
    missing = findings.assess(c, {"n_systems": 21})
    assert missing.verdict.iloc[0] == "inconclusive" and "cutoff_popularity" in missing.our_evidence.iloc[0]


def test_deeper_dp_claim_as_worded_above_50():
    c = "deeper-cutoffs-dp"
    dp = pd.Series([3.0, 2.0, 1.5, 0.5, 0.4], index=[5, 10, 20, 60, 100])
    assert verdict("003", c, {"cutoff_dp": dp, "n_systems": 21}) == "agrees"
    dp_mixed = pd.Series([3.0, 0.3, 1.5, 0.5, 0.4], index=[5, 10, 20, 60, 100])
    assert verdict("003", c, {"cutoff_dp": dp_mixed, "n_systems": 21}) == "disagrees"
    floor = 15 / 2001
    at_floor = pd.Series([3.0, 2.0, floor, floor, floor], index=[5, 10, 50, 60, 100])
    t = findings.assess(claim("003", c), {"cutoff_dp": at_floor, "cutoff_dp_floor": floor, "n_systems": 21})
    assert t.verdict.iloc[0] == "inconclusive" and "floor" in t.our_evidence.iloc[0]


def test_cutoffs_correlate_threshold_is_exact():
    tau = pd.DataFrame(np.full((3, 3), 0.9 - 1e-16))
    assert verdict("003", "cutoffs-correlate", {"cutoff_tau": tau}) == "agrees"
    assert verdict("003", "cutoffs-correlate", {"cutoff_tau": tau - 0.1, "n_systems": 21}) == "disagrees"
    # with the number of systems known, a τ within one swapped pair of 0.9 decides nothing
    assert verdict("003", "cutoffs-correlate", {"cutoff_tau": tau, "n_systems": 21}) == "inconclusive"


def test_cutoffs_correlate_tests_every_pair_not_the_median():
    # the words: every two cut-offs of nDCG at τ ≥ 0.9 — one pair at 0.8 fails though the median is 1
    tau = pd.DataFrame(np.ones((4, 4)), index=[5, 10, 50, 100], columns=[5, 10, 50, 100])
    tau.loc[5, 100] = tau.loc[100, 5] = 0.8
    ev = papers.get("003").CLAIMS[0].check({"cutoff_tau": tau, "n_systems": 21})
    assert ev.verdict == "disagrees" and "5 vs 100" in ev.detail and ev.value == 0.8


def test_verdicts_are_stable_under_tiny_perturbations():
    rob = robustness({"P": 0.95, "F1": 0.94, "nDCG": 0.93})
    jittered = Robustness(rob.samples.assign(tau=rob.samples.tau + np.random.default_rng(3).normal(0, 1e-12, len(rob.samples))),
                          rob.full)
    for cid in ("p-most-robust-ratings", "mrr-err-least-robust"):
        assert verdict("000", cid, {"robustness": rob, "n_systems": 21}) == \
            verdict("000", cid, {"robustness": jittered, "n_systems": 21})


def test_fold_pooling_flip_is_inconclusive():
    dp = pd.Series({m: 1.0 + i for i, m in enumerate(METRICS)})
    dp["nDCG"] = 0.1
    other = dp.copy()
    other["nDCG"] = 5.0
    t = papers.assess_choices(claim("000", "dp-ndcg-top"),
                              {"concat": {"dp": dp, "n_systems": 21}, "mean": {"dp": other, "n_systems": 21}})
    assert t.verdict.iloc[0] == "inconclusive" and "flips with pool" in t.our_evidence.iloc[0]
    assert t.pool_verdicts.iloc[0] == "concat: agrees; mean: disagrees"
    same = papers.assess_choices(claim("000", "dp-ndcg-top"),
                                 {"concat": {"dp": dp, "n_systems": 21}, "mean": {"dp": dp * 2, "n_systems": 21}},
                                 deviations=["toy"])
    assert same.verdict.iloc[0] == "agrees" and same.deviations.iloc[0] == "toy"


# ------------------------------------------------------------------ GF1 (000 §7)
GF1_HALVES = ["gf1-poor-correlation", "arith-geo-f1", "gf1-least-robust"]
GMRR_HALVES = ["gmrr-poor-correlation", "arith-geo-rr", "gmrr-least-robust"]


def _geometric_evidence(f1_tau=0.1):
    """§7's pattern: GF1 and GMRR correlate poorly with the rest (τ 0.1; GF1: ``f1_tau``) but well
    with each other (0.8), their arithmetic and geometric rankings disagree, and they are the least
    robust."""
    tau = pd.DataFrame(0.9, index=METRICS, columns=METRICS)
    tau.loc[["F1", "RR"], :] = tau.loc[:, ["F1", "RR"]] = 0.1
    tau.loc["F1", :] = tau.loc[:, "F1"] = f1_tau
    tau.loc["F1", "RR"] = tau.loc["RR", "F1"] = 0.8
    for m in METRICS:
        tau.loc[m, m] = 1.0
    mean_tau = pd.DataFrame({"tau": [0.1 if m in ("F1", "RR") else 0.9 for m in METRICS]}, index=METRICS)
    rob = robustness({"F1": 0.3, "RR": 0.3}, scenarios=papers.get("000").SCENARIOS)
    # τ of full test sets are estimates: the split's replicates (here τ plus noise of sd 0.02) give their spread
    rng = np.random.default_rng(0)
    noise = [rng.normal(0.0, 0.02, tau.shape) for _ in range(10)]
    tau_reps = [tau + (n + n.T) / 2 * (1 - np.eye(len(METRICS))) for n in noise]
    mean_reps = pd.DataFrame([mean_tau["tau"] + rng.normal(0.0, 0.02, len(METRICS)) for _ in range(10)])
    return {"tau_geo": tau, "tau_geo_replicates": tau_reps, "mean_tau": mean_tau, "mean_tau_replicates": mean_reps,
            "robustness_geo": rob, "robustness": rob, "n_systems": 21}


def _assess(ids, results):
    return findings.assess([c for c in papers.get("000").CLAIMS if c.id in ids], results).set_index("id").loc[ids]


def test_gf1_claims_are_not_testable_under_trec_evals_reading_with_per_user_f1():
    res = _geometric_evidence()
    table = _assess(GF1_HALVES, res)           # no geometric_reading: trec_eval's, every zero floored
    assert (table.verdict == "not testable").all()
    assert table.our_evidence.str.contains("2n/(n+|R_u|)", regex=False).all()
    assert table.our_evidence.iloc[0].count("τ(GF1, GP) = 0.100") == 1
    agg = _assess(GF1_HALVES, {**res, "f1_reading": "aggregate"})
    assert (agg.verdict == "agrees").all(), agg.our_evidence
    with_other = _assess(GF1_HALVES[:1], {**res, "f1_aggregate_results": {"tau_geo": res["tau_geo"]}})
    assert "Under the other reading" in with_other.our_evidence.iloc[0] and "agrees" in with_other.our_evidence.iloc[0]
    # the GMRR halves are testable under trec_eval's reading too
    assert (_assess(GMRR_HALVES, res).verdict == "agrees").all()


def test_gf1_and_gmrr_claims_are_decided_under_rec_evals_reading():
    res = {**_geometric_evidence(), "geometric_reading": "rec_eval"}
    table = _assess(GF1_HALVES + GMRR_HALVES, res)
    assert (table.verdict == "agrees").all(), table.our_evidence
    assert table.our_evidence.str.contains("rec_eval's reading", regex=False).all()
    # GF1 correlating with the others better than they do among themselves: the claim's GF1 half disagrees
    flat = {**_geometric_evidence(f1_tau=0.95), "geometric_reading": "rec_eval"}
    assert _assess(["gf1-poor-correlation"], flat).verdict.iloc[0] == "disagrees"
    # the other reading's results are reported on the row, with their own verdict
    both = _assess(["gf1-poor-correlation", "gmrr-poor-correlation"],
                   {**res, "other_reading_results": {k: flat[k] for k in ("tau_geo", "tau_geo_replicates")}})
    assert both.our_evidence.str.contains("Under trec_eval's reading:", regex=False).all()
    assert "not testable" in both.our_evidence.iloc[0] and "agrees" in both.our_evidence.iloc[1]


@pytest.mark.parametrize("extra, match", [
    ({"geometric_reading": "receval"}, "geometric_reading must be one of"),
    ({"geometric_reading": "rec_eval", "f1_reading": "aggregate"}, "f1_reading must be 'per-user'"),
    ({"geometric_reading": "rec_eval", "other_reading_results": {"geometric_reading": "rec_eval"}}, "other reading"),
])
def test_bad_geometric_readings_of_a_claims_results_fail_loudly(extra, match):
    claim = next(c for c in papers.get("000").CLAIMS if c.id == "gf1-poor-correlation")
    with pytest.raises(InputError, match=match):
        claim.check({**_geometric_evidence(), **extra})


def test_per_user_gf1_is_gp_times_a_constant():
    """F1_u = P_u · 2n/(n + |R_u|): without zeros GF1/GP is one constant, so they rank alike."""
    from recmetrics.metrics.aggregate import aggregate, f1_of_means

    rng = np.random.default_rng(0)
    n, n_rel = 100, rng.integers(1, 50, size=30)
    hits = np.minimum(rng.integers(1, 20, size=(8, 30)), n_rel)
    p, r = hits / n, hits / n_rel
    f1 = 2 * p * r / (p + r)
    assert np.allclose(f1, p * 2 * n / (n + n_rel))
    ratio = np.log(aggregate(f1, "geometric", axis=1)) - np.log(aggregate(p, "geometric", axis=1))
    assert np.ptp(ratio) < 1e-12
    other = f1_of_means(p, r, "geometric", axis=1)
    gp, gr = aggregate(p, "geometric", axis=1), aggregate(r, "geometric", axis=1)
    assert np.allclose(other, 2 * gp * gr / (gp + gr))
    assert f1_of_means(np.zeros((1, 3)), np.zeros((1, 3)))[0] == 0.0


# ------------------------------------------------------------------ chapters' helpers on a real study
@pytest.fixture(scope="module")
def small_study():
    from test_recommenders import synthetic  # the generated ratings of the recommender tests

    return rm.study.Study(synthetic(seed=3), ["Random", "Pop", "UserKNN", "ItemKNN", "PureSVD(k=8)"],
                          ["P", "Recall", "F1", "RR", "infAP(unjudged=pooled)"], [10], k=2, seed=0, cache=False,
                          progress=False)


def test_study_takes_the_papers_infap_reading(small_study):
    s = small_study.scores("infAP(unjudged=pooled)", 10)
    assert s.shape[0] == 5 and np.isfinite(s.to_numpy()).all()


def test_per_scenario_grids_and_gf1_readings(small_study):
    from recmetrics.papers import experiments

    rob = experiments.robustness(small_study, {"ratings": [1.0, 0.5], "popular-items": [1.0, 0.9, 0.8]}, 2, 0,
                                 metrics=["P"], progress=False)
    sizes = rob.samples.groupby("scenario")["size"].unique()
    assert sorted(sizes["popular-items"]) == [0.8, 0.9, 1.0] and sorted(sizes["ratings"]) == [0.5, 1.0]
    table = experiments.gf1_readings(small_study, 10, [1e-5, 1e-2])
    assert list(table.reading) == ["per-user"] * 4 + ["aggregate"] * 2
    assert list(table.zeros) == ["trec_eval"] * 2 + ["rec_eval"] * 2 + ["trec_eval"] * 2
    agg = experiments.geometric_agreement(small_study, 10, f1_reading="aggregate")
    assert set(agg) == {"tau_geo", "mean_tau"} and agg["tau_geo"].shape == (5, 5)
    with pytest.raises(InputError):
        experiments.system_table(small_study, 10, f1_reading="mean")


def test_geometric_agreement_on_the_splits_replicates(small_study):
    """``labels``: the same τ on every replicate of the split, each equal to the τ of that replicate's view."""
    from recmetrics.meta import replicates
    from recmetrics.papers import experiments

    labels = replicates.unit_labels(small_study, 3, seed=1)
    got = experiments.geometric_agreement(small_study, 10, reading="rec_eval", labels=labels)
    whole = experiments.geometric_agreement(small_study, 10, reading="rec_eval")
    pd.testing.assert_frame_equal(got["tau_geo"], whole["tau_geo"])
    assert len(got["tau_geo_replicates"]) == 3 and got["mean_tau_replicates"].shape == (3, 5)
    for r in range(3):
        alone = experiments.geometric_agreement(replicates.view(small_study, labels, r), 10, reading="rec_eval")
        pd.testing.assert_frame_equal(got["tau_geo_replicates"][r], alone["tau_geo"])
        assert got["mean_tau_replicates"].iloc[r].tolist() == alone["mean_tau"]["tau"].tolist()
    with pytest.raises(InputError, match="at least 2 replicates"):
        experiments.geometric_agreement(small_study, 10, labels=np.zeros_like(labels))


def test_rec_evals_reading_reaches_system_scores_tables_and_robustness(small_study):
    """``geometric(rec_eval)`` is read per metric wherever an aggregate is given: a unit without a
    hit counts as 1 in GF1 and GMRR, every other zero is floored."""
    from recmetrics.metrics.aggregate import MIN_GEO_MEAN
    from recmetrics.papers import experiments

    for m in ("F1", "RR", "P"):
        x = small_study.scores(m, 10).to_numpy()
        assert (x == 0).any()        # some units without a hit: the readings differ on them
        zero = 1.0 if m in ("F1", "RR") else MIN_GEO_MEAN
        by_hand = np.exp(np.log(np.where(x == 0, zero, np.maximum(x, MIN_GEO_MEAN))).mean(axis=1))
        got = small_study.system_scores(m, 10, aggregate="geometric(rec_eval)").to_numpy()
        assert np.allclose(got, by_hand, rtol=1e-12)
        table = experiments.system_table(small_study, 10, [m], method="geometric", reading="rec_eval")
        assert np.allclose(table[m].to_numpy(), by_hand, rtol=1e-12)
    rob = experiments.robustness(small_study, {"ratings": [1.0, 0.5]}, 2, 0, metrics=["F1", "P"],
                                 aggregate="geometric(rec_eval)", progress=False)
    full = rob.samples.query("size == 1.0").set_index("metric")["mean_value"]
    for m in ("F1", "P"):
        want = small_study.system_scores(m, 10, aggregate="geometric(rec_eval)").mean()
        assert np.ravel(full[f"{m}@10"])[0] == pytest.approx(want, rel=1e-12)
    agreement = experiments.geometric_agreement(small_study, 10, reading="rec_eval")
    assert agreement["mean_tau"].loc["P", "tau"] == experiments.geometric_agreement(small_study, 10)["mean_tau"].loc["P", "tau"]


def test_geometric_readings_and_the_other_readings_robustness(small_study):
    from recmetrics.papers import experiments

    r = experiments.geometric_readings(small_study, 10)
    assert list(r["mean_tau"].columns) == ["trec_eval", "rec_eval"]
    same = [m for m in r["mean_tau"].index if m not in ("F1", "RR")]
    assert (r["tau_arith_geo"].loc[same, "trec_eval"] == r["tau_arith_geo"].loc[same, "rec_eval"]).all()
    hit = r["hit_only"].set_index(["reading", "metric"])
    assert set(hit.index) == {(g, m) for g in ("trec_eval", "rec_eval") for m in ("F1", "RR")}
    first = hit.loc[("rec_eval", "F1"), "first"]
    assert hit.loc[("rec_eval", "F1"), "no_hit_first"] == r["no_hit"][first]
    gf1 = small_study.system_scores("F1", 10, aggregate="geometric(rec_eval)")
    assert gf1.idxmax() == first
    assert experiments.hit_only_metrics(["P", "F1@10", "mrr", "infAP(unjudged=pooled)"]) == ["F1@10", "mrr"]
    base = experiments.robustness(small_study, {"ratings": [1.0, 0.5]}, 2, 0, metrics=["F1", "P"], progress=False)
    part = experiments.robustness(small_study, {"ratings": [1.0, 0.5]}, 2, 0, metrics=["F1"],
                                  aggregate="geometric(rec_eval)", progress=False)
    merged = experiments.replace_metrics(base, part)
    key = ["scenario", "size", "sample", "metric"]

    def rows(r, m):
        return r.samples[r.samples.metric == m].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(rows(merged, "F1@10"), rows(part, "F1@10"))
    pd.testing.assert_frame_equal(rows(merged, "P@10"), rows(base, "P@10"))
    assert (merged.full["F1@10"] == part.full["F1@10"]).all() and (merged.full["P@10"] == base.full["P@10"]).all()
    assert not (rows(merged, "F1@10").mean_value == rows(base, "F1@10").mean_value).all()
    with pytest.raises(InputError, match="same scenarios"):
        experiments.replace_metrics(base, experiments.robustness(small_study, {"ratings": [1.0, 0.2]}, 2, 0,
                                                                 metrics=["F1"], progress=False))


def _readings(f1_rec, f1_trec, tau_no_hit=0.9):
    idx = ["P", "F1", "AP", "RR"]

    def tau(x):     # τ 0.9 between P and AP, x between them and each of F1, RR; F1-RR 0.8
        t = pd.DataFrame(0.9, index=idx, columns=idx)
        t.loc[["F1", "RR"], :] = t.loc[:, ["F1", "RR"]] = x
        t.loc["F1", "RR"] = t.loc["RR", "F1"] = 0.8
        for m in idx:
            t.loc[m, m] = 1.0
        return t
    tag = pd.DataFrame({"trec_eval": [1.0, 0.8, 0.96, 0.7], "rec_eval": [1.0, 0.41, 0.96, 0.5]}, index=idx)
    hit = pd.DataFrame([{"reading": g, "metric": m, "first": "Random" if g == "rec_eval" else "Pop",
                         "no_hit_first": 0.9 if g == "rec_eval" else 0.2, "no_hit_rank": 1 if g == "rec_eval" else 3,
                         "tau_no_hit": tau_no_hit if g == "rec_eval" else -0.5}
                        for g in ("trec_eval", "rec_eval") for m in ("F1", "RR")])
    return {"tau": {"trec_eval": tau(f1_trec), "rec_eval": tau(f1_rec)}, "tau_arith_geo": tag, "hit_only": hit}


def test_explain_readings_says_what_section_7_follows_from():
    from recmetrics.papers import experiments

    text = experiments.explain_readings(_readings(0.34, 0.9), {"tau(F1, GF1)": 0.42, "tau(AP, GAP)": 0.92})
    assert "GF1 0.34, GMRR 0.34; those 2 among themselves 0.90 to 0.90" in text
    assert "τ(F1, GF1) = 0.41 (the paper: 0.42 on MovieLens 1M)" in text
    assert "GF1 ranks Random first, the system with the largest share of units without a hit (90.0%)" in text
    assert "under rec_eval's reading and not under trec_eval's" in text and "the more users a system misses" in text
    assert "under both readings" in experiments.explain_readings(_readings(0.34, 0.3))
    assert "trec_eval's reading only" in experiments.explain_readings(_readings(0.95, 0.3))
    assert "under either reading" in experiments.explain_readings(_readings(0.95, 0.95, tau_no_hit=-0.2))
    with pytest.raises(InputError, match="F1 and RR under both readings"):
        one = _readings(0.3, 0.9)
        experiments.explain_readings({**one, "tau": {"rec_eval": one["tau"]["rec_eval"]}})


def test_claims_live_only_in_the_papers():
    """recmetrics.meta (below papers) holds no paper's claims: the old re-export modules are gone."""
    import importlib

    for old in ("recmetrics.meta.claims", "recmetrics.meta.schroeder_claims", "recmetrics.meta.perturbations.claims"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert "claims" not in rm.meta.__all__ and "schroeder_claims" not in rm.meta.__all__


def test_markdown_of_the_paper_chapters_types_no_measured_number_or_verdict():
    import re

    for stem in ("05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric"):
        nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
        for c in nb["cells"]:
            if c["cell_type"] != "markdown":
                continue
            text = re.sub(r"`[^`]*`|\$[^$]*\$|(Eqs?|Figs?|Tables?)\.?\s*[\d.]+(\s*[,–-]\s*[\d.]+)*|§\s*[\d.]+", "",
                          "".join(c["source"]))
            assert not re.search(r"\d+\.\d+", text), (stem, text)
            assert not re.search(r"\b(agrees?|disagrees?)\b", text, re.I), (stem, text)


# ------------------------------------------------------------------ infAP's readings against trec_eval
@pytest.mark.parametrize("seed,threshold", [(0, 4.0), (1, 3.5)])
def test_infap_papers_reading_is_trec_eval_with_every_unrated_item_pooled(seed, threshold):
    """infAP(unjudged=pooled) = trec_eval's infAP when every unrated item of a list is labelled −1
    (pooled, unjudged) — Eq. 11 as printed; bpref is the same under both readings; the default
    (trec_eval on the plain qrels) equals AP when there are no −1 labels."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from conftest import make_case

    qrels_df, run_df = make_case(seed)
    qrels_df = qrels_df[qrels_df.iloc[:, 2] >= 0]
    ours = rm.evaluate(rm.Run.from_frame(run_df), rm.Qrels(qrels_df, threshold=threshold),
                       ["infAP(unjudged=pooled)", "infAP", "AP", "bpref"], users="relevant").per_user
    ours = ours.rename(columns={"infAP(unjudged='pooled')": "infAP(unjudged=pooled)"})
    qrels, run = {}, {}
    for u, i, r in qrels_df.itertuples(index=False):
        qrels.setdefault(str(u), {})[str(i)] = int(round(2 * r))
    for u, i, s in run_df.itertuples(index=False):
        run.setdefault(str(u), {})[str(i)] = float(s)
        if str(u) in qrels:
            qrels[str(u)].setdefault(str(i), -1)   # every unrated item of the list: pooled but unjudged
    pooled = pytrec_eval.RelevanceEvaluator(qrels, {"infAP", "bpref"},
                                            relevance_level=int(round(2 * threshold))).evaluate(run)
    compared = 0
    for user, row in ours.iterrows():
        if str(user) not in pooled:
            continue
        assert row["infAP(unjudged=pooled)"] == pytest.approx(pooled[str(user)]["infAP"], abs=1e-9), user
        assert row["bpref"] == pytest.approx(pooled[str(user)]["bpref"], abs=1e-9), user
        compared += 1
    assert compared > 100
    assert np.allclose(ours["infAP"], ours["AP"], atol=1e-9)          # trec_eval's reading: infAP is AP
    assert np.abs(ours["infAP(unjudged=pooled)"] - ours["AP"]).max() > 0.1


def test_infap_reading_parameter():
    assert str(rm.metrics.registry.parse("infAP(unjudged=pooled)@100")) == "infAP@100(unjudged='pooled')"
    with pytest.raises(InputError):
        rm.evaluate(rm.Run.from_lists({1: ["a"]}), rm.Qrels(pd.DataFrame({"user": [1], "item": ["a"], "rating": [5]})),
                    ["infAP(unjudged=maybe)"])


def test_study_cache_tells_the_infap_readings_apart(tmp_path):
    """The score cube's cache key names each metric with its parameters: a cube of trec_eval's infAP
    is never loaded for infAP(unjudged=pooled)."""
    from test_recommenders import synthetic

    kw = dict(k=2, seed=0, cache_dir=tmp_path / "runs", progress=False)
    a = rm.study.Study(synthetic(seed=3), ["Pop", "UserKNN"], ["AP", "infAP"], [10], **kw)
    b = rm.study.Study(synthetic(seed=3), ["Pop", "UserKNN"], ["AP", "infAP(unjudged=pooled)"], [10], **kw)
    assert np.allclose(a.scores("infAP", 10).to_numpy(), a.scores("AP", 10).to_numpy())
    assert not np.allclose(b.scores("infAP(unjudged=pooled)", 10).to_numpy(), b.scores("AP", 10).to_numpy())


def test_003_metric_claims_among_its_seven_metrics():
    """003 §7 compares seven metrics: F1 and ERR (000's additions) do not take part."""
    scen = ("ratings", "popular-items")
    # 003 §7's words: bpref the worst under sparsity, infAP and MRR next; MRR the worst under popularity
    ratings = robustness({"P": 0.95, "F1": 0.99, "ERR": 0.1, "RR": 0.3, "bpref": 0.2, "infAP": 0.35})
    popular = robustness({"P": 0.95, "F1": 0.99, "ERR": 0.05, "RR": 0.1}, scenarios=("popular-items",))
    rob = Robustness(pd.concat([ratings.samples, popular.samples], ignore_index=True), pd.DataFrame())
    assert verdict("003", "p-most-robust-003", {"robustness": rob, "n_systems": 21}) == "agrees"
    assert verdict("003", "mrr-least-robust-003", {"robustness": rob, "n_systems": 21}) == "agrees"
    # MRR the least robust under sparsity too (the old reading) is not the paper's words: bpref is the worst there
    mrr_worst = robustness({"P": 0.95, "F1": 0.99, "ERR": 0.1, "RR": 0.1}, scenarios=scen)
    ev = findings.assess(claim("003", "mrr-least-robust-003"), {"robustness": mrr_worst, "n_systems": 21})
    assert ev.verdict.iloc[0] == "disagrees" and "bpref worst under sparsity: disagrees" in ev.our_evidence.iloc[0]
    only_sparsity = robustness({"P": 0.95}, scenarios=("ratings",))
    t = findings.assess(claim("003", "p-most-robust-003"), {"robustness": only_sparsity, "n_systems": 21})
    assert t.verdict.iloc[0] == "inconclusive" and "popular-items" in t.our_evidence.iloc[0]
    dp = pd.Series({m: 5.0 for m in METRICS})
    dp["nDCG"], dp["P"], dp["F1"] = 0.1, 0.5, 0.01
    assert verdict("003", "dp-ndcg-p-top-003", {"dp": dp, "n_systems": 21}) == "agrees"
    swapped = dp.copy()
    swapped["nDCG"], swapped["P"] = 0.5, 0.1
    assert verdict("003", "dp-ndcg-p-top-003", {"dp": swapped, "n_systems": 21}) == "disagrees"
    close = dp.copy()
    close["P"] = 0.1 + 1e-3
    assert verdict("003", "dp-ndcg-p-top-003", {"dp": close, "dp_se": pd.Series(0.01, index=METRICS),
                                                "n_systems": 21}) == "inconclusive"


def test_papers_package_imports_lightly():
    import subprocess
    import sys

    code = ("import sys, recmetrics as rm; rm.papers; from recmetrics.papers import deviations, SetUp; "
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "[]", out.stdout
