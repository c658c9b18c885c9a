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
