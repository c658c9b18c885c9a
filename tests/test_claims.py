"""The papers' claims (meta.claims) assessed on constructed results: verdicts follow the numbers."""
import numpy as np
import pandas as pd
import pytest

from recmetrics.meta import claims, findings
from recmetrics.meta.robustness import Robustness

METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]


def fake_robustness(best: str, worst: tuple[str, ...]):
    rows = []
    for sc in ("ratings", "random-items", "popular-items", "random-users", "large-users"):
        for m in METRICS:
            tau = 0.95 if m == best else 0.5 if m in worst else 0.8
            rows += [(sc, 1.0, 0, f"{m}@100", 1.0, 0.1), (sc, 0.5, 0, f"{m}@100", tau, 0.05)]
    return Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                      pd.DataFrame())


def test_metric_claims_follow_the_numbers():
    dp = pd.Series(np.arange(1.0, 10.0), index=[f"{m}@100" for m in ["nDCG", *[m for m in METRICS if m != "nDCG"]]])
    good = {"dp": dp, "robustness": fake_robustness("P", ("RR", "ERR")), "n_systems": 21}
    table = findings.assess(claims.METRIC_CLAIMS, good)
    assert (table.verdict == "agrees").all(), table[["id", "our_evidence"]]
    bad = {"dp": dp[::-1] * -1, "robustness": fake_robustness("RR", ("P", "nDCG")), "n_systems": 21}
    table = findings.assess(claims.METRIC_CLAIMS, bad)
    assert (table.verdict == "disagrees").all(), table[["id", "our_evidence"]]
    few = findings.assess(claims.METRIC_CLAIMS, {**good, "n_systems": 3})
    assert (few.verdict == "inconclusive").all()
    missing = findings.assess(claims.METRIC_CLAIMS, {"n_systems": 21})
    assert (missing.verdict == "inconclusive").all() and missing.our_evidence.str.contains("not computed").all()


def test_cutoff_and_geometric_claims():
    cut = {"cutoff_tau": pd.DataFrame(np.full((3, 3), 0.9)), "n_systems": 10,
           "cutoff_robustness": pd.Series([0.7, 0.8, 0.9], index=[5, 10, 100]),
           "cutoff_dp": pd.Series([3.0, 2.0, 1.0], index=[5, 10, 100])}
    assert (findings.assess(claims.CUTOFF_CLAIMS, cut).verdict == "agrees").all()
    tau = pd.DataFrame(0.9, index=METRICS, columns=METRICS)
    tau.loc[["F1", "RR"], :] = tau.loc[:, ["F1", "RR"]] = 0.1
    mean_tau = pd.DataFrame({"tau": [0.1 if m in ("F1", "RR") else 0.9 for m in METRICS]}, index=METRICS)
    geo = {"tau_geo": tau, "mean_tau": mean_tau, "robustness_geo": fake_robustness("P", ("F1", "RR")),
           "robustness": fake_robustness("bpref", ("P", "nDCG")), "n_systems": 21}
    table = findings.assess(claims.GEOMETRIC_CLAIMS, geo)
    assert (table.verdict == "agrees").all(), table[["id", "our_evidence"]]


def test_ties_share_the_best_rank():
    dp = pd.Series([0.01, 0.01, 0.5], index=["P@100", "nDCG@100", "RR@100"])
    table = findings.assess(claims.METRIC_CLAIMS[:1], {"dp": dp, "n_systems": 21})
    assert table.verdict.iloc[0] == "inconclusive" and "P" in table.our_evidence.iloc[0]


def test_dp_summary_layout():
    import types
    res = {m: types.SimpleNamespace(dp=d, curve=np.array([0.001, 0.2, 0.01]), share_significant=2 / 3, median_p=0.01)
           for m, d in [("P", 0.211), ("nDCG", 0.1)]}
    dp, curves, table = claims.dp_summary(res, "ml")
    assert dp.idxmin() == "nDCG" and list(curves.columns) == ["metric", "pair", "p"]
    assert curves[curves.metric == "P"].p.tolist() == [0.2, 0.01, 0.001]
    assert table[("ml", "rank")].to_dict() == {"P": 2, "nDCG": 1}


def noisy_robustness(taus: dict, spread: float, n: int = 20, seed: int = 0):
    """Samples of τ around each metric's mean, sd ``spread``, ``n`` per size, in the ratings scenario."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in METRICS:
        rows.append(("ratings", 1.0, 0, f"{m}@100", 1.0, 0.1))
        for size in (0.5, 0.2):
            z = rng.standard_normal(n)
            z = (z - z.mean()) / z.std(ddof=1)  # exactly the asked mean and spread
            rows += [("ratings", size, r, f"{m}@100", taus.get(m, 0.8) + spread * z[r], 0.05) for r in range(n)]
    return Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                      pd.DataFrame())


def test_robustness_differences_inside_the_monte_carlo_noise_are_inconclusive():
    claim = [c for c in claims.METRIC_CLAIMS if c.id == "p-most-robust-ratings"]
    rob = noisy_robustness({"P": 0.90, "AP": 0.89}, spread=0.05)
    se = rob.area_se("ratings")  # sqrt(2 * 0.05² / 20) / 2
    assert np.isclose(se["P@100"], np.sqrt(2 * 0.05 ** 2 / 20) / 2)
    t = findings.assess(claim, {"robustness": rob, "n_systems": 21})
    assert t.verdict.iloc[0] == "inconclusive" and "noise band" in t.our_evidence.iloc[0]
    clear = noisy_robustness({"P": 0.95, "AP": 0.89}, spread=0.05)
    assert findings.assess(claim, {"robustness": clear, "n_systems": 21}).verdict.iloc[0] == "agrees"
    beaten = noisy_robustness({"P": 0.80, "AP": 0.89}, spread=0.05)
    assert findings.assess(claim, {"robustness": beaten, "n_systems": 21}).verdict.iloc[0] == "disagrees"


def test_cutoff_robustness_within_noise_is_inconclusive():
    claim = [c for c in claims.CUTOFF_CLAIMS if c.id == "deeper-cutoffs-robust"]
    flat = {"cutoff_robustness": pd.Series([0.958, 0.956, 0.955], index=[5, 50, 100]),
            "cutoff_robustness_se": pd.Series([0.004, 0.004, 0.004], index=[5, 50, 100]), "n_systems": 21}
    assert findings.assess(claim, flat).verdict.iloc[0] == "inconclusive"
    steep = {**flat, "cutoff_robustness": pd.Series([0.90, 0.93, 0.96], index=[5, 50, 100])}
    assert findings.assess(claim, steep).verdict.iloc[0] == "agrees"
