"""Paper 001: Schröder, Thiele, Lehner. *Setting Goals and Choosing Metrics for Recommender System
Evaluations.* UCERSTI 2 workshop, RecSys 2011. Its set-up, and the claims chapter ``04_choosing_a_metric``
tests.

Set-up (:data:`SETUP`): the paper runs no experiment on data; it illustrates its metrics on rankings
of **ten items**, each relevant or irrelevant (§4-5): Figure 1 cuts one ranking at every length
k = 1..10; Figures 2-4 score a **top-4 list** ("a four out of ten recommendation list") — one
relevant item moved from rank 1 to 10 (Fig. 2), 1 to 9 relevant items for a perfect recommender and
its inverse (Fig. 3), a block of three relevant items moved down (Fig. 4). The ranking of Figure 1
is an image: :data:`recmetrics.meta.guidelines.FIGURE1_RANKING` is the project's choice
(``SETUP.notes``). The catalogue-scale identities (:data:`CATALOGUE_CLAIMS`) are the project's
derivation, checked on a real run of the chapter's dataset; the paper states none of them, so they
carry the paper key :data:`PROJECT` and are not among :data:`CLAIMS`.

Claims (:data:`CLAIMS` = :data:`TOY_CLAIMS`) quote the paper (§4.2, §4.3, §5.1, §5.2) about its
figures; every check decides through the verdict rule of :mod:`recmetrics.meta.findings`. The toy
values are exact (no sampling), so a comparison clears only the rule's floating-point tolerance —
a tie within it is not a difference; the identities are means over users, compared with their
standard error. The results a check reads (a missing one makes the claim ``inconclusive``,
naming it):

``figure1`` .. ``figure4``  the tidy tables of :func:`recmetrics.meta.guidelines.figure1` .. ``figure4``
                            (columns ``metric`` — the label, e.g. ``"precision"``, ``"LAUC"`` —, ``value``
                            and the figure's parameter: ``k``, ``position``, ``n_relevant``/``recommender``)
``identities``              :func:`recmetrics.meta.guidelines.catalogue_identities`'s table (columns
                            ``universe, identity, mean |difference|, max |difference|`` and ``se``)
``identities_k``            (optional) the list length the identities were measured at, for the text

Example::

    >>> from recmetrics.papers import schroeder2011 as p
    >>> p.SETUP.cutoffs, p.SETUP.extra["n_items"], len(p.TOY_CLAIMS), len(p.CATALOGUE_CLAIMS)
    ((4,), 10, 15, 6)
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..meta.findings import Claim, Evidence, compare, decide, holds, jointly
from .setup import SetUp

__all__ = ["PAPER", "SETUP", "CLAIMS", "TOY_CLAIMS", "CATALOGUE_CLAIMS", "CHAPTERS", "IDENTITIES", "TN_IDENTITIES",
           "IDENTITY_TOLERANCE", "CORRELATION_THRESHOLD", "PROJECT", "figure_series", "notebook_parameters", "deviations"]

PAPER = "001"
#: an identity "holds" when the mean |difference| over users is at most this (metric units, range ≤ 2)
IDENTITY_TOLERANCE = 0.01
#: "highly correlated" (§4.3, §5.2) read as a Pearson correlation over the figure's panels of at least this
CORRELATION_THRESHOLD = 0.9

SETUP = SetUp(
    paper=PAPER,
    citation="Schröder, Thiele, Lehner. Setting Goals and Choosing Metrics for Recommender System Evaluations. "
             "UCERSTI 2 workshop, RecSys 2011",
    datasets=(),
    cutoffs=(4,),
    metrics=("precision", "recall", "F1", "fallout", "miss rate", "inverse precision", "inverse recall",
             "markedness", "informedness", "MCC", "MAP", "LAUC", "AUC", "BKTau"),
    notes={
        "datasets": "none: the paper's figures are rankings of ten items (Figs. 1-4)",
        "cutoffs": "Figs. 2-4: 'a four out of ten recommendation list'; Fig. 1 varies k from 1 to 10",
        "figure1_ranking": "Fig. 1's ranking is an image; the project uses relevant items at ranks 1, 2, 4, 7 "
                           "(recmetrics.meta.guidelines.FIGURE1_RANKING)",
        "catalogue": "the identities of CATALOGUE_CLAIMS are the project's, checked on a real run (not the paper's)",
    },
    extra={"n_items": 10, "figure1_k": tuple(range(1, 11)), "figure3_relevant": tuple(range(1, 10)),
           "figure4_block": 3},
)


def notebook_parameters(profile: str) -> dict[str, dict]:
    """``{notebook stem: {parameter: value}}`` of chapter 04 under ``profile``: the toy figures follow
    :data:`SETUP` under every profile (they are the paper's own examples); the real-data part of the
    chapter is the project's and keeps its own defaults, so nothing is overridden.

    >>> notebook_parameters("paper")
    {'04_choosing_a_metric': {}}
    """
    from . import _profile

    _profile(profile, SETUP, None)
    return {"04_choosing_a_metric": {}}


def deviations(ran: Mapping[str, Any]) -> list[str]:
    """Where chapter 04's toy figures differ from the paper's: the list length of Figs. 2-4 (``k``)
    and the number of items (``n_items``); the Figure 1 ranking is always the project's choice.

    >>> deviations({"k": 4, "n_items": 10})
    ["Fig. 1 ranking: the project's choice (the paper's figure is an image)"]
    """
    out = []
    if ran.get("k") is not None and int(ran["k"]) not in SETUP.cutoffs:
        out.append(f"list length of Figs. 2-4: {int(ran['k'])} (the paper: {SETUP.cutoffs[0]})")
    if ran.get("n_items") is not None and int(ran["n_items"]) != SETUP.extra["n_items"]:
        out.append(f"items per ranking: {int(ran['n_items'])} (the paper: {SETUP.extra['n_items']})")
    out.append("Fig. 1 ranking: the project's choice (the paper's figure is an image)")
    return out


def figure_series(results: Mapping[str, Any], figure: int, metric: str, x: str, **where) -> pd.Series:
    """The values of one metric (its label in :data:`~recmetrics.meta.guidelines.FIGURE_METRICS`) of a
    toy figure against the figure's parameter ``x``, sorted by ``x``; ``where`` filters other columns
    (e.g. ``recommender="inverse"``). Raises ``KeyError`` when the figure or the metric is missing."""
    fig = results[f"figure{figure}"]
    part = fig[fig["metric"] == metric]
    for col, val in where.items():
        part = part[part[col] == val]
    if part.empty:
        raise KeyError(f"figure{figure}[{metric}{''.join(f', {c}={v}' for c, v in where.items())}]")
    return part.set_index(x)["value"].astype(float).sort_index()


def _fmt(s: pd.Series) -> str:
    return ", ".join(f"{i}: {v:.3f}" for i, v in s.items())




def _steps(s: pd.Series) -> np.ndarray:
    return np.diff(s.to_numpy())


def _spread(d: np.ndarray) -> float:
    return float(d.max() - d.min()) if len(d) else 0.0


# ---------------------------------------------------------------------------------------- toy figures
def _pr_inverse(results) -> Evidence:
    from scipy.stats import spearmanr

    p = figure_series(results, 1, "precision", "k")
    r = figure_series(results, 1, "recall", "k")
    rho = float(spearmanr(p.index, p.to_numpy()).statistic)
    rising = [holds(d, ">=", 0.0) for d in _steps(r)]
    verdict = jointly(rising + [holds(rho, "<", 0.0)])
    return Evidence(verdict, rho,
                    f"Fig. 1 ranking cut at k = {p.index[0]}..{p.index[-1]}: recall "
                    f"{'never falls' if jointly(rising) == 'agrees' else 'falls somewhere'} ({r.iloc[0]:.3f} → "
                    f"{r.iloc[-1]:.3f}); Spearman ρ(k, precision) = {rho:.2f} ({p.iloc[0]:.3f} → {p.iloc[-1]:.3f})")


def _choose_k(results) -> Evidence:
    n = int(figure_series(results, 1, "precision", "k").index.max())
    parts, verdicts = [], []
    for m in ("markedness", "informedness", "MCC"):
        s = figure_series(results, 1, m, "k")
        before = s[s.index < n]
        best = int(before.idxmax())
        # a peak before the full list, above the value there; chance level (0) at the full list
        verdicts += [decide([compare(before.max(), s.loc[n])]), holds(abs(s.loc[n]), "<=", 0.0)]
        parts.append(f"{m} peaks at k = {best} ({before.max():.3f}), {s.loc[n]:.3f} at k = {n}")
    p = figure_series(results, 1, "precision", "k")
    r = figure_series(results, 1, "recall", "k")
    parts.append(f"precision at k = {n}: {p.loc[n]:.3f} (the share of relevant items), recall {r.loc[n]:.3f}")
    return Evidence(jointly(verdicts), float(figure_series(results, 1, "MCC", "k").idxmax()), "; ".join(parts))


def _map_top(results) -> Evidence:
    s = figure_series(results, 2, "MAP", "position")
    first, last = float(s.iloc[0] - s.iloc[1]), float(s.iloc[-2] - s.iloc[-1])
    ratio = first / last if last > 0 else float("inf")
    verdict = jointly([decide([compare(first, last)]), holds(last, ">=", 0.0)])
    return Evidence(verdict, ratio,
                    f"Fig. 2: MAP drops {first:.3f} from rank 1 to 2 and {last:.3f} from rank {s.index[-2]} to "
                    f"{s.index[-1]} ({_fmt(s)})")


def _auc_equal(results) -> Evidence:
    spreads, parts = [], []
    for fig in (2, 4):
        d = _steps(figure_series(results, fig, "AUC", "position"))
        spreads.append(_spread(d))
        parts.append(f"Fig. {fig}: every one-rank move changes AUC by {-d.mean():.4f} (spread {spreads[-1]:.2g})")
    worst = max(spreads)
    return Evidence(holds(worst, "<=", 0.0), worst, "; ".join(parts) + " (equal: spread 0 up to float noise)")


def _correlated(metric: str, other: str, figure: int = 2):
    def check(results) -> Evidence:
        a = figure_series(results, figure, metric, "position")
        b = figure_series(results, figure, other, "position").reindex(a.index)
        r = float(np.corrcoef(a.to_numpy(), b.to_numpy())[0, 1])
        return Evidence(holds(r, ">=", CORRELATION_THRESHOLD), r,
                        f"Fig. {figure}: Pearson r({metric}, {other}) over the {len(a)} positions = {r:.3f} "
                        f"(agrees if ≥ {CORRELATION_THRESHOLD:g})")
    return check


_RATIO_BOUND = ("precision", "F1")


def _ratio_bias(results) -> Evidence:
    parts, gaps = [], []
    for m in _RATIO_BOUND:
        per = figure_series(results, 3, m, "n_relevant", recommender="perfect")
        inv = figure_series(results, 3, m, "n_relevant", recommender="inverse")
        gaps.append(float(inv.max() - per.min()))
        parts.append(f"{m}: inverse recommender up to {inv.max():.3f} (n = {inv.idxmax()} relevant of 10), "
                     f"perfect one down to {per.min():.3f} (n = {per.idxmin()})")
    return Evidence(holds(max(gaps), ">", 0.0), max(gaps), "Fig. 3: " + "; ".join(parts)
                    + " (agrees if an inverse recommender outscores a perfect one at another ratio)")


def _sign(results) -> Evidence:
    parts, verdicts = [], []
    for m in ("markedness", "informedness", "MCC"):
        per = figure_series(results, 3, m, "n_relevant", recommender="perfect")
        inv = figure_series(results, 3, m, "n_relevant", recommender="inverse")
        verdicts += [holds(v, ">", 0.0) for v in per] + [holds(v, "<", 0.0) for v in inv]
        parts.append(f"{m} perfect {per.min():.3f}..{per.max():.3f}, inverse {inv.min():.3f}..{inv.max():.3f}")
    right = sum(v == "agrees" for v in verdicts)
    return Evidence(jointly(verdicts), right / len(verdicts), "Fig. 3, every ratio: " + "; ".join(parts)
                    + f" (right sign in {right} of {len(verdicts)} cases)")


def _lauc_one_first(results) -> Evidence:
    per = figure_series(results, 3, "LAUC", "n_relevant", recommender="perfect")
    k = int(results["figure3"]["k"].iloc[0])
    fit = per[per.index <= k]
    return Evidence(jointly(holds(abs(v - 1.0), "<=", 0.0) for v in fit), float(fit.min()),
                    f"Fig. 3, perfect recommender with n ≤ k = {k} relevant items: LAUC {_fmt(fit)}")


def _lauc_one_within(results) -> Evidence:
    k = int(results["figure2"]["k"].iloc[0])
    s2 = figure_series(results, 2, "LAUC", "position")
    s4 = figure_series(results, 4, "LAUC", "position")
    block = 3
    inside = pd.concat([s2[s2.index <= k], s4[s4.index + block - 1 <= k]])
    low = float(inside.min())
    return Evidence(holds(low, ">=", 1.0), low,
                    f"LAUC@{k} when every relevant item is inside the top {k}: Fig. 2 {_fmt(s2[s2.index <= k])}; "
                    f"Fig. 4 {_fmt(s4[s4.index + block - 1 <= k])} (an irrelevant item above them costs area; "
                    f"§5.2's own bullet 'if a relevant item moves towards the top the measure increases' requires it)")


def _lauc_zero(results) -> Evidence:
    inv = figure_series(results, 3, "LAUC", "n_relevant", recommender="inverse")
    k = int(results["figure3"]["k"].iloc[0])
    n_items = 10
    fit = inv[n_items - inv.index <= k]
    if fit.empty:
        return Evidence("inconclusive", None, f"no Fig. 3 case with at most k = {k} irrelevant items")
    worst = float(fit.abs().max())
    return Evidence(holds(worst, "<=", 0.0), worst,
                    f"Fig. 3, inverse recommender with ≤ {k} irrelevant items (all retrieved first): LAUC {_fmt(fit)}")


def _lauc_minimal(results) -> Evidence:
    """'The measure becomes minimal if no relevant items are retrieved within the top-k list': in
    Figs. 2 and 4 every case with no relevant item in the top k sits at the figure's minimum, and every
    case with one there lies above it (exact values)."""
    verdicts, parts = [], []
    for fig in (2, 4):
        s = figure_series(results, fig, "LAUC", "position")
        k = int(results[f"figure{fig}"]["k"].iloc[0])
        outside, inside = s[s.index > k], s[s.index <= k]
        if outside.empty or inside.empty:
            raise KeyError(f"figure{fig}[LAUC, positions on both sides of k = {k}]")
        low = float(outside.max())
        verdicts += [holds(low - float(s.min()), "<=", 0.0), jointly(holds(v, ">", low) for v in inside)]
        parts.append(f"Fig. {fig}: no relevant item in the top {k} (positions > {k}) LAUC {_fmt(outside)}; "
                     f"inside: {_fmt(inside)}")
    return Evidence(jointly(verdicts), None, "; ".join(parts) + " — minimal: the cases without a relevant item in "
                    "the top k at the figure's lowest value, every other case above it")


def _lauc_top(results) -> Evidence:
    s = figure_series(results, 2, "LAUC", "position")
    k = int(results["figure2"]["k"].iloc[0])
    part = s[s.index <= k + 1]
    gains = -np.diff(part.to_numpy())
    return Evidence(jointly(holds(g, ">", 0.0) for g in gains), float(gains.min()),
                    f"Fig. 2: LAUC@{k} for the relevant item at ranks 1..{k + 1}: {_fmt(part)} "
                    f"(smallest gain of moving up one rank {gains.min():.3f})")


def _lauc_swap(results) -> Evidence:
    s = figure_series(results, 2, "LAUC", "position")
    k = int(results["figure2"]["k"].iloc[0])
    d = _steps(s[s.index <= k])
    spread = _spread(d)
    return Evidence(holds(spread, "<=", 0.0), spread,
                    f"Fig. 2: one-rank moves inside the top {k} change LAUC by {', '.join(f'{-x:.4f}' for x in d)}")


def _lauc_beyond(results) -> Evidence:
    k = int(results["figure2"]["k"].iloc[0])
    parts, spreads = [], []
    for fig in (2, 4):
        s = figure_series(results, fig, "LAUC", "position")
        out = s[s.index > k]
        spreads.append(float(out.max() - out.min()))
        parts.append(f"Fig. {fig}, positions > {k}: LAUC {out.min():.3f}..{out.max():.3f}")
    worst = max(spreads)
    return Evidence(holds(worst, "<=", 0.0), worst, "; ".join(parts))


TOY_CLAIMS = [
    Claim("fig1-precision-recall-inverse", PAPER,
          "Precision and recall are inversely related: a longer list raises recall and lowers precision.",
          "§4.2: 'In most cases, increasing the size of the recommendation set will increase recall but "
          "decrease precision' (Fig. 1).", _pr_inverse),
    Claim("fig1-choose-k", PAPER,
          "Markedness, informedness and MCC are more helpful than precision and recall in choosing the length "
          "of a top-k list.", "§5.1: 'As we can see in Figures 1 and 3, markedness, informedness and Matthews "
          "Correlation are significantly more helpful in choosing an adequate size for a top-k list'.", _choose_k),
    Claim("fig2-map-top", PAPER, "MAP emphasises relevant items at the top of the ranking.",
          "§4.2: MAP, GMAP, HMAP, QMAP 'emphasize true positives at the top of a ranking list' (Fig. 2); "
          "§6: 'MAP and GMAP ... emphasize the first recommendations'.", _map_top),
    Claim("auc-swaps-equal", PAPER, "AUC is equally affected by swaps at the top or at the bottom of the list.",
          "§5.2: 'the AUC measure is equally affected by swaps at the top or the bottom of a recommendation list "
          "(cf. Figures 2 and 4 e – h)'.", _auc_equal),
    Claim("bktau-auc", PAPER, "The boolean Kendall's τ is highly correlated to AUC.",
          "§4.3: 'This boolean Kendall's tau is in fact highly correlated to the AUC metric (e.g. Fig. 2)'.",
          _correlated("BKTau", "AUC")),
    Claim("bktau-k-lauc", PAPER, "The top-k boolean Kendall's τ is highly correlated to LAUC.",
          "§5.2: 'A similar variation of the boolean Kendall's tau, which considers only the top-k "
          "recommendations, is another useful and highly correlated metric (e.g. Fig. 2)'.",
          _correlated("BKTau@k", "LAUC")),
    Claim("fig3-ratio-bias", PAPER,
          "Precision and F1 depend on the ratio of relevant items and can mislead when it is skewed.",
          "§5.1: 'The outcome of these measures ... depends ... very much on the ratio of relevant items ... "
          "its value can be even misleading (cf. Fig. 3 e – h)'.", _ratio_bias),
    Claim("fig3-mk-inf-mcc-sign", PAPER,
          "Markedness, informedness and MCC avoid the ratio bias: positive for the perfect recommender, negative "
          "for its inverse, at every ratio.", "§5.1: Powers' metrics 'try to avoid these biases'; they express "
          "the classification 'in comparison to chance' (Fig. 3).", _sign),
    Claim("lauc-one-first", PAPER, "LAUC is one when all relevant items are retrieved first and fit in the list.",
          "§5.2: 'The normalized measure should return one if all relevant items are retrieved first by the "
          "recommendation algorithm and fit within the recommendation list'.", _lauc_one_first),
    Claim("lauc-one-within", PAPER, "LAUC is one when all relevant items are retrieved within the top-k list.",
          "§5.2, first property of LAUC: 'The measure returns one if all relevant items are retrieved within "
          "the top-k list'.", _lauc_one_within),
    Claim("lauc-zero", PAPER, "LAUC is zero when all irrelevant items are retrieved first and fit in the list.",
          "§5.2: 'If all irrelevant items are retrieved first and fit within the top-k list the measure "
          "returns zero'.", _lauc_zero),
    Claim("lauc-minimal", PAPER, "LAUC is minimal when no relevant item is retrieved within the top-k list.",
          "§5.2, second property of LAUC: 'The measure becomes minimal if no relevant items are retrieved within "
          "the top-k list'.", _lauc_minimal),
    Claim("lauc-top-increases", PAPER, "LAUC increases when a relevant item moves towards the top.",
          "§5.2: 'If a relevant item moves towards the top of the list the measure increases'.", _lauc_top),
    Claim("lauc-swap-equal", PAPER, "A swap at the top or at the bottom of the top-k list changes LAUC equally.",
          "§5.2: 'A swap at the top or bottom of the top-k list has the same effect on the measure's value'.",
          _lauc_swap),
    Claim("lauc-beyond-ignored", PAPER, "LAUC ignores every change below the top-k list.",
          "§5.2: 'All changes beyond the end of the top-k list are ignored by the measure' (Figs. 2 and 4).",
          _lauc_beyond),
]


# ---------------------------------------------------------------------------------- catalogue scale
_DERIVED = "Not stated by the paper: follows from its definitions (§4.2, §5.1-5.2) when tn dominates the confusion matrix."


def _identity_table(results) -> pd.DataFrame:
    return results["identities"].set_index(["universe", "identity"])


def _se(row) -> float | None:
    se = row.get("se") if hasattr(row, "get") else None
    return None if se is None or not math.isfinite(float(se)) else float(se)


def _identity(identity: str):
    def check(results) -> Evidence:
        t = _identity_table(results)
        if ("all", identity) not in t.index:
            raise KeyError(f"identities[all, {identity}]")
        row = t.loc[("all", identity)]
        mean, worst, se = float(row["mean |difference|"]), float(row["max |difference|"]), _se(row)
        k = results.get("identities_k")
        at = f" at k = {k}" if k is not None else ""
        judged = ""
        if ("judged", identity) in t.index:
            judged = f"; over the judged items only: {t.loc[('judged', identity), 'mean |difference|']:.4f}"
        se_txt = f" ± {se:.4f}" if se is not None else ""
        return Evidence(holds(mean, "<=", IDENTITY_TOLERANCE, se), mean,
                        f"{identity}{at}, over the catalogue: mean |difference| {mean:.4f}{se_txt} (largest user "
                        f"{worst:.4f}){judged} (agrees if the catalogue mean ≤ {IDENTITY_TOLERANCE:g} beyond 2 se)")
    return check


#: the identities that rest on tn dominating the confusion matrix (fallout and fn/(fn+tn) vanish); LAUC ≈
#: (1 + informedness)/2 and BKTau ≈ MCC hold up to the order inside the list in any universe
TN_IDENTITIES = ("informedness ≈ recall", "markedness ≈ precision", "MCC ≈ sqrt(P·R)")


def _judged_breaks(results) -> Evidence:
    t = _identity_table(results)
    both = {i for u, i in t.index if u == "all"} & {i for u, i in t.index if u == "judged"}
    names = [i for i in TN_IDENTITIES if i in both]
    if not names:
        raise KeyError("identities[judged]")
    verdicts, worse = [], 0
    for i in names:
        a, j = t.loc[("all", i)], t.loc[("judged", i)]
        ja, jj = float(a["mean |difference|"]), float(j["mean |difference|"])
        # over the judged items the identity is further off than over the catalogue, and off beyond tolerance
        c = compare(jj, ja, _se(j), _se(a), label=f"{i}: judged − catalogue")
        worse += c.sign() > 0
        verdicts += [decide([c]), holds(jj, ">", IDENTITY_TOLERANCE, _se(j))]
    means = {i: float(t.loc[("judged", i), "mean |difference|"]) for i in names}
    worst = max(means, key=means.get)
    rest = sorted(both - set(names))
    return Evidence(jointly(verdicts), means[worst],
                    f"over the judged items: {', '.join(f'{i} {v:.4f}' for i, v in means.items())} — further off than "
                    f"over the catalogue for {worse} of {len(names)}, each beyond {IDENTITY_TOLERANCE:g} required"
                    + (f"; not tn-dependent, for the record: " + ", ".join(
                        f"{i} {float(t.loc[('judged', i), 'mean |difference|']):.4f}" for i in rest) if rest else ""))


IDENTITIES = {
    "id-informedness-recall": ("informedness ≈ recall", "At catalogue scale informedness@k ≈ Recall@k (fallout ≈ 0)."),
    "id-markedness-precision": ("markedness ≈ precision",
                                "At catalogue scale markedness@k ≈ P@k (the false omission rate fn/(fn+tn) ≈ 0)."),
    "id-mcc-sqrt-pr": ("MCC ≈ sqrt(P·R)", "At catalogue scale MCC@k ≈ sqrt(P@k · Recall@k)."),
    "id-lauc-informedness": ("LAUC ≈ (1 + informedness)/2",
                             "At catalogue scale LAUC@k ≈ (1 + informedness@k)/2 (the ROC is a line behind the list)."),
    "id-bktau-mcc": ("BKTau ≈ MCC", "At catalogue scale BKTau@k ≈ MCC@k (τ-b of the unordered 2×2 table is φ = MCC; "
                                    "the order inside a short list moves few of the ~|U|²/2 pairs)."),
}

#: the paper key of the catalogue identities: the project's own checks, filed apart from the paper's claims
#: (the Findings page lists them under their own heading and does not count them as claims of paper 001)
PROJECT = "project"

CATALOGUE_CLAIMS = [Claim(cid, PROJECT, text, _DERIVED, _identity(identity)) for cid, (identity, text) in IDENTITIES.items()]
CATALOGUE_CLAIMS.append(Claim(
    "id-judged-breaks", PROJECT, "Judged only on the user's test items (universe=judged) the identities that need tn "
    "to dominate (informedness ≈ recall, markedness ≈ precision, MCC ≈ sqrt(P·R)) break.",
    _DERIVED + " With few true negatives, fallout and fn/(fn+tn) are not small.", _judged_breaks))

#: the paper's claims (the catalogue identities are the project's checks, :data:`CATALOGUE_CLAIMS`)
CLAIMS = TOY_CLAIMS
#: the claims and checks each chapter tests
CHAPTERS = {"04_choosing_a_metric": TOY_CLAIMS + CATALOGUE_CLAIMS}
