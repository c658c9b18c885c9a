"""The claims of Parapar & Radlinski (RecSys 2021) that notebook 03 tests, as data for :mod:`recmetrics.meta.findings`.

:func:`paper_claims` lists one :class:`~recmetrics.meta.findings.Claim` per row of Table 1 (the
axioms each metric satisfies) and per claim of Exps. 1-3 (Secs. 5.2-5.4, Figs. 2-4); each claim's
check computes its verdict from the results of :func:`~.scoring.rank_correlation`,
:func:`~.scoring.pvalue_summary`, :func:`~.incompleteness.robustness_summary` and
``axioms.AxiomReport.table``. The module depends only on the metric registry and the family names
(and, when the claims are built, on :mod:`recmetrics.meta.axioms` and :mod:`recmetrics.meta.findings`).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ...metrics.registry import parse
from .families import FAMILIES

#: the metrics that weight aspects by the user's interest (Sec. 5.2.4: "the metrics that explicitly
#: consider aspect weight in their formulation")
ASPECT_WEIGHTED = ("ab-nDCG", "EU", "RBU")
#: the subtopic (coverage) metrics, which Exp. 1 finds negatively correlated on swaps (Sec. 5.2.4)
SUBTOPIC = ("S-Recall", "S-RR")

__all__ = ["ASPECT_WEIGHTED", "SUBTOPIC", "paper_claims"]


def _base(metric: str) -> str:
    return parse(metric).name


def _relevant_only(metric: str) -> bool:
    return dict(parse(metric).params).get("relevant_only", True)


def _tau_of(tau: pd.DataFrame, family: str, names: Iterable[str], *, any_item: bool | None = None) -> dict:
    rows = tau[tau.family == family]
    out = {}
    for m, t in zip(rows.metric, rows.tau):
        if _base(m) in names and (any_item is None or _relevant_only(m) != any_item):
            out[m] = float(t)
    return out


def _fmt(values: dict) -> str:
    return ", ".join(f"{m} {v:.2f}" for m, v in values.items())


def paper_claims() -> list:
    """The claims of Parapar & Radlinski (2021) that notebook 03 tests, as :class:`findings.Claim`.

    The checks read ``results``: ``"table1"`` (``axioms.AxiomReport.table``), ``"tau"``
    (:func:`rank_correlation`), ``"pshape"`` (:func:`pvalue_summary`) and ``"robustness"``
    (:func:`robustness_summary`); a missing key makes a claim inconclusive.

    Readings of the paper's words, fixed here: "perfectly correlated" is τ >= 0.999; "high
    self-correlation with half the ratings missing" is a mean τ >= 0.8 at the removal fraction
    nearest 0.5, at every cut-off and β; "monotone" p-values are :func:`pvalue_summary`'s
    ``monotone``; a NaN τ (a metric giving every level the same mean) is left out of the subtopic
    claim, which is inconclusive when every τ is NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.meta import findings
    >>> claims = paper_claims()
    >>> len(claims), claims[0].id, claims[-1].id
    (16, 'table1-a-nDCG', 'exp3-lower-beta-more-robust')
    >>> tau = pd.DataFrame({"family": "swap", "metric": ["S-Recall@100", "S-RR"], "tau": [-0.6, -0.2],
    ...                     "n_systems": 51})
    >>> out = findings.assess(claims, {"tau": tau}).set_index("id")
    >>> out.loc["exp1-swap-subtopic-negative", ["verdict", "our_evidence"]].tolist()
    ['agrees', 'τ on swaps: S-Recall@100 -0.60, S-RR -0.20']
    >>> out.loc["exp3-robust", "verdict"]                    # no robustness results given
    'inconclusive'
    """
    from .. import axioms as ax
    from ..findings import Claim, Evidence, agrees_if

    claims = []

    def table_row(name: str):
        def check(r):
            table = r["table1"]
            rows = [m for m in table.index if _base(m) == name]
            if not rows:
                raise KeyError(f"table1 row {name}")
            m = rows[0]
            cells = [(a, table.loc[m, a]) for a in table.columns if table.loc[m, a] is not None]
            diff = [a for a, v in cells if bool(v) != ax.PAPER_TABLE1[name][a]]
            return agrees_if(not diff, float(len(diff)),
                             f"{m}: {len(cells) - len(diff)} of {len(cells)} cells as the paper"
                             + (f"; differs on {', '.join(diff)}" if diff else ""))
        return check

    for name, row in ax.PAPER_TABLE1.items():
        sat = [a for a in ax.AXIOMS if row[a]]
        claims.append(Claim(f"table1-{name}", "002", f"Table 1 row of {name}",
                            f"satisfies {', '.join(sat) if sat else 'no axiom'}", table_row(name)))

    def swap_subtopic(r):
        t = _tau_of(r["tau"], "swap", SUBTOPIC)
        if not t:
            raise KeyError("tau of S-Recall/S-RR on swaps")
        defined = {m: v for m, v in t.items() if np.isfinite(v)}
        detail = f"τ on swaps: {_fmt(t)}" + (" (nan: the metric gives every level the same mean)"
                                              if len(defined) < len(t) else "")
        if not defined:
            return Evidence("inconclusive", None, detail)
        neg = [v for v in defined.values() if v < 0]
        return agrees_if(len(neg) == len(defined), min(defined.values()), detail)

    claims.append(Claim("exp1-swap-subtopic-negative", "002",
                        "Exp. 1, swaps: S-Recall and S-RR rank the systems in negative correlation",
                        "Fig. 2 left; Sec. 5.2.4", swap_subtopic))

    def swap_perfect(r):
        t = _tau_of(r["tau"], "swap", ("RBU", "NRBP", "EU", "ab-nDCG"))
        if not t:
            raise KeyError("tau on swaps")
        return agrees_if(min(t.values()) >= 0.999, min(t.values()), f"τ on swaps: {_fmt(t)}")

    claims.append(Claim("exp1-swap-perfect", "002",
                        "Exp. 1, swaps: RBU, NRBP, EU and αβ-nDCG are perfectly correlated (τ = 1)",
                        "Fig. 2 left; Sec. 5.2.4", swap_perfect))

    def redundancy(r):
        t = _tau_of(r["tau"], "redundancy", ("EU", "RBU", "ab-nDCG"))
        eu_rbu = {m: v for m, v in t.items() if _base(m) in ("EU", "RBU")}
        ab = [v for m, v in t.items() if _base(m) == "ab-nDCG"]
        if not eu_rbu or not ab:
            raise KeyError("tau on redundancy")
        return agrees_if(max(eu_rbu.values()) < ab[0], max(eu_rbu.values()) - ab[0],
                         f"τ on redundancy: {_fmt(t)}")

    claims.append(Claim("exp1-redundancy-eu-rbu-worse", "002",
                        "Exp. 1, redundancy: RBU and EU rank the systems worse than αβ-nDCG",
                        "Fig. 2 centre; Sec. 5.2.4", redundancy))

    def aspect_nrbp(r):
        t = _tau_of(r["tau"], "aspect", ("NRBP",) + ASPECT_WEIGHTED)
        nrbp = [v for m, v in t.items() if _base(m) == "NRBP"]
        weighted = [v for m, v in t.items() if _base(m) in ASPECT_WEIGHTED]
        if not nrbp or not weighted:
            raise KeyError("tau on aspect swaps")
        return agrees_if(nrbp[0] < min(weighted), nrbp[0] - min(weighted), f"τ on aspect swaps: {_fmt(t)}")

    claims.append(Claim("exp1-aspect-nrbp-worse", "002",
                        "Exp. 1, aspect swaps: NRBP ranks the systems worse than the aspect-weighted "
                        "metrics (αβ-nDCG, EU, RBU)", "Fig. 2 right; Sec. 5.2.4", aspect_nrbp))

    def ab_all(r):
        tau = r["tau"]
        t = {f: v for f in FAMILIES for m, v in _tau_of(tau, f, ("ab-nDCG",)).items()}
        if not t:
            raise KeyError("tau of ab-nDCG")
        return agrees_if(min(t.values()) >= 0.999, min(t.values()),
                         "αβ-nDCG τ: " + ", ".join(f"{f} {v:.2f}" for f, v in t.items()))

    claims.append(Claim("exp1-ab-ndcg-perfect", "002",
                        "Exp. 1: αβ-nDCG orders the perturbed systems correctly (τ = 1) in all three families",
                        "Fig. 2; Sec. 5.5", ab_all))

    def ab_monotone(r):
        s = r["pshape"]
        rows = s[np.array([_base(m) == "ab-nDCG" for m in s.metric], dtype=bool)]
        if rows.empty:
            raise KeyError("p-values of ab-nDCG")
        bad = rows[~rows.monotone.astype(bool)]
        return agrees_if(bad.empty, float(rows.largest_rise.max()),
                         "largest climb back of log10 p: " + ", ".join(
                             f"{f} {v:.2f}" for f, v in zip(rows.family, rows.largest_rise)))

    claims.append(Claim("exp2-ab-ndcg-monotone", "002",
                        "Exp. 2: αβ-nDCG's p-values fall monotonically with the perturbation level",
                        "Fig. 3; Sec. 5.3", ab_monotone))

    def others_erratic(r):
        s = r["pshape"]
        rows = s[(s.family == "aspect").to_numpy() & np.array([_base(m) in ("NRBP", "EU", "RBU", "a-nDCG") for m in s.metric], dtype=bool)]
        if rows.empty:
            raise KeyError("p-values on aspect swaps")
        erratic = rows[~rows.monotone.astype(bool)]
        return agrees_if(len(erratic) == len(rows), float(len(erratic)),
                         f"non-monotone on aspect swaps: {len(erratic)} of {len(rows)} "
                         f"({', '.join(erratic.metric) or 'none'})")

    claims.append(Claim("exp2-others-erratic-on-aspect-swaps", "002",
                        "Exp. 2, aspect swaps: only αβ-nDCG behaves well; NRBP, EU, RBU and α-nDCG are erratic",
                        "Fig. 3 right; Sec. 5.3", others_erratic))

    def robust(r):
        s = r["robustness"]
        f = float(s.fraction.iloc[(s.fraction - 0.5).abs().argmin()])
        at = s[s.fraction == f]
        return agrees_if(float(at.tau.min()) >= 0.8, float(at.tau.min()),
                         f"mean τ with {f:.0%} of the test ratings removed: {at.tau.min():.2f} to {at.tau.max():.2f}")

    claims.append(Claim("exp3-robust", "002",
                        "Exp. 3: αβ-nDCG keeps a high self-correlation (read here: τ >= 0.8) with half the "
                        "ratings missing, at both cut-offs", "Fig. 4; Sec. 5.4", robust))

    def lower_beta(r):
        s = r["robustness"]
        s100 = s[s.cutoff == s.cutoff.max()]
        by_beta = s100.groupby("beta").tau.mean().sort_index()
        if len(by_beta) < 2:
            raise KeyError("robustness at two betas")
        steps = np.diff(by_beta.to_numpy())
        return agrees_if(bool((steps < 0).all()), float(-steps.min()),
                         f"cut-off {int(s100.cutoff.max())}, mean τ over the fractions by β: "
                         + ", ".join(f"{b:g} {v:.4f}" for b, v in by_beta.items()))

    claims.append(Claim("exp3-lower-beta-more-robust", "002",
                        "Exp. 3, cut-off 100: the lower β, the higher the correlation",
                        "Fig. 4 left; Sec. 5.4", lower_beta))
    return claims
