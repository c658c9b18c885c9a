"""Paper 002: Parapar, Radlinski. *Towards Unified Metrics for Accuracy and Diversity for Recommender
Systems.* RecSys 2021. Its set-up, and the claims chapter ``03_unified_accuracy_diversity`` tests.

Set-up (:data:`SETUP`), from §5: MovieLens 20M, a 20 % random test split, the 19 genres as aspects;
the ideal ordering of each user's judged test items (§5.1, with the ground-truth aspect weights:
``profile=test``); Exp. 1-2 (§5.2-5.3): 50 swap levels, 50 redundancy levels and 1-10 aspect-swap
levels, one-sided Wilcoxon signed-rank p-values against the ideal; Exp. 3 (§5.4): 50 random shuffles
of the ideal ranking as systems, 50 proportional-by-genre removals, αβ-nDCG at cut-offs 10 and 100;
metric parameters α = 0.005, β = 0.5 (αβ-nDCG), p = 0.99, β = 0.9, α = 0.25 (NRBP), e = 0.05,
α = 0.25 (EU), p = 0.99, e = 0.05 (RBU). What the paper leaves open (``SETUP.options``, the
chapter runs every reading where it moves a result): the ideal ordering's tie-break between equally
rated items (``tie_break``: more or fewer aspects first; Exp. 1-2 run both and a verdict that flips
with it is ``inconclusive``), RBU's normaliser (``rbu_norm``: this package's default ``2^r_max`` or
its authors' per-aspect top grade; the paper names no implementation). Not stated at all (the
project's choices, in ``SETUP.extra``): the removal fractions and the β values of Fig. 4, the
cut-off of Exp. 1-2 (100 here), the relevance threshold of S-Recall / S-RR (4).

Claims (:data:`CLAIMS`), each with the paper's words; every check decides through the verdict rule
of :mod:`recmetrics.meta.findings` with the uncertainty it has:

* Table 1 (one row per metric): the axioms are exact checks — a counterexample (constructed or
  found) or a witness decides a cell; a universal axiom with no counterexample in N scenes is
  *consistent* with ●, and the detail says it rests on a search. EU's row is ``not testable``
  (EU is a reconstruction: Amigó et al. 2018's definition was not found). RBU's row is decided
  under both normalisers and is ``inconclusive`` when they disagree.
* Exp. 1: Kendall's τ of each metric against the true order of the levels, with its bootstrap
  standard error over users (``tau_se``, :func:`~recmetrics.meta.perturbations.rank_correlation`).
* Exp. 2: the shape of the p-value curves (exact p-values).
* Exp. 3: mean τ over the removals with its Monte Carlo standard error; "lower β is more robust"
  compares the β values on the same removals (paired).

Results a check reads (a missing one makes the claim ``inconclusive``, naming it):

``table1``        ``AxiomReport.table`` (metrics × axioms, True / False / None); RBU's row under
                  ``norm=aspect`` too when the chapter checked it (``RBU@10(norm='aspect')``)
``table1_basis``  ``AxiomReport.bases()`` (what each cell rests on; optional, for the wording)
``tau``           :func:`~recmetrics.meta.perturbations.rank_correlation` (``tau_se`` optional)
``pshape``        :func:`~recmetrics.meta.perturbations.pvalue_summary`
``pvalues``       :func:`~recmetrics.meta.perturbations.significance_vs_ideal` (``family, metric, level,
                  pvalue``): "the subtopic metrics behave worse" (§5.3) reads the p-values themselves
``robustness``    :func:`~recmetrics.meta.perturbations.robustness` (one row per removal), or its
                  :func:`~recmetrics.meta.perturbations.robustness_summary` (``tau``, ``se``)

Example::

    >>> from recmetrics.papers import parapar2021 as p
    >>> p.SETUP.datasets, p.SETUP.extra["levels"], p.SETUP.extra["n_systems"]
    (('movielens-20m',), {'swap': 50, 'redundancy': 50, 'aspect': 10}, 50)
    >>> [c.id for c in p.CLAIMS][-2:]
    ['exp3-robust', 'exp3-lower-beta-more-robust']
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ..meta.comparisons import undetermined
from ..meta.firmness import replay_cached
from ..meta.findings import (SE, Claim, Evidence, best_of, compare, decide, holds, holds_all, jointly, not_testable,
                             threshold_reading)
from ..metrics.registry import parse
from .setup import SetUp

__all__ = ["PAPER", "SETUP", "QUICK", "CLAIMS", "TABLE1_CLAIMS", "EXPERIMENT_CLAIMS", "TIE_BREAK_CLAIMS", "CHAPTERS",
           "ASPECT_WEIGHTED", "SUBTOPIC", "PERFECT_TAU", "ROBUST_TAU", "EU_REASON", "paper_claims",
           "notebook_parameters", "deviations"]

PAPER = "002"

#: the metrics that weight aspects by the user's interest (§5.2.4: "the metrics that explicitly
#: consider aspect weight in their formulation")
ASPECT_WEIGHTED = ("ab-nDCG", "EU", "RBU")
#: the subtopic (coverage) metrics, which Exp. 1 finds negatively correlated on swaps (§5.2.4)
SUBTOPIC = ("S-Recall", "S-RR")
#: "perfectly correlated" (§5.2.4) read as τ >= this
PERFECT_TAU = 0.999
#: "a high correlation with itself when a significant proportion of preferences is missing" (§5.4)
#: read as a mean τ >= this at the removal fraction nearest one half
ROBUST_TAU = 0.8
#: why EU's row of Table 1 cannot be verified here
EU_REASON = ("EU is a reconstruction: Amigó et al. 2018's definition of EU (which the paper's row rests on) "
             "was not found, so the row cannot be checked against the paper")

_METRIC_PARAMETERS = {"ab-nDCG": {"alpha": 0.005, "beta": 0.5}, "NRBP": {"alpha": 0.25, "beta": 0.9},
                      "EU": {"alpha": 0.25, "e": 0.05, "p": 0.99}, "RBU": {"e": 0.05, "p": 0.99}}

SETUP = SetUp(
    paper=PAPER,
    citation="Parapar, Radlinski. Towards Unified Metrics for Accuracy and Diversity for Recommender Systems. "
             "RecSys 2021",
    datasets=("movielens-20m",),
    split="holdout",
    folds=1,
    test_size=0.2,
    cutoffs=(10, 100),
    metrics=("ab-nDCG", "a-nDCG", "S-Recall", "S-RR", "NRBP", "EU", "RBU"),
    n_samples=50,
    options={"tie_break": ("more", "fewer"), "rbu_norm": ("scale", "aspect"), "profile": ("test",),
             "systems_drawn": ("per-removal", "once")},
    notes={
        "datasets": "§5: 'the Movielens 20M collection ... 19 genres'",
        "split": "§5: 'the users preferences from a 20% random test split'",
        "cutoffs": "§5.4, Fig. 4: αβ-nDCG at cut-offs 100 and 10 (Fig. 1: @10); Exp. 1-2's cut-off is not "
                   "stated (the chapter uses 100)",
        "metrics": "§4.2 and Figs. 2-3: α-nDCG, S-Recall, S-RR, NRBP, EU, RBU, αβ-nDCG",
        "metric_parameters": "§5.2: 'α = 0.005 and β = 0.5 for αβ-nDCG, p = 0.99 β = 0.9 and α = 0.25 for NRBP, "
                             "e = 0.05 and α = 0.25 for EU and p = 0.99 and e = 0.05 for RBU'",
        "levels": "§5.2.1-5.2.3: 50 swap levels, 50 redundancy levels, 1 to 10 aspect swaps",
        "n_samples": "§5.4: '50 different removals' (the samples of each removal fraction)",
        "n_systems": "§5.4: '50 systems produced by random shuffles of the ideal ranking'",
        "test": "§5.3, footnote 1: one-sided Wilcoxon signed-rank test on the paired per-user values",
        "profile": "§5.1: aspect weights by Eq. 9 over the user's ground truth (profile=test)",
        "tie_break": "§5.1 orders equally rated items 'by number of aspects' without saying in which direction",
        "systems_drawn": "§5.4: '50 systems produced by random shuffles ... 50 different removals', without saying "
                         "whether one set of systems serves every removal or each removal shuffles its own; with one "
                         "set a comparison of β's decides on one draw of systems (its spread over the removals "
                         "never sees that draw's luck), with a set per removal each removal replicates the whole "
                         "experiment; both run (a verdict that flips with it is inconclusive)",
        "rbu_norm": "no implementation named: this package's 2^r_max (scale) or the RBU authors' code's "
                    "per-aspect top grade (aspect)",
        "fractions": "not stated (Fig. 4's x axis); the project uses 10 % .. 90 %",
        "betas": "not stated (Fig. 4 varies β); the project uses 0.25, 0.5, 0.75, 1",
        "threshold": "not stated; S-Recall and S-RR count aspects of items rated >= 4 (the project's)",
        "users": "every user of the test split",
    },
    extra={"levels": {"swap": 50, "redundancy": 50, "aspect": 10}, "n_systems": 50, "n_removals": 50,
           "n_users": None, "test": "wilcoxon, one-sided", "removal": "proportional by category",
           "metric_parameters": _METRIC_PARAMETERS, "fig1_cutoff": 10,
           # the project's choices where the paper is silent (notes say so)
           "exp12_cutoff": 100, "fractions": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
           "betas": (0.25, 0.5, 0.75, 1.0), "axiom_examples": 100, "n_bootstrap": 200},
)

#: the quick profile: the same design with fewer levels, systems and removals, on every test user (as the
#: paper: a sample of 100 users changed Exp. 1-2 verdicts with the split seed, e.g. whether one user ties two
#: swap levels under NRBP); Exp. 3 with 6 removals, so that
#: the spread over the removals has 5 degrees of freedom (with 2, Student's t widens the band 7-fold and
#: Exp. 3's comparisons could decide nothing)
QUICK = SETUP.replace(
    n_samples=2,
    extra={**SETUP.extra, "levels": {"swap": 10, "redundancy": 10, "aspect": 5}, "n_systems": 10,
           "n_removals": 6, "n_users": None, "fractions": (0.2, 0.5, 0.8), "betas": (0.25, 1.0),
           "axiom_examples": 20, "n_bootstrap": 100},
)


def notebook_parameters(profile: str) -> dict[str, dict]:
    """``{notebook stem: {parameter: value}}`` of chapter 03 under ``profile`` (``"paper"``:
    :data:`SETUP`; ``"quick"``: :data:`QUICK`, the notebook's own defaults).

    >>> notebook_parameters("paper")["03_unified_accuracy_diversity"]["swap_levels"]
    50
    """
    from . import _profile

    s = _profile(profile, SETUP, QUICK)
    x = s.extra
    return {"03_unified_accuracy_diversity": {
        "test_size": s.test_size, "n_users": x["n_users"], "swap_levels": x["levels"]["swap"],
        "redundancy_levels": x["levels"]["redundancy"], "aspect_levels": x["levels"]["aspect"],
        "cutoff": x["exp12_cutoff"], "n_systems": x["n_systems"], "n_removals": x["n_removals"],
        "removal_fractions": list(x["fractions"]), "betas": list(x["betas"]),
        "axiom_examples": x["axiom_examples"], "tie_breaks": list(s.options["tie_break"]),
        "system_draws": list(s.options["systems_drawn"]), "n_bootstrap": x["n_bootstrap"],
    }}


def deviations(ran: Mapping[str, Any]) -> list[str]:
    """Where chapter 03's run ``ran`` differs from :data:`SETUP`: :func:`recmetrics.papers.deviations`
    (dataset, split, options, ...) plus the settings only this paper has — ``levels`` (``{family:
    n}``), ``n_systems``, ``n_removals`` and ``n_users`` (a number: a sample of the users).

    >>> deviations({"dataset": "movielens-small", "n_systems": 10, "n_users": 100})  # doctest: +NORMALIZE_WHITESPACE
    ["dataset: movielens-small (the paper's: movielens-20m)", 'Exp. 3 systems: 10 (the paper: 50)',
     'users: a sample of 100 (the paper: every test user)']
    """
    from .setup import deviations as common

    out = common(SETUP, {k: v for k, v in ran.items() if k not in ("levels", "n_systems", "n_removals",
                                                                     "n_users")})
    x = SETUP.extra
    if ran.get("levels") is not None:
        for fam, n in dict(ran["levels"]).items():
            if fam in x["levels"] and int(n) != x["levels"][fam]:
                out.append(f"{fam} levels: {int(n)} (the paper: {x['levels'][fam]})")
    for key, label in (("n_systems", "Exp. 3 systems"), ("n_removals", "Exp. 3 removals")):
        if ran.get(key) is not None and int(ran[key]) != x[key]:
            out.append(f"{label}: {int(ran[key])} (the paper: {x[key]})")
    if ran.get("n_users") is not None:
        out.append(f"users: a sample of {int(ran['n_users'])} (the paper: every test user)")
    return out


# ----------------------------------------------------------------------------------------- helpers
def _base(metric: str) -> str:
    return parse(metric).name


def _param(metric: str, name: str, default=None):
    return dict(parse(metric).params).get(name, default)


def _se_of(row) -> float | None:
    se = row.get("tau_se") if hasattr(row, "get") else None
    return None if se is None or not math.isfinite(float(se)) else float(se)


def _tau_of(tau: pd.DataFrame, family: str, names: Iterable[str], *, any_item: bool | None = None) -> dict:
    """``{metric: (τ, se)}`` of the metrics with a base name in ``names`` on one family; ``any_item``
    selects S-Recall / S-RR's reading (``relevant_only=false``) or the other."""
    names = tuple(names)
    out = {}
    for _, row in tau[tau.family == family].iterrows():
        m = row["metric"]
        if _base(m) in names and (any_item is None or (not _param(m, "relevant_only", True)) == any_item):
            out[m] = (float(row["tau"]), _se_of(row))
            if out[m][1] == 0:
                undetermined(f"τ of {m} the same in every bootstrap resample")
    return out


def _fmt(values: Mapping[str, tuple[float, float | None]]) -> str:
    return ", ".join(f"{m} {t:.2f}" + (f" ± {se:.2f}" if se is not None else "") for m, (t, se) in values.items())


def _se_note(values: Mapping[str, tuple[float, float | None]]) -> str:
    return "" if any(se is not None for _, se in values.values()) else " (no bootstrap: τ read as exact)"


# ----------------------------------------------------------------------------------------- Table 1
def _table1_row(name: str):
    def check(r) -> Evidence:
        from ..meta import axioms as ax

        table = r["table1"]
        basis = r.get("table1_basis")
        rows = [m for m in table.index if _base(m) == name]
        if not rows:
            raise KeyError(f"table1 row {name}")
        paper = ax.PAPER_TABLE1[name]

        def cells(m):
            got = [(a, table.loc[m, a]) for a in table.columns if a in paper and table.loc[m, a] is not None]
            diff = [a for a, v in got if bool(v) != paper[a]]
            searched = ([a for a, v in got if v is True and basis is not None and m in basis.index
                         and basis.loc[m, a] == "search"])
            text = f"{m}: {len(got) - len(diff)} of {len(got)} cells as the paper" + (
                f" (differs on {', '.join(diff)})" if diff else "")
            if searched:
                text += f"; {', '.join(searched)} rest on a search (no counterexample found, not a proof)"
            return diff, got, text

        if name == "EU":
            _, _, text = cells(rows[0])
            return not_testable(f"{EU_REASON}; our form, measured: {text}")
        default = [m for m in rows if _param(m, "norm", "scale") == "scale"] if name == "RBU" else rows[:1]
        other = [m for m in rows if name == "RBU" and _param(m, "norm", "scale") != "scale"]
        diff, got, text = cells((default or rows)[0])
        verdict = "agrees" if not diff else "disagrees"
        if not got:
            return Evidence("inconclusive", None, text + " (no cell applies)")
        if other:
            o_diff, o_got, o_text = cells(other[0])
            o_verdict = "agrees" if not o_diff else "disagrees"
            if o_verdict != verdict:
                return Evidence("inconclusive", float(len(diff)),
                                f"flips with RBU's normaliser, which the paper does not name: {text} → {verdict}; "
                                f"{o_text} (the RBU authors' code) → {o_verdict}")
            text += f"; the same with the authors' normaliser ({o_text})"
        elif name == "RBU":
            text += " (the authors' normaliser, norm=aspect, not checked here)"
        return Evidence(verdict, float(len(diff)), text)
    return check


def _table1_claims() -> list:
    from ..meta import axioms as ax

    out = []
    for name, row in ax.PAPER_TABLE1.items():
        sat = [a for a in ax.AXIOMS if row[a]]
        out.append(Claim(f"table1-{name}", PAPER, f"Table 1 row of {name}",
                         f"satisfies {', '.join(sat) if sat else 'no axiom'}", _table1_row(name)))
    return out


# ----------------------------------------------------------------------------------- Experiment 1
def _swap_subtopic(r) -> Evidence:
    t = _tau_of(r["tau"], "swap", SUBTOPIC)
    if not t:
        raise KeyError("tau of S-Recall/S-RR on swaps")
    defined = {m: v for m, v in t.items() if math.isfinite(v[0])}
    detail = f"τ on swaps: {_fmt(t)}{_se_note(t)}" + (" (nan: the metric gives every level the same mean)"
                                                    if len(defined) < len(t) else "")
    if not defined:
        return Evidence("inconclusive", None, detail)
    verdict = holds_all([tau for tau, _ in defined.values()], "<", 0.0, [se for _, se in defined.values()])
    return Evidence(verdict, max(v[0] for v in defined.values()), detail + "; each τ < 0 beyond 2 se")


def _perfect(r, families, names, what) -> Evidence:
    t = {}
    for fam in families:
        for m, v in _tau_of(r["tau"], fam, names).items():
            t[f"{m} [{fam}]" if len(families) > 1 else m] = v
    if not t:
        raise KeyError(f"tau of {what}")
    verdict = holds_all([tau for tau, _ in t.values()], ">=", PERFECT_TAU, [se for _, se in t.values()])
    return Evidence(verdict, min(v[0] for v in t.values()),
                    f"τ: {_fmt(t)}{_se_note(t)}; each τ ≥ {PERFECT_TAU:g} (read as 'perfect')")


def _swap_perfect(r) -> Evidence:
    return _perfect(r, ["swap"], ("RBU", "NRBP", "EU", "ab-nDCG"), "RBU, NRBP, EU, αβ-nDCG on swaps")


def _ab_all(r) -> Evidence:
    fams = [f for f in ("swap", "redundancy", "aspect") if (r["tau"].family == f).any()]
    return _perfect(r, fams, ("ab-nDCG",), "αβ-nDCG")


def _best(r, family: str, names, group_base: str, higher: bool, what: str) -> Evidence:
    t = _tau_of(r["tau"], family, names)
    group = [m for m in t if _base(m) == group_base]
    if not group or len(t) < 2:
        raise KeyError(f"tau of {what}")
    values = {m: v[0] for m, v in t.items() if math.isfinite(v[0])}
    se = {m: v[1] for m, v in t.items()}
    group = [m for m in group if m in values]
    if not group:
        return Evidence("inconclusive", None, f"τ of {group_base} is undefined: {_fmt(t)}")
    verdict, detail = best_of(values, group, se, higher=higher)
    if not higher:   # best_of's "X beats Y" then means X is lower than Y: say it that way
        detail = detail.replace(" beats ", " is lower than ").replace(" beat(s) every other entry",
                                                                       " lie(s) below every other entry")
    others = [values[m] for m in values if m not in group]
    gap = (values[group[0]] - max(others)) if higher else (values[group[0]] - min(others))
    return Evidence(verdict, gap, f"τ on {family}: {_fmt(t)}{_se_note(t)}; {detail}")


def _redundancy(r) -> Evidence:
    # "RBU and EU rank the systems worse than αβ-nDCG": αβ-nDCG above each of them beyond the noise
    return _best(r, "redundancy", ("EU", "RBU", "ab-nDCG"), "ab-nDCG", True, "EU, RBU, αβ-nDCG on redundancy")


def _aspect_nrbp(r) -> Evidence:
    # "NRBP behaves worse than the metrics that explicitly consider aspect weight": NRBP below each
    return _best(r, "aspect", ("NRBP",) + ASPECT_WEIGHTED, "NRBP", False, "NRBP and the aspect-weighted metrics")


# ----------------------------------------------------------------------------------- Experiment 2
def _pshape_rows(r, keep) -> pd.DataFrame:
    s = r["pshape"]
    rows = s[np.array([keep(f, m) for f, m in zip(s.family, s.metric)], dtype=bool)]
    return rows


def _tolerance(r) -> float:
    return float(r.get("pshape_tolerance", 0.5))


def _ab_monotone(r) -> Evidence:
    rows = _pshape_rows(r, lambda f, m: _base(m) == "ab-nDCG")
    if rows.empty:
        raise KeyError("p-values of ab-nDCG")
    tol = _tolerance(r)
    verdict = jointly(holds(v, "<=", tol) for v in rows.largest_rise)
    return Evidence(verdict, float(rows.largest_rise.max()),
                    "largest climb back of log10 p: " + ", ".join(f"{f} {v:.2f}" for f, v in zip(rows.family,
                                                                                               rows.largest_rise))
                    + f" (monotone: ≤ {tol:g} orders of magnitude; exact p-values)")


def _others_erratic(r) -> Evidence:
    rows = _pshape_rows(r, lambda f, m: f == "aspect" and _base(m) in ("NRBP", "EU", "RBU", "a-nDCG"))
    if rows.empty:
        raise KeyError("p-values on aspect swaps")
    tol = _tolerance(r)
    parts = [(m, holds(v, ">", tol)) for m, v in zip(rows.metric, rows.largest_rise)]
    erratic = [m for m, v in parts if v == "agrees"]
    return Evidence(jointly(v for _, v in parts), float(len(erratic)),
                    f"climbing back by more than {tol:g} orders of magnitude on aspect swaps: {len(erratic)} of "
                    f"{len(parts)} ({', '.join(erratic) or 'none'}); "
                    + ", ".join(f"{m} {v:.2f}" for m, v in zip(rows.metric, rows.largest_rise)))


def _subtopic_worse(r) -> Evidence:
    """"In general, the subtopic metrics behave worse than the other ones" (Fig. 3): each subtopic
    metric's p-values against the ideal, as mean log10 p over every level of every family (higher:
    the degradation is harder to detect), above every other metric's (exact p-values)."""
    p = r["pvalues"]
    if p.empty:
        raise KeyError("pvalues")
    logp = p.assign(logp=np.log10(np.maximum(p["pvalue"].to_numpy(dtype=float), 1e-300)))
    overall = logp.groupby("metric").logp.mean()
    group = [m for m in overall.index if _base(m) in SUBTOPIC]
    if not group or len(group) == len(overall):
        raise KeyError("p-values of the subtopic metrics and of the others")
    verdict, detail = best_of(overall.to_dict(), group)
    fam = logp.groupby(["family", "metric"]).logp.mean().unstack("family")
    per_family = "; ".join(f"{f}: " + ", ".join(f"{m} {v:.2f}" for m, v in fam[f].sort_values(ascending=False).items())
                           for f in fam.columns)
    return Evidence(verdict, float(overall[group].min()),
                    "mean log10 p over the levels (higher: worse at spotting the degradation): "
                    + ", ".join(f"{m} {v:.2f}" for m, v in overall.sort_values(ascending=False).items())
                    + f" — {detail.replace(' beats ', ' is above ')}. Per family: {per_family} (exact p-values)")


# ----------------------------------------------------------------------------------- Experiment 3
@replay_cached
def _robust_frame(r) -> tuple[pd.DataFrame, bool]:
    s = r["robustness"]
    raw = "removal" in s.columns
    return s, raw


def _summary(s: pd.DataFrame, raw: bool) -> pd.DataFrame:
    if raw:
        from ..meta.perturbations import robustness_summary

        return robustness_summary(s)
    out = s.copy()
    if "se" not in out.columns:
        out["se"] = np.nan
    return out


def _robust(r) -> Evidence:
    s, raw = _robust_frame(r)
    summ = _summary(s, raw)
    f = float(summ.fraction.iloc[(summ.fraction - 0.5).abs().argmin()])
    at = summ[summ.fraction == f]
    low = at.loc[at.tau.idxmin()]
    se_txt = "" if not np.isfinite(at.se).any() else f", largest se {np.nanmax(at.se):.3f}"
    # 'high' is the project's reading (ROBUST_TAU), read one step either side; a shortfall counts
    # only beyond Holm over the cut-off x β values
    # each se is estimated from the n removals: an SE on n samples (Student's t; 0 from identical removals: unknown)
    ses = [SE(float(e), n=int(n)) if np.isfinite(e) else float(e) for e, n in zip(at.se, at.n)] \
        if "n" in at.columns else list(at.se)
    verdict, reading = threshold_reading(list(at.tau), ">=", ROBUST_TAU, 0.05, ses, name="'high' τ")
    return Evidence(verdict, float(at.tau.min()),
                    f"mean τ with {f:.0%} of the test ratings removed: {at.tau.min():.4f} (@{int(low.cutoff)}, "
                    f"β = {low.beta:g}) to {at.tau.max():.4f}{se_txt}; {reading} (a value below counts beyond "
                    f"2 Monte Carlo se, Holm over the {len(at)} values)")


def _lower_beta(r) -> Evidence:
    s, raw = _robust_frame(r)
    k = s.cutoff.max()
    s = s[s.cutoff == k]
    betas = sorted(s.beta.unique())
    if len(betas) < 2:
        raise KeyError("robustness at two betas")
    parts, texts = [], []
    if raw:
        # the same removals for every β: compare β's on each removal (paired), mean over the fractions
        per = s.groupby(["beta", "removal"]).tau.mean().unstack("removal")
        means = per.mean(axis=1)
        for lo, hi in zip(betas, betas[1:]):
            d = (per.loc[lo] - per.loc[hi]).dropna()
            # estimated from the removals: an SE on their number (Student's t; a lone removal: unknown)
            se = SE(float(d.std(ddof=1) / np.sqrt(len(d))), n=len(d)) if len(d) > 1 else float("nan")
            c = compare(float(d.mean()), 0.0, se, label=f"β {lo:g} − β {hi:g}")
            parts.append((f"{lo:g} vs {hi:g}", decide([c])))
            texts.append(f"β {lo:g} − β {hi:g}: {d.mean():+.2g}" + (f" ± {se:.2g} over {len(d)} removals"
                                                                      if len(d) > 1 else ", one removal"))
    else:
        summ = _summary(s, raw)
        g = summ.groupby("beta")
        means = g.tau.mean()
        # the fractions share their removals (nested): the mean of their se bounds the se of their mean
        ses = g.se.apply(lambda x: float(np.nanmean(x)) if np.isfinite(x).any() else None)
        for lo, hi in zip(betas, betas[1:]):
            c = compare(means[lo], means[hi], ses[lo], ses[hi], label=f"β {lo:g} − β {hi:g}")
            parts.append((f"{lo:g} vs {hi:g}", decide([c])))
            texts.append(f"β {lo:g} − β {hi:g}: {means[lo] - means[hi]:+.2g}")
    steps = np.diff(means.reindex(betas).to_numpy())
    return Evidence(jointly(v for _, v in parts), float(-steps.max()),
                    f"cut-off {int(k)}, mean τ over the fractions by β: "
                    + ", ".join(f"{b:g} {v:.4f}" for b, v in means.reindex(betas).items())
                    + "; " + "; ".join(texts)
                    + (" (paired over the same removals)" if raw else "") + "; each lower β above the next beyond "
                    "2 se")


EXPERIMENT_CLAIMS = [
    Claim("exp1-swap-subtopic-negative", PAPER,
          "Exp. 1, swaps: S-Recall and S-RR rank the systems in negative correlation",
          "Fig. 2 left; §5.2.4", _swap_subtopic),
    Claim("exp1-swap-perfect", PAPER,
          "Exp. 1, swaps: RBU, NRBP, EU and αβ-nDCG are perfectly correlated (τ = 1)",
          "Fig. 2 left; §5.2.4", _swap_perfect),
    Claim("exp1-redundancy-eu-rbu-worse", PAPER,
          "Exp. 1, redundancy: RBU and EU rank the systems worse than αβ-nDCG",
          "Fig. 2 centre; §5.2.4", _redundancy),
    Claim("exp1-aspect-nrbp-worse", PAPER,
          "Exp. 1, aspect swaps: NRBP ranks the systems worse than the aspect-weighted metrics (αβ-nDCG, EU, RBU)",
          "Fig. 2 right; §5.2.4", _aspect_nrbp),
    Claim("exp1-ab-ndcg-perfect", PAPER,
          "Exp. 1: αβ-nDCG orders the perturbed systems correctly (τ = 1) in all three families",
          "Fig. 2; §5.5", _ab_all),
    Claim("exp2-ab-ndcg-monotone", PAPER,
          "Exp. 2: αβ-nDCG's p-values fall monotonically with the perturbation level",
          "Fig. 3; §5.3", _ab_monotone),
    Claim("exp2-others-erratic-on-aspect-swaps", PAPER,
          "Exp. 2, aspect swaps: only αβ-nDCG behaves well; NRBP, EU, RBU and α-nDCG are erratic",
          "Fig. 3 right; §5.3", _others_erratic),
    Claim("exp2-subtopic-worse", PAPER,
          "Exp. 2: the subtopic metrics (S-Recall, S-RR) spot the degradations worse than the other metrics",
          "Fig. 3; §5.3: 'In general, the subtopic metrics behave worse than the other ones'", _subtopic_worse),
    Claim("exp3-robust", PAPER,
          f"Exp. 3: αβ-nDCG keeps a high self-correlation (read here: τ >= {ROBUST_TAU:g}) with half the "
          "ratings missing, at both cut-offs", "Fig. 4; §5.4", _robust),
    Claim("exp3-lower-beta-more-robust", PAPER,
          "Exp. 3, cut-off 100: the lower β, the higher the correlation",
          "Fig. 4 left; §5.4: 'In the case of cutoff 100 (left), the lower the β, the higher the correlation of "
          "rankings'", _lower_beta),
]

TABLE1_CLAIMS = _table1_claims()
CLAIMS = TABLE1_CLAIMS + EXPERIMENT_CLAIMS
#: the claims whose results depend on the ideal ordering's tie-break (Exps. 1-2): a chapter assesses
#: them under every tie-break (:func:`recmetrics.papers.assess_choices`, ``choice="tie_break"``)
TIE_BREAK_CLAIMS = [c for c in EXPERIMENT_CLAIMS if c.id.startswith(("exp1-", "exp2-"))]
#: the claims each chapter tests
CHAPTERS = {"03_unified_accuracy_diversity": CLAIMS}


def paper_claims() -> list:
    """The claims of Parapar & Radlinski (2021) chapter 03 tests (a new list of :data:`CLAIMS`).

    Readings of the paper's words, fixed here: "perfectly correlated" is τ >= :data:`PERFECT_TAU`;
    "high self-correlation with half the ratings missing" is a mean τ >= :data:`ROBUST_TAU` at the
    removal fraction nearest 0.5, at every cut-off and β; "monotone" p-values are
    :func:`~recmetrics.meta.perturbations.pvalue_summary`'s climb-back of at most 0.5 orders of
    magnitude (``results["pshape_tolerance"]`` overrides it); a NaN τ (a metric giving every level
    the same mean) is left out of the subtopic claim, which is inconclusive when every τ is NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.meta import findings
    >>> claims = paper_claims()
    >>> len(claims), claims[0].id, claims[-1].id
    (17, 'table1-a-nDCG', 'exp3-lower-beta-more-robust')
    >>> tau = pd.DataFrame({"family": "swap", "metric": ["S-Recall@100", "S-RR"], "tau": [-0.6, -0.2],
    ...                     "n_systems": 51, "tau_se": [0.05, 0.2]})
    >>> out = findings.assess(claims, {"tau": tau}).set_index("id")
    >>> out.loc["exp1-swap-subtopic-negative", "verdict"]     # S-RR's -0.2 is within 2 se of 0
    'inconclusive'
    >>> out.loc["exp3-robust", "verdict"]                    # no robustness results given
    'inconclusive'
    """
    return list(CLAIMS)
