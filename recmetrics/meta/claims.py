"""The claims of papers 003 (RecSys 2018) and 000 (IRJ 2020) that chapters 05-07 test, as data.

Each :class:`~recmetrics.meta.findings.Claim` states the paper's words and evidence once; its
check reads the chapter's computed ``results`` and returns our number and verdict. The results a
check may read (a missing one makes the claim ``inconclusive``, naming it):

``dp``                Series metric -> DP (sum of p-values, lower = more discriminative) at 100
``robustness``        :class:`~recmetrics.meta.robustness.Robustness`, arithmetic mean
``robustness_geo``    the same with the geometric mean
``tau_geo``           τ matrix among the metrics' geometric orderings (000 Fig. 9)
``mean_tau``          per metric: τ between its arithmetic and geometric orderings (000 §7.1)
``cutoff_tau``        τ matrix among the cut-offs of one metric (003 Fig. 1)
``cutoff_robustness`` Series cut-off -> mean τ over reduced sizes (003 Figs. 2-3)
``cutoff_dp``         Series cut-off -> DP (003 Fig. 4)
``cutoff_robustness_se`` Series cut-off -> its Monte Carlo standard error (optional)
``n_systems``         number of systems ranked; fewer than :data:`MIN_SYSTEMS` -> inconclusive

Robustness values are means over random samples. A difference smaller than :data:`NOISE_SE`
standard errors of the difference (:meth:`Robustness.area_se`) cannot order two metrics, so a
verdict that rests on such a difference is ``inconclusive`` (the paper does not say how it
separated close curves; ``NOISE_SE = 0`` gives the plain comparison). Deterministic scenarios
(popular items, large users: one sample) have no noise estimate and are compared as they are.

Metric names are the study's base names (``P``, ``nDCG``, ``RR`` for MRR, ``AP`` for MAP, ...).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from .findings import Claim, Evidence, agrees_if

__all__ = ["MIN_SYSTEMS", "NOISE_SE", "CUTOFF_CLAIMS", "METRIC_CLAIMS", "GEOMETRIC_CLAIMS", "robustness_scores", "dp_summary"]

#: below this many systems a ranking τ moves in steps too coarse to support a verdict
MIN_SYSTEMS = 5
#: differences of mean τ within this many standard errors are ties (Monte Carlo noise)
NOISE_SE = 2.0


def _within_noise(gap: float, *se: float) -> float | None:
    """The noise band ``NOISE_SE * sqrt(sum se²)`` when ``|gap|`` lies inside it, else None."""
    se = [x for x in se if x is not None and np.isfinite(x)]
    if not se or NOISE_SE <= 0:
        return None
    band = NOISE_SE * float(np.sqrt(np.sum(np.square(se))))
    return band if abs(gap) < band else None


def _few(results: Mapping[str, Any]) -> Evidence | None:
    n = results.get("n_systems")
    if n is not None and n < MIN_SYSTEMS:
        return Evidence("inconclusive", None, f"only {n} systems ranked (need {MIN_SYSTEMS}+ for a τ verdict)")
    return None


def _base(name: str) -> str:
    return str(name).split("@")[0]


def robustness_scores(rob, scenario: str) -> pd.Series:
    """Mean τ over the reduced sizes of one scenario per metric (base names), best first."""
    area = rob.area(scenario)
    area.index = [_base(m) for m in area.index]
    return area.sort_values(ascending=False)


def _rank_of(series: pd.Series, metric: str, ascending: bool) -> int:
    """1 + how many metrics are strictly better (ties share the better rank)."""
    v = series[metric]
    return 1 + int((series < v).sum() if ascending else (series > v).sum())


def _top(key: str, metric: str, what: str, *, lowest: bool):
    def check(results):
        few = _few(results)
        if few:
            return few
        s = results[key]
        s = pd.Series(s).rename(index=_base)
        rank = _rank_of(s, metric, ascending=lowest)
        best = s.idxmin() if lowest else s.idxmax()
        tied = [m for m in s.index if m != metric and s[m] == s[metric]]
        if rank == 1 and tied:  # e.g. every p-value at the Monte Carlo floor: the test cannot separate them
            return Evidence("inconclusive", rank, f"{metric} shares the best {what} ({s[metric]:.4g}) with "
                                                  f"{', '.join(tied)}")
        return agrees_if(rank == 1, rank, f"{metric} ranks {rank} of {len(s)} by {what} (best: {best}, "
                                          f"{s[best]:.4g}; {metric}: {s[metric]:.4g})")
    return check


def _most_robust(metric: str, scenario: str, key: str = "robustness"):
    def check(results):
        few = _few(results)
        if few:
            return few
        s = robustness_scores(results[key], scenario)
        se = results[key].area_se(scenario).rename(index=_base)
        rank = _rank_of(s, metric, ascending=False)
        detail = (f"{metric} ranks {rank} of {len(s)} by mean τ under {scenario} "
                  f"(best: {s.index[0]} {s.iloc[0]:.3f}; {metric} {s[metric]:.3f})")
        rival = s.drop(metric).idxmax()  # the metric it must beat (or that beats it)
        band = _within_noise(s[metric] - s[rival], se.get(metric), se.get(rival))
        if band is not None:
            return Evidence("inconclusive", rank, f"{detail}; {metric} vs {rival} differ by "
                                                  f"{s[metric] - s[rival]:+.3f}, within the noise band ±{band:.3f}")
        return agrees_if(rank == 1, rank, detail)
    return check


def _least_robust(metrics: tuple[str, ...], key: str, scenarios: tuple[str, ...]):
    def check(results):
        few = _few(results)
        if few:
            return few
        rob = results[key]
        s = pd.concat([robustness_scores(rob, sc) for sc in scenarios], axis=1).mean(axis=1).sort_values()
        bottom = list(s.index[: len(metrics) + 1])
        hit = [m for m in metrics if m in bottom]
        return agrees_if(len(hit) == len(metrics), float(np.mean([_rank_of(s, m, True) for m in metrics])),
                         f"least robust (mean τ over {', '.join(scenarios)}): {', '.join(bottom)}; "
                         f"{', '.join(f'{m} {s[m]:.3f}' for m in metrics)}")
    return check


def _geo_beats_arith(check_metrics=("P", "nDCG"), scenario="large-users"):
    def check(results):
        few = _few(results)
        if few:
            return few
        a = robustness_scores(results["robustness"], scenario)
        g = robustness_scores(results["robustness_geo"], scenario)
        diff = {m: g[m] - a[m] for m in check_metrics}
        return agrees_if(all(d > 0 for d in diff.values()), float(min(diff.values())),
                         "mean τ geometric − arithmetic under " + scenario + ": "
                         + ", ".join(f"G{m} {g[m]:.3f} vs {m} {a[m]:.3f}" for m in check_metrics))
    return check


def _poor_correlation(metrics=("F1", "RR")):
    def check(results):
        few = _few(results)
        if few:
            return few
        tau = results["tau_geo"].rename(index=_base, columns=_base)
        others = [m for m in tau.index if m not in metrics]
        off = ~np.eye(len(tau), dtype=bool)
        rest = tau.loc[others, others].to_numpy()[off[: len(others), : len(others)]]
        theirs = tau.loc[list(metrics), others].to_numpy().ravel()
        return agrees_if(np.nanmean(theirs) < np.nanmean(rest), float(np.nanmean(theirs)),
                         f"mean τ of G{'/G'.join(metrics)} with the others {np.nanmean(theirs):.3f} vs "
                         f"{np.nanmean(rest):.3f} among the others")
    return check


def _arith_geo(metrics=("F1", "RR")):
    def check(results):
        few = _few(results)
        if few:
            return few
        t = results["mean_tau"]["tau"].rename(index=_base)
        rest = t.drop(list(metrics))
        return agrees_if(t[list(metrics)].max() < rest.median(), float(rest.median()),
                         f"τ(arithmetic, geometric): median of the others {rest.median():.3f}; "
                         + ", ".join(f"{m} {t[m]:.3f}" for m in metrics))
    return check


def _deeper(key: str, what: str, larger_better: bool):
    def check(results):
        few = _few(results)
        if few:
            return few
        s = pd.Series(results[key]).sort_index()
        if len(s) < 3:
            return Evidence("inconclusive", None, f"only {len(s)} cut-offs")
        from scipy.stats import spearmanr

        rho = float(spearmanr(s.index, s.to_numpy()).statistic)
        rho = rho if larger_better else -rho
        detail = (f"Spearman ρ between cut-off and {what} (sign: + = deeper is better) "
                  f"{rho:.2f}; @{s.index[0]} {s.iloc[0]:.4g}, @{s.index[-1]} {s.iloc[-1]:.4g}")
        se = results.get(key + "_se")
        if se is not None:
            se = pd.Series(se).sort_index()
            band = _within_noise(s.max() - s.min(), float(se.loc[s.idxmax()]), float(se.loc[s.idxmin()]))
            if band is not None:
                return Evidence("inconclusive", rho, f"{detail}; the cut-offs' values span {s.max() - s.min():.4f}, "
                                                     f"within the noise band ±{band:.4f}")
        return agrees_if(rho > 0, rho, detail)
    return check


def _cutoffs_correlate(results):
    few = _few(results)
    if few:
        return few
    t = results["cutoff_tau"].to_numpy()
    off = t[~np.eye(len(t), dtype=bool)]
    return agrees_if(np.nanmedian(off) >= 0.85, float(np.nanmedian(off)),
                     f"median τ between cut-offs {np.nanmedian(off):.3f} (lowest {np.nanmin(off):.3f})")


CUTOFF_CLAIMS = [
    Claim("cutoffs-correlate", "003", "System rankings change little across cut-offs 5..100",
          "§6: most τ above 0.85 on MovieLens 1M, lowest 0.76 (P@5 vs P@100)", _cutoffs_correlate),
    Claim("deeper-cutoffs-robust", "003", "Deeper cut-offs are more robust to sparsity",
          "§6, Fig. 2: τ under rating removal grows with the cut-off of nDCG",
          _deeper("cutoff_robustness", "mean τ under rating removal", True)),
    Claim("deeper-cutoffs-dp", "003", "Deeper cut-offs are more discriminative",
          "§6, Fig. 4: cut-offs above 50 give lower p-value curves",
          _deeper("cutoff_dp", "DP (sum of p-values)", False)),
]

METRIC_CLAIMS = [
    Claim("dp-ndcg-top", "000", "nDCG has the highest discriminative power",
          "§6.2, Table 3: nDCG@100 first on MovieLens and LibraryThing, fifth on BeerAdvocate",
          _top("dp", "nDCG", "DP (lower is better)", lowest=True)),
    Claim("p-most-robust-ratings", "000", "Precision is the most robust to rating sparsity",
          "§6.3, Fig. 3; 003 §7: P keeps the highest τ as ratings are removed", _most_robust("P", "ratings")),
    Claim("p-most-robust-popular", "000", "Precision is the most robust to removing popular items",
          "§6.3, Fig. 6: 'Precision is the best metric in terms of robustness to popularity'",
          _most_robust("P", "popular-items")),
    Claim("mrr-err-least-robust", "000", "MRR and ERR are among the least robust metrics",
          "§6.3: 'MRR and ERR are found to rank among the least robust metrics (except in LibraryThing)'",
          _least_robust(("RR", "ERR"), "robustness", ("ratings", "random-items", "popular-items", "random-users"))),
]

GEOMETRIC_CLAIMS = [
    Claim("gf1-gmrr-poor-correlation", "000", "GF1 and GMRR correlate poorly with the other geometric metrics",
          "§7.1, Fig. 9: GF1 and GMRR low τ with every metric but each other", _poor_correlation()),
    Claim("arith-geo-agree-but-f1-rr", "000", "Most metrics rank systems alike under both means, F1 and MRR do not",
          "§7.1: strong arithmetic-geometric correlation (e.g. MAP-GMAP) except F1 and MRR", _arith_geo()),
    Claim("gf1-gmrr-least-robust", "000", "GF1 and GMRR are the least robust geometric metrics",
          "§7.2, Figs. 10-14: 'In all the scenarios, GF1 and GMRR are now the least robust metrics'",
          _least_robust(("F1", "RR"), "robustness_geo", ("ratings", "random-items", "random-users"))),
    Claim("gp-gndcg-large-users", "000", "GP and GnDCG are more robust than P and nDCG when large users are removed",
          "§7.2, Fig. 14 vs Fig. 8", _geo_beats_arith()),
]


def dp_summary(dp_results: Mapping[str, Any], dataset: str = "dataset") -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    """From ``rm.meta.discriminative_power``'s ``{metric: result}``: the DP per metric (a Series),
    the tidy p-value curves (``metric, pair, p``; p sorted decreasing, Sakai's curve) and Table 3's
    layout (rows metrics, columns DP, its rank (1 = most discriminative), share significant, median p)."""
    dp = pd.Series({m: float(r.dp) for m, r in dp_results.items()}, name=dataset)
    curves = pd.concat([pd.DataFrame({"metric": m, "pair": np.arange(1, len(r.curve) + 1),
                                      "p": np.sort(np.asarray(r.curve, dtype=float))[::-1]})
                        for m, r in dp_results.items()], ignore_index=True)
    table = pd.DataFrame({"DP": dp, "rank": dp.rank(method="min").astype(int),
                          "share significant": pd.Series({m: float(r.share_significant) for m, r in dp_results.items()}),
                          "median p": pd.Series({m: float(r.median_p) for m, r in dp_results.items()})})
    table.columns = pd.MultiIndex.from_product([[dataset], table.columns])
    return dp, curves, table
