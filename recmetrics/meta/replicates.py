"""Replicates of the data split: what a verdict must survive besides Monte Carlo noise.

A claim about discriminative power (DP), robustness curves or rank correlations is decided on one
data split. Another split seed re-draws which ratings are test ratings and the same chapter reads
another story: on movielens-small at the quick profile, the DP of nDCG@100 is 0.04 / 0.58 / 0.34
over seeds 0-2 while its Monte Carlo se is at most 0.016. The uncertainty that decides these
claims is the test data's, and a verdict has to be decided against it.

**Design: disjoint user groups of the split at hand, as replicates.** The evaluated users are dealt
(seeded by the split seed) into ``R`` groups (:data:`DEFAULT_REPLICATES` = 30); a replicate is
every (fold, user) unit of one group. Each statistic — DP, the mean τ of a robustness curve, the τ
between two rankings — is computed on every replicate alone, with everything else as in the chapter
(same runs, same permutations or reduced test sets). A comparison "A > B" is then decided by the
rule of :mod:`recmetrics.meta.findings` on the full-split difference with a standard error that
adds, to the Monte Carlo se, the *batch-means* se of the per-replicate differences,
``sd(d_r)/√R`` on ``R − 1`` degrees of freedom (Student's t): the classic estimate of a statistic's
sampling se from disjoint sub-samples. It is paired (every replicate compares A and B on the same
users), so what the metrics share cancels, and a comparison that changes with the users it is
measured on does not decide ("within the noise: ... (+0.02 ± 0.0479 with the split, z +0.4)").

Why these replicates and not others:

* they cost nothing: no system is trained or run again, no test set is scored again — DP reruns
  the permutation test on each group's columns (the same total work as once on all users:
  :func:`dp_by_replicate` caps its permutations at :data:`REPLICATE_PERMUTATIONS`), robustness
  aggregates the reduced test sets it already scored per group
  (:func:`recmetrics.meta.robustness.robustness_study` ``replicates=``), τ reads group means;
* they exist for every split: paper 003's single holdout has one fold, and the quick profile's
  2-fold split has one degree of freedom; the k folds of paper 000's 5-fold cross-validation are
  the other choice (``scheme="folds"``, :func:`unit_labels`), which adds the training variability
  but gives only 4 degrees of freedom (t quantile 2.87 instead of 2.09 at the rule's level);
* a seed changes which of each user's ratings are held out; the spread between disjoint groups of
  users contains that per-user variability *and* the spread between users, so for statistics that
  are means over users (robustness areas, system means behind τ) it errs on the wide side. DP, a
  sum of p-values, rises on fewer users; its per-group spread is, if anything, also wider than the
  full split's. The rule stays conservative: a verdict it decides holds in another split.

Chapters show the spread next to each claim's evidence (:func:`spread`), and every row says which
seed and how many replicates decided it (the ``seed`` and ``replicates`` context of the findings).
"""
from __future__ import annotations

import copy
from typing import Callable

import numpy as np
import pandas as pd

from .. import checks
from ..errors import InputError

__all__ = ["DEFAULT_REPLICATES", "REPLICATE_PERMUTATIONS", "SCHEMES", "unit_labels", "view", "per_replicate",
           "dp_by_replicate", "spread"]

#: user groups per split (30: 29 degrees of freedom, a t quantile of 2.09 at the rule's 2-se level, and an se
#: that is itself steadier, its sd about 13 % of it against 24 % with 10 groups). Measured on the quick book of
#: movielens-small over split seeds 0-5 (chapters 05-08): a verdict changes between three seeds in 10.3 of
#: 76 rows on average with 30 groups, 13.7 with 10 (``benchmarks/split_stability.py``)
DEFAULT_REPLICATES = 30
#: permutations of each replicate's test (its Monte Carlo noise is part of the replicates' spread)
REPLICATE_PERMUTATIONS = 10_000
SCHEMES = ("users", "folds")


