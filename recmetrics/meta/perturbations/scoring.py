r"""Scoring the perturbed systems, and Exps. 1-2 of Parapar & Radlinski (RecSys 2021, Secs. 5.2-5.3) on the scores.

:func:`score_runs` scores many runs with many metrics (one judging per run, every metric on it);
:func:`run_perturbations` builds the ideal ordering (:mod:`.ideal`), the levels of each family
(:mod:`.families`) and scores them all once, into a :class:`PerturbationScores` cube per family
``(n_metrics, n_levels + 1, n_users)``. The experiments read that cube:

* :func:`level_means` — the mean score of every level (Fig. 1);
* :func:`rank_correlation` — Exp. 1: Kendall's τ between each metric's ranking of the levels and
  the true order (level 0 first), Fig. 2;
* :func:`significance_vs_ideal` — Exp. 2: one-sided Wilcoxon p-value of "the ideal scores higher
  than level s", Fig. 3; :func:`pvalue_summary` — the shape of those curves (monotone or not).
"""
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

    ``out[m, r, u]`` is metric ``metrics[m]`` (names or specs, parsed by
    :func:`recmetrics.metrics.parse`) of run ``runs[r]`` for user u. Every run is judged once
    against ``qrels`` to the depth of the longest run or cut-off, and all metrics are computed on
    that judging. ``users`` defaults to ``"relevant"`` (the qrels' users with a relevant item);
    every run is scored on the same users. Diversity metrics get ``aspects`` and ``train`` (an
    empty training frame stands in when none is given: metrics with ``profile="train"`` then fall
    back to uniform weights, with a warning). No runs gives an array of shape (n_metrics, 0, 0).

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.data.qrels import Qrels
    >>> from recmetrics.meta.perturbations import ideal_ordering, perturbed_runs
    >>> test = pd.DataFrame({"user": "u", "item": ["a", "b", "c", "d"], "rating": [5.0, 4.0, 2.0, 1.0]})
    >>> aspects = {"a": ("x",), "b": ("y",), "c": ("x",), "d": ("y",)}
    >>> runs = perturbed_runs(ideal_ordering(test, aspects), "swap", 2)
    >>> score_runs(runs, Qrels(test), ["P@1", "ab-nDCG@4(profile=test)"], aspects=aspects).round(3)
    array([[[1.   ],
            [0.   ],
            [0.   ]],
    <BLANKLINE>
           [[1.   ],
            [0.676],
            [0.666]]])
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
    """Per-user scores of every perturbation level: ``scores[family]`` is (n_metrics, n_levels+1, n_users).

    ``metrics`` are the canonical metric names (``str`` of the parsed specs), ``users`` the
    evaluated users (the cube's last axis), ``size`` the length of the perturbed lists and
    ``metadata`` the levels, cut-off, seed and tie-break of :func:`run_perturbations`. Level 0 of
    every cube is the ideal ordering.
    """

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

    For every family f and level s = 0..levels[f], ``scores[f][m, s, u]`` is metric m of user u's
    list perturbed to level s (Parapar & Radlinski, RecSys 2021, Secs. 5.2-5.3: the paper's
    systems are these levels; the ideal ordering is the ground truth's, Sec. 5.1).

    test: ground truth (Qrels or DataFrame, read with ``threshold`` (default 4) and
    ``max_rating``); metrics: names, where ``{k}`` is replaced by ``k`` (default
    :data:`DEFAULT_METRICS` with cut-off ``k`` = 100, the paper's); levels: ``{family: n_levels}``
    (default :data:`PAPER_LEVELS`: 50 swaps, 50 redundancy, 10 aspect levels); size: length of
    the perturbed lists (default None: the whole ideal ordering of every judged item, so that
    swaps bring items from below the cut-off into it); users: the users to evaluate (default the
    qrels' users with a relevant item); n_users: sample that many of them (seeded, sorted);
    train: the training ratings for metrics with ``profile="train"``; tie_break: the ideal
    ordering's tie-break (:func:`ideal_ordering`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> aspects = {f"i{j}": tuple(a for a in "ABC" if rng.random() < 0.5) for j in range(30)}
    >>> test = pd.DataFrame([(u, f"i{j}", float(rng.integers(1, 6))) for u in range(8)
    ...                      for j in rng.choice(30, 12, replace=False)], columns=["user", "item", "rating"])
    >>> res = run_perturbations(test, aspects, ["ab-nDCG@5(profile=test)", "S-Recall@5"],
    ...                         levels={"swap": 3, "aspect": 2}, k=5)
    >>> res.metrics, res.families, res.scores["swap"].shape
    (["ab-nDCG@5(profile='test')", 'S-Recall@5'], ['swap', 'aspect'], (2, 4, 8))
    >>> res.scores["swap"][0].mean(axis=1).round(3)          # αβ-nDCG@5 falls with every swap
    array([0.961, 0.605, 0.486, 0.399])
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
    """Mean score of every (family, metric, level): the data of the paper's Fig. 1.

    mean(f, m, s) = (1/|U|) Σ_u scores[f][m, s, u] (arithmetic mean over the evaluated users;
    Parapar & Radlinski, RecSys 2021, Fig. 1 plots αβ-nDCG@10 against the number of swaps).
    Columns ``family, metric, level, mean``.

    Examples
    --------
    >>> import numpy as np
    >>> cube = np.array([[[1.0, 0.9, 0.8, 1.0, 0.9], [0.6, 0.7, 0.5, 0.8, 0.6], [0.3, 0.2, 0.4, 0.3, 0.1]],
    ...                  [[0.5, 0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.5, 0.7, 0.5], [0.5, 0.5, 0.5, 0.5, 0.4]]])
    >>> res = PerturbationScores(["good", "flat"], np.arange(5), {"swap": cube}, size=10)
    >>> level_means(res)
      family metric  level  mean
    0   swap   good      0  0.92
    1   swap   good      1  0.64
    2   swap   good      2  0.26
    3   swap   flat      0  0.50
    4   swap   flat      1  0.54
    5   swap   flat      2  0.48
    """
    rows = []
    for fam, cube in result.scores.items():
        for m_i, m in enumerate(result.metrics):
            for lvl, v in enumerate(cube[m_i].mean(axis=1)):
                rows.append((fam, m, lvl, float(v)))
    return pd.DataFrame(rows, columns=["family", "metric", "level", "mean"])


def rank_correlation(result: PerturbationScores, *, include_ideal: bool = True, n_bootstrap: int = 0,
                     seed=0) -> pd.DataFrame:
    """Exp. 1: Kendall's τ between each metric's ranking of the levels and the true order (Fig. 2).

    τ = τ_b(mean score of each level, −level), the levels ranked by their mean over users
    (:func:`recmetrics.meta.agreement.system_ranking_tau`; Parapar & Radlinski, RecSys 2021,
    Sec. 5.2). The true order ranks level 0 (the ideal) first and deeper levels lower;
    ``include_ideal=False`` ranks only the perturbed levels. τ is NaN when a metric gives every
    level the same mean. Columns ``family, metric, tau, n_systems`` (the number of levels ranked)
    and ``tau_se``: the bootstrap standard error of τ over the evaluated users — the standard
    deviation (ddof = 1) of τ over ``n_bootstrap`` resamples of the users with replacement (the
    same resamples for every family and metric, seeded by ``seed``; resamples where τ is undefined
    are left out). ``n_bootstrap=0`` (default) computes none: ``tau_se`` is NaN, and a claim then
    reads τ as exact. The paper reports τ without an uncertainty; the bootstrap is this package's.

    Examples
    --------
    >>> import numpy as np
    >>> cube = np.array([[[1.0, 0.9, 0.8, 1.0, 0.9], [0.6, 0.7, 0.5, 0.8, 0.6], [0.3, 0.2, 0.4, 0.3, 0.1]],
    ...                  [[0.5, 0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.5, 0.7, 0.5], [0.5, 0.5, 0.5, 0.5, 0.4]]])
    >>> res = PerturbationScores(["good", "flat"], np.arange(5), {"swap": cube}, size=10)
    >>> rank_correlation(res).round(3)
      family metric    tau  n_systems  tau_se
    0   swap   good  1.000          3     NaN
    1   swap   flat  0.333          3     NaN
    >>> rank_correlation(res, n_bootstrap=200).round(3)      # "good" is 1 in every resample
      family metric    tau  n_systems  tau_se
    0   swap   good  1.000          3   0.000
    1   swap   flat  0.333          3   0.264
    """
    from ...errors import InputError

    n_bootstrap = int(n_bootstrap)
    if n_bootstrap < 0 or n_bootstrap == 1:
        raise InputError(f"n_bootstrap must be 0 (no standard error) or at least 2, got {n_bootstrap}")
    weights = None
    rows = []
    for fam, cube in result.scores.items():
        start = 0 if include_ideal else 1
        truth = -np.arange(cube.shape[1])[start:]
        n_users = cube.shape[2]
        if n_bootstrap and weights is None and n_users:
            rng = np.random.default_rng(seed)
            # resampled users as multiplicities: the mean of a resample is cube @ counts / n
            weights = rng.multinomial(n_users, np.full(n_users, 1.0 / n_users), size=n_bootstrap).T / n_users
        for m_i, m in enumerate(result.metrics):
            tau = agreement.system_ranking_tau(cube[m_i, start:], truth)
            se = np.nan
            if weights is not None and np.isfinite(tau):
                means = cube[m_i, start:] @ weights                     # (levels, n_bootstrap)
                boot = _tau_b_columns(means, truth)
                boot = boot[np.isfinite(boot)]
                se = float(boot.std(ddof=1)) if len(boot) > 1 else np.nan
            rows.append((fam, m, tau, cube.shape[1] - start, se))
    return pd.DataFrame(rows, columns=["family", "metric", "tau", "n_systems", "tau_se"])


def _tau_b_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ_b between every column of ``x`` (n, B) and ``y`` (n,): ``agreement.kendall_tau``
    column by column (NaN when a column or ``y`` is constant), vectorised over the columns.

    The pair counts are scipy's (``stats.kendalltau``: joint ties ``ntie``, ties ``xtie``/``ytie``,
    discordant pairs ``dis``) and τ_b is formed as scipy forms it, ``(tot - xtie - ytie + ntie -
    2 dis) / sqrt(tot - xtie) / sqrt(tot - ytie)`` clipped to [-1, 1], so each value is bit-identical
    to the per-column call (tested)."""
    n, B = x.shape
    if not (np.isfinite(x).all() and np.isfinite(y).all()):   # the per-column call's checks and errors
        return np.array([agreement.kendall_tau(x[:, b], y) for b in range(B)])
    i, j = np.triu_indices(n, k=1)
    dx = np.sign(x[i] - x[j])                     # (pairs, B)
    dy = np.sign(y[i] - y[j])[:, None]            # (pairs, 1)
    tot = n * (n - 1) // 2
    xtie = (dx == 0).sum(axis=0)
    ytie = int((dy == 0).sum())
    ntie = ((dx == 0) & (dy == 0)).sum(axis=0)
    dis = ((dx * dy) < 0).sum(axis=0)
    out = np.full(B, np.nan)
    ok = (xtie < tot) & (ytie < tot)
    con_minus_dis = tot - xtie[ok] - ytie + ntie[ok] - 2 * dis[ok]
    tau = con_minus_dis / np.sqrt(tot - xtie[ok]) / np.sqrt(tot - ytie)
    out[ok] = np.minimum(1.0, np.maximum(-1.0, tau))
    return out


def significance_vs_ideal(result: PerturbationScores, *, test: str = "wilcoxon",
                          alternative: str = "greater") -> pd.DataFrame:
    """Exp. 2: p-value of the paired test "the ideal scores higher than level s" (Fig. 3).

    One-sided Wilcoxon signed-rank on the per-user differences score(ideal) − score(level s)
    (H1: ideal > perturbed) by default (:func:`recmetrics.meta.significance.paired_pvalues`: zero
    differences dropped, scipy's default; p = 1 when all are zero). Parapar & Radlinski (RecSys
    2021, Sec. 5.3) follow Sakai's p-value curves against the ideal instead of all pairs.
    test: ``"wilcoxon"`` or ``"t"`` (paired t-test); alternative: ``"greater"``, ``"less"`` or
    ``"two-sided"``. Columns ``family, metric, level, pvalue`` (levels 1..n).

    Examples
    --------
    >>> import numpy as np
    >>> cube = np.array([[[1.0, 0.9, 0.8, 1.0, 0.9], [0.6, 0.7, 0.5, 0.8, 0.6], [0.3, 0.2, 0.4, 0.3, 0.1]],
    ...                  [[0.5, 0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.5, 0.7, 0.5], [0.5, 0.5, 0.5, 0.5, 0.4]]])
    >>> res = PerturbationScores(["good", "flat"], np.arange(5), {"swap": cube}, size=10)
    >>> significance_vs_ideal(res)          # five users, all better at the ideal: p = 1/32
      family metric  level   pvalue
    0   swap   good      1  0.03125
    1   swap   good      2  0.03125
    2   swap   flat      1  0.87500
    3   swap   flat      2  0.50000
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

    largest_rise = max_s (log10 p_s − min_{s' <= s} log10 p_s'), with p floored at 1e-300. This is
    this package's reading of the paper's "monotonic fast increment" vs "erratic behavior"
    (Parapar & Radlinski, RecSys 2021, Sec. 5.3); ``alpha`` (default 0.01) and ``tolerance``
    (default 0.5) are choices, not the paper's.

    Examples
    --------
    >>> import pandas as pd
    >>> p = pd.DataFrame({"family": "swap", "metric": "m", "level": [1, 2, 3], "pvalue": [0.2, 1e-4, 1e-2]})
    >>> pvalue_summary(p)                   # p climbs back from 1e-4 to 1e-2: two orders of magnitude
      family metric  p_level1  first_significant  largest_rise  monotone
    0   swap      m       0.2                2.0           2.0     False
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
