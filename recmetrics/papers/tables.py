"""The tables the chapters of papers 003 and 000 show, from the meta-evaluation results.

* :func:`dp_summary` — Table 3's layout (DP per metric, its Monte Carlo standard error, whether
  it sits at the Monte Carlo floor, rank, share significant, median p) and the p-value curves.
* :func:`dp_evidence` — the ``dp``, ``dp_se`` and ``dp_floor`` entries a DP claim reads.
* :func:`robustness_scores` — mean τ over a scenario's reduced sizes per metric, with its se.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

__all__ = ["dp_summary", "dp_evidence", "robustness_scores"]


def dp_evidence(dp_results: Mapping[str, Any], prefix: str = "dp", key=lambda m: m) -> dict:
    """``{prefix: DP per entry, prefix_se: its Monte Carlo se, prefix_floor: the DP of an entry whose
    every pair is at the floor}`` from ``rm.meta.discriminative_power``'s ``{name: result}``;
    ``key`` maps a result's name to the index used (e.g. the cut-off of ``"nDCG@10"``)."""
    res = {key(m): r for m, r in dp_results.items()}
    floors = {float(r.dp_floor) for r in res.values()}
    return {prefix: pd.Series({m: float(r.dp) for m, r in res.items()}),
            prefix + "_se": pd.Series({m: float(r.dp_se) for m, r in res.items()}),
            prefix + "_floor": floors.pop() if len(floors) == 1 else float("nan")}


def dp_summary(dp_results: Mapping[str, Any], dataset: str = "dataset") -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    """From ``rm.meta.discriminative_power``'s ``{metric: result}``: the DP per metric (a Series),
    the tidy p-value curves (``metric, pair, p``; p sorted decreasing, Sakai's curve) and Table 3's
    layout (rows metrics; columns DP, its Monte Carlo se, ``at floor`` (every pair at 1/(B+1): DP
    only bounds the metric's power), rank (1 = most discriminative), share significant, median p)."""
    dp = pd.Series({m: float(r.dp) for m, r in dp_results.items()}, name=dataset)
    curves = pd.concat([pd.DataFrame({"metric": m, "pair": np.arange(1, len(r.curve) + 1),
                                      "p": np.sort(np.asarray(r.curve, dtype=float))[::-1]})
                        for m, r in dp_results.items()], ignore_index=True)
    extra = {}
    if all(hasattr(r, "dp_se") for r in dp_results.values()):
        extra = {"MC se": pd.Series({m: float(r.dp_se) for m, r in dp_results.items()}),
                 "at floor": pd.Series({m: bool(r.at_floor) for m, r in dp_results.items()})}
    table = pd.DataFrame({"DP": dp, **extra, "rank": dp.rank(method="min").astype(int),
                          "share significant": pd.Series({m: float(r.share_significant) for m, r in dp_results.items()}),
                          "median p": pd.Series({m: float(r.median_p) for m, r in dp_results.items()})})
    table.columns = pd.MultiIndex.from_product([[dataset], table.columns])
    return dp, curves, table


def robustness_scores(rob, scenario: str, with_se: bool = False):
    """Mean τ over the reduced sizes of one scenario per metric (base names), best first; with
    ``with_se`` a DataFrame with its Monte Carlo standard error (NaN with one sample per size)."""
    from .checks import by_base

    area = by_base(rob.area(scenario)).sort_values(ascending=False)
    if not with_se:
        return area
    return pd.DataFrame({"mean tau": area, "se": by_base(rob.area_se(scenario)).reindex(area.index)})