def unit_labels(study, n: int = DEFAULT_REPLICATES, seed: int = 0, scheme: str = "users") -> np.ndarray:
    """The replicate (0..R-1) of every (fold, user) unit of ``study``: an int array ``(n_folds, n_users)``
    aligned with ``study.users`` (−1 where a user is not evaluated in a fold).

    ``scheme="users"``: the users are dealt into ``n`` groups in a random order drawn from ``seed``
    (group sizes differ by at most one; a user is in one group in every fold). ``scheme="folds"``: the
    fold is the replicate (``n`` is then the number of folds, which must be at least 2).
    """
    n = checks.positive_int(n, "n (replicates)")
    seed = checks.seed(seed)
    if scheme not in SCHEMES:
        raise InputError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    cube = getattr(study, "cube", None)
    if cube is None:
        raise InputError("unit_labels needs a Study (its score cube says which units are evaluated)")
    present = ~np.isnan(cube[0, 0, 0])                     # (fold, user)
    if scheme == "folds":
        repeats = ((getattr(getattr(study, "runs", None), "params", None) or {}).get("split") or {}).get("repeats", 1)
        if repeats > 1:
            raise InputError(f"scheme='folds' needs independent folds, but the split was drawn {repeats} times and "
                             f"its repetitions' folds share test ratings: use scheme='users'")
        if present.shape[0] < 2:
            raise InputError(f"scheme='folds' needs a split with at least 2 folds, the study has {present.shape[0]}")
        labels = np.broadcast_to(np.arange(present.shape[0])[:, None], present.shape).copy()
    else:
        evaluated = np.flatnonzero(present.any(axis=0))
        if n < 2 or n > len(evaluated):
            raise InputError(f"n (replicates) must be between 2 and the {len(evaluated)} evaluated users, got {n}")
        group = np.full(present.shape[1], -1)
        group[np.random.default_rng(seed).permutation(evaluated)] = np.arange(len(evaluated)) % n
        labels = np.broadcast_to(group, present.shape).copy()
    labels[~present] = -1
    return labels


def view(study, labels: np.ndarray, replicate: int):
    """A shallow copy of ``study`` whose score cube keeps only the units of one replicate (NaN
    elsewhere, as for a user a fold does not evaluate): every per-user method then reads that
    replicate alone. Robustness needs the judged runs instead: pass ``replicates=labels`` there."""
    labels = np.asarray(labels)
    if labels.shape != study.cube.shape[-2:]:
        raise InputError(f"labels must have the shape (folds, users) {study.cube.shape[-2:]}, got {labels.shape}")
    out = copy.copy(study)
    out.cube = np.where(labels == replicate, study.cube, np.nan)
    return out


def per_replicate(study, labels: np.ndarray, statistic: Callable[[object], pd.Series]) -> pd.DataFrame:
    """Replicates x entries: ``statistic(view)`` (a Series, e.g. DP per metric) on every replicate."""
    labels = np.asarray(labels)
    n = int(labels.max()) + 1 if labels.size else 0
    if n < 2:
        raise InputError(f"need at least 2 replicates, the labels give {n}")
    rows = {r: pd.Series(statistic(view(study, labels, r)), dtype=np.float64) for r in range(n)}
    return pd.DataFrame(rows).T.rename_axis("replicate")


def dp_by_replicate(study, labels: np.ndarray, scores_of: Callable[[object], dict], *, n_permutations: int,
                    seed: int = 0, key: Callable = lambda m: m) -> pd.DataFrame:
    """Replicates x entries: the DP of every entry of ``scores_of(view)`` (``{name: systems x units}``,
    e.g. ``lambda v: v.all_scores(100, "concat")``) on every replicate, each test with
    ``min(n_permutations, REPLICATE_PERMUTATIONS)`` permutations; columns renamed by ``key``."""
    from .discriminative import discriminative_power

    b = min(int(n_permutations), REPLICATE_PERMUTATIONS)

    def dp(v):
        res = discriminative_power(scores_of(v), n_permutations=b, seed=seed)
        return pd.Series({key(m): r.dp for m, r in res.items()})
    return per_replicate(study, labels, dp)


def spread(reps, digits: int = 3) -> str:
    """``"0.12 to 0.35 over 10 replicates"`` (the finite per-replicate values of one entry)."""
    x = np.asarray(reps, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not x.size:
        return "no replicate value"
    return f"{x.min():.{digits}g} to {x.max():.{digits}g} over {x.size} replicates"
