"""SCORING"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ...data.qrels import Qrels
from ...data.run import Run
from ...errors import unknown_name
from ...metrics import diversity as dv
from ...metrics.registry import parse
from .. import agreement, significance
from ._inputs import _as_qrels, _sample_users
from .families import FAMILIES, perturbed_runs
from .ideal import ideal_ordering

#: the paper's numbers of perturbation levels (Sec. 5.2)
PAPER_LEVELS = {"swap": 50, "redundancy": 50, "aspect": 10}
#: the metrics of the paper's Fig. 2-3, with the ground-truth profile of its Sec. 5; S-Recall and
#: S-RR in both readings (coverage by relevant items, as Zhai et al. and ndeval; by any item, as
#: the paper's Sec. 4.2 describes them)
DEFAULT_METRICS = ("ab-nDCG@{k}(profile=test)", "a-nDCG@{k}", "S-Recall@{k}",
                   "S-Recall@{k}(relevant_only=false)", "S-RR", "S-RR(relevant_only=false)", "NRBP",
                   "EU(profile=test)", "RBU@{k}(profile=test)")

__all__ = ["PAPER_LEVELS", "DEFAULT_METRICS", "score_runs", "PerturbationScores", "run_perturbations", "level_means",
           "rank_correlation", "significance_vs_ideal", "pvalue_summary"]


def score_runs(runs: Sequence[Run], qrels: Qrels, metrics, *, aspects=None, train=None,
               users=None) -> np.ndarray:
    """Per-user scores of several runs: array (n_metrics, n_runs, n_users).

    ``users`` defaults to ``"relevant"`` (the qrels' users with a relevant item). Diversity
    metrics get ``aspects`` and ``train`` (an empty training frame stands in when none is given:
    metrics with ``profile="train"`` then fall back to uniform weights, with a warning).
    """
    from ...judged import judge

    specs = [parse(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    if train is None:
        train = pd.DataFrame({"user": pd.Series(dtype=object), "item": pd.Series(dtype=object),
                              "rating": pd.Series(dtype=np.float64)})
    context = {"aspects": aspects, "train": train}
    depth = max([r.depth for r in runs] + [s.k or 0 for s in specs] + [1])
    out = None
    for r_i, run in enumerate(runs):
        j = dv.attach_judgments(judge(run, qrels, depth=depth, users="relevant" if users is None else users), qrels)
        if out is None:
            out = np.zeros((len(specs), len(runs), len(j.users)))
        for m_i, s in enumerate(specs):
            out[m_i, r_i] = s(j, **context)
    return out if out is not None else np.zeros((len(specs), 0, 0))


@dataclass
class PerturbationScores:
    """Per-user scores of every perturbation level: ``scores[family]`` is (n_metrics, n_levels+1, n_users)."""

    metrics: list[str]
    users: np.ndarray
    scores: dict
    size: int
    metadata: dict = field(default_factory=dict)

    @property
    def families(self) -> list[str]:
        return list(self.scores)


def run_perturbations(test, aspects, metrics=None, *, levels=None, k: int = 100, size: int | None = None,
                      users=None, n_users: int | None = None, seed=0, threshold: float = 4.0,
                      max_rating: float | None = None, train=None, tie_break: str = "more") -> PerturbationScores:
    """Score the three perturbation families (Exp. 1-2) with every metric.

    test: ground truth (Qrels or DataFrame); metrics: names (default :data:`DEFAULT_METRICS` with
    cut-off ``k``); levels: ``{family: n_levels}`` (default :data:`PAPER_LEVELS`); size: length of
    the perturbed lists (default None: the whole ideal ordering of every judged item, so that
    swaps bring items from below the cut-off into it); n_users: sample that many users (seeded);
    tie_break: the ideal ordering's tie-break (:func:`ideal_ordering`).
    """
    qrels = _as_qrels(test, threshold, max_rating)
    levels = dict(PAPER_LEVELS if levels is None else levels)
    for fam in levels:
        if fam not in FAMILIES:
            raise unknown_name("perturbation family", fam, FAMILIES)
    metrics = [m.format(k=k) for m in (DEFAULT_METRICS if metrics is None else metrics)]
    eval_users = _sample_users(qrels, users, n_users, seed)
    ideal = ideal_ordering(qrels, aspects, users=eval_users, tie_break=tie_break)
    size = int(ideal.items.shape[1] if size is None else size)
    scores = {}
    for fam, n_lv in levels.items():
        runs = perturbed_runs(ideal, fam, n_lv, size)
        scores[fam] = score_runs(runs, qrels, metrics, aspects=aspects, train=train, users=eval_users)
    return PerturbationScores([str(parse(m)) for m in metrics], eval_users, scores, size,
                              {"levels": levels, "k": k, "seed": seed, "tie_break": tie_break})


def level_means(result: PerturbationScores) -> pd.DataFrame:
    """Mean score of every (family, metric, level): the data of the paper's Fig. 1."""
    rows = []
    for fam, cube in result.scores.items():
        for m_i, m in enumerate(result.metrics):
            for lvl, v in enumerate(cube[m_i].mean(axis=1)):
                rows.append((fam, m, lvl, float(v)))
    return pd.DataFrame(rows, columns=["family", "metric", "level", "mean"])


def rank_correlation(result: PerturbationScores, *, include_ideal: bool = True) -> pd.DataFrame:
    """Exp. 1: Kendall's τ between each metric's ranking of the levels and the true order (Fig. 2).

    The true order ranks level 0 (the ideal) first and deeper levels lower; ``include_ideal=False``
    ranks only the perturbed levels.
    """
    rows = []
    for fam, cube in result.scores.items():
        start = 0 if include_ideal else 1
        truth = -np.arange(cube.shape[1])[start:]
        for m_i, m in enumerate(result.metrics):
            tau = agreement.system_ranking_tau(cube[m_i, start:], truth)
            rows.append((fam, m, tau, cube.shape[1] - start))
    return pd.DataFrame(rows, columns=["family", "metric", "tau", "n_systems"])


def significance_vs_ideal(result: PerturbationScores, *, test: str = "wilcoxon",
                          alternative: str = "greater") -> pd.DataFrame:
    """Exp. 2: p-value of the paired test "the ideal scores higher than level s" (Fig. 3).

    One-sided Wilcoxon signed-rank on the per-user values (H1: ideal > perturbed) by default.
    """
    rows = []
    for fam, cube in result.scores.items():
        for m_i, m in enumerate(result.metrics):
            p = significance.paired_pvalues(cube[m_i], baseline=0, test=test, alternative=alternative)
            for lvl in range(1, cube.shape[1]):
                rows.append((fam, m, lvl, float(p[lvl])))
    return pd.DataFrame(rows, columns=["family", "metric", "level", "pvalue"])


def pvalue_summary(pvalues: pd.DataFrame, *, alpha: float = 0.01, tolerance: float = 0.5) -> pd.DataFrame:
    """Shape of each p-value curve of :func:`significance_vs_ideal` (one row per family, metric).

    Columns: ``p_level1``; ``first_significant`` (the first level with p < ``alpha``, NaN if none);
    ``largest_rise`` (the largest increase of log10 p from one level to a later one, in orders of
    magnitude); ``monotone`` (``largest_rise <= tolerance``: the curve never climbs back by more than
    ``tolerance`` orders of magnitude, i.e. deeper perturbations are never much harder to detect).
    """
    rows = []
    for (fam, metric), g in pvalues.sort_values("level").groupby(["family", "metric"], sort=False):
        logp = np.log10(np.maximum(g["pvalue"].to_numpy(), 1e-300))
        rise = float(np.max(logp - np.minimum.accumulate(logp))) if len(logp) else 0.0
        sig = g["level"].to_numpy()[g["pvalue"].to_numpy() < alpha]
        rows.append((fam, metric, float(g["pvalue"].iloc[0]), float(sig[0]) if len(sig) else np.nan,
                     rise, rise <= tolerance))
    return pd.DataFrame(rows, columns=["family", "metric", "p_level1", "first_significant", "largest_rise",
                                       "monotone"])
