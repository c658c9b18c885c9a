r"""Ideal orderings, perturbation families and the three experiments of Parapar & Radlinski (2021, Sec. 5).

* :func:`ideal_ordering` (Sec. 5.1): per user, a greedy ordering of the user's judged (test)
  items. One per-aspect list per aspect (items showing it, by rating then by number of aspects,
  descending, or ascending with ``tie_break="fewer"``: the paper says only that ties are broken
  "based on the number of aspects", not in which direction); at every rank the next aspect is
  :math:`\arg\max_\phi w(u,a_\phi) - w(\vec\iota^u, a_\phi)` and its best unused item is taken.
  Both weights are the maximum-likelihood estimate of Eq. 9 (rating mass of the aspect over the
  rating mass of all aspects), over the user's ground truth and over the items placed so far.
  Ties between aspects go to the aspect label that sorts first; items without aspects come last
  (by rating); an aspect whose list is exhausted is skipped.
* Perturbation families (level 0 is the ideal, larger levels are further from it):

  - ``"swap"`` (Sec. 5.2.1): level s swaps ranks (1, L), (2, L-1), ..., (s, L-s+1) of the ideal
    list of length L (the list cut at ``size``); levels beyond L/2 repeat the fully reversed list;
  - ``"redundancy"`` (Sec. 5.2.2): at the first rank p where the ideal changes aspect, the next
    s ranks receive the best remaining items of the aspect of rank p-1 (each swapped in from
    further down the full ordering); users whose ordering never changes aspect stay ideal;
  - ``"aspect"`` (Sec. 5.2.3): the first item is replaced by the best item of the user's
    (s+1)-th most liked aspect among those the first item does not show (not showing the most
    liked aspect), swapped in from further down; users with fewer such aspects keep their deepest
    available level.

* Experiments (functions returning DataFrames): :func:`run_perturbations` scores every level
  with every metric once; :func:`rank_correlation` (Exp. 1: Kendall's τ between each metric's
  ranking of the levels and the true order), :func:`significance_vs_ideal` (Exp. 2: one-sided
  Wilcoxon p-value of the ideal against each perturbed level), :func:`robustness` (Exp. 3:
  αβ-nDCG's system ranking over shuffled ideal lists, τ between full and proportionally-by-
  category reduced test sets).

Every sampling function takes a ``seed`` (or a ``numpy.random.Generator``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..data.qrels import Qrels
from ..data.run import Run, trec_tie_order
from ..errors import InputError, unknown_name
from ..metrics import diversity as dv
from ..metrics.diversity.params import _check_unit
from ..metrics.diversity.weights import _mle_weights
from ..metrics.registry import parse
from . import agreement, significance

FAMILIES = ("swap", "redundancy", "aspect")
#: the two readings of Sec. 5.1's tie-break between equally rated items of a per-aspect list
TIE_BREAKS = ("more", "fewer")
#: the paper's numbers of perturbation levels (Sec. 5.2)
PAPER_LEVELS = {"swap": 50, "redundancy": 50, "aspect": 10}
#: the metrics of the paper's Fig. 2-3, with the ground-truth profile of its Sec. 5; S-Recall and
#: S-RR in both readings (coverage by relevant items, as Zhai et al. and ndeval; by any item, as
#: the paper's Sec. 4.2 describes them)
DEFAULT_METRICS = ("ab-nDCG@{k}(profile=test)", "a-nDCG@{k}", "S-Recall@{k}",
                   "S-Recall@{k}(relevant_only=false)", "S-RR", "S-RR(relevant_only=false)", "NRBP",
                   "EU(profile=test)", "RBU@{k}(profile=test)")

__all__ = ["FAMILIES", "TIE_BREAKS", "PAPER_LEVELS", "DEFAULT_METRICS", "IdealOrdering", "ideal_ordering",
           "perturb", "perturbed_runs", "score_runs", "PerturbationScores", "run_perturbations",
           "rank_correlation", "significance_vs_ideal", "pvalue_summary", "level_means", "shuffled_runs",
           "proportional_removal_order", "robustness", "robustness_summary", "paper_claims", "ASPECT_WEIGHTED",
           "SUBTOPIC"]


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _as_qrels(test, threshold: float, max_rating: float | None) -> Qrels:
    if isinstance(test, Qrels):
        return test
    if isinstance(test, pd.DataFrame):
        return Qrels(test, threshold=threshold, max_rating=max_rating)
    raise InputError(f"test must be a Qrels or a DataFrame (user, item, rating), got {type(test).__name__}")


# --------------------------------------------------------------------------------------------
# the ideal ordering (Sec. 5.1)
# --------------------------------------------------------------------------------------------
@dataclass
class IdealOrdering:
    """Per-user ideal orderings of all judged items, with the construction trace.

    ``items[u, :lengths[u]]`` is user ``users[u]``'s ordering; ``aspect[u, r]`` is the index (in
    ``labels``) of the aspect picked at rank r (-1 for an item without aspects); ``weights`` are
    the users' aspect weights w(u, a) (Eq. 9 over the ground truth); ``member`` (n, m, c) the
    aspects of the ordered items; ``key`` each item's position in the per-aspect lists' order.
    """

    users: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    lengths: np.ndarray
    aspect: np.ndarray
    member: np.ndarray
    key: np.ndarray
    weights: np.ndarray
    labels: np.ndarray
    metadata: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.users)

    def to_run(self, size: int | None = None, name: str = "ideal", items: np.ndarray | None = None) -> Run:
        """The ordering (or a perturbed ``items`` matrix of the same shape) as a Run cut at ``size``."""
        items = self.items if items is None else items
        size = items.shape[1] if size is None else min(int(size), items.shape[1])
        lengths = np.minimum(self.lengths, size)
        return Run(self.users, items[:, :size].copy(), lengths, name=name)


def _check_tie_break(tie_break: str) -> str:
    t = str(tie_break).lower()
    if t not in TIE_BREAKS:
        raise unknown_name("ideal-ordering tie-break", tie_break, TIE_BREAKS)
    return t


def ideal_ordering(test, aspects, *, users=None, threshold: float = 4.0,
                   max_rating: float | None = None, tie_break: str = "more") -> IdealOrdering:
    """The paper's ideal ordering (Sec. 5.1) of every judged item of each user (vectorised over users).

    test: a Qrels or a DataFrame ``user, item, rating`` (the ground truth); aspects: item -> labels;
    users: the users to order (default: every judged user); tie_break: how equally rated items of
    a per-aspect list are ordered, ``"more"`` (items showing more aspects first, the default) or
    ``"fewer"`` (fewer aspects first). Sec. 5.1 says only "for breaking ties, we sort items based
    on the number of aspects they exhibit"; notebook 03 runs Exps. 1-2 both ways.
    """
    tie_break = _check_tie_break(tie_break)
    qrels = _as_qrels(test, threshold, max_rating)
    idx = dv.aspect_index(aspects)
    users = qrels.users if users is None else np.asarray(users)
    jd = dv.judgments_from_qrels(qrels, users, idx)
    n, c = len(users), idx.n_aspects
    n_asp = jd.member.sum(axis=1)
    # per-aspect list order: rating desc, number of aspects desc ("more") or asc ("fewer"), then
    # trec tie order
    n_key = -n_asp if tie_break == "more" else n_asp
    order = np.lexsort((trec_tie_order(jd.items), n_key, -jd.ratings, jd.row))
    row = jd.row[order]
    counts = np.bincount(row, minlength=n)
    m = int(counts.max()) if n and len(row) else 0
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    col = np.arange(len(row)) - starts[row]
    cand_items = np.zeros((n, m), dtype=jd.items.dtype if len(jd.items) else np.int64)
    cand_r = np.zeros((n, m))
    cand_member = np.zeros((n, m, c), dtype=bool)
    present = np.zeros((n, m), dtype=bool)
    cand_items[row, col] = jd.items[order]
    cand_r[row, col] = jd.ratings[order]
    cand_member[row, col] = jd.member[order]
    present[row, col] = True

    w_user = np.nan_to_num(_mle_weights(jd.row, jd.ratings, jd.member, n))   # Eq. 9, ground truth
    avail = present.copy()
    left = cand_member.sum(axis=1).astype(np.int64)            # available items per aspect
    placed = np.zeros((n, c))                                  # rating mass per aspect placed so far
    out_pos = np.zeros((n, m), dtype=np.int64)
    out_aspect = np.full((n, m), -1, dtype=np.int64)
    rows = np.arange(n)
    for step in range(m):
        active = avail.any(axis=1)
        if not active.any():
            break
        tot = placed.sum(axis=1, keepdims=True)
        w_list = np.divide(placed, tot, out=np.zeros_like(placed), where=tot > 0)
        diff = np.where(left > 0, w_user - w_list, -np.inf)
        has = np.isfinite(diff).any(axis=1) if c else np.zeros(n, dtype=bool)
        sel = diff.argmax(axis=1) if c else np.zeros(n, dtype=np.int64)
        if c:
            mask = avail & np.where(has[:, None], cand_member[rows, :, sel], True)
        else:
            mask = avail
        pick = mask.argmax(axis=1)
        ok = active & mask[rows, pick]
        r_ok = rows[ok]
        out_pos[r_ok, step] = pick[ok]
        out_aspect[r_ok, step] = np.where(has[ok], sel[ok], -1)
        avail[r_ok, pick[ok]] = False
        chosen = cand_member[r_ok, pick[ok]]
        left[r_ok] -= chosen
        placed[r_ok] += chosen * cand_r[r_ok, pick[ok]][:, None]
    lengths = counts
    take = lambda a: np.take_along_axis(a, out_pos, axis=1)  # noqa: E731
    items = take(cand_items)
    member = np.take_along_axis(cand_member, out_pos[..., None], axis=1)
    valid = np.arange(m)[None, :] < lengths[:, None]
    out_aspect = np.where(valid, out_aspect, -1)
    return IdealOrdering(users=users, items=items, ratings=np.where(valid, take(cand_r), np.nan),
                         lengths=lengths, aspect=out_aspect, member=member & valid[..., None],
                         key=np.where(valid, out_pos, np.iinfo(np.int64).max), weights=w_user,
                         labels=idx.labels, metadata={"threshold": qrels.threshold, "tie_break": tie_break})


# --------------------------------------------------------------------------------------------
# perturbations
# --------------------------------------------------------------------------------------------
def _swap_rows(a: np.ndarray, rows: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
    tmp = a[rows, i].copy()
    a[rows, i] = a[rows, j]
    a[rows, j] = tmp


def _perturb_swap(ideal: IdealOrdering, level: int, size: int) -> np.ndarray:
    m = min(size, ideal.items.shape[1])
    L = np.minimum(ideal.lengths, m)
    s = np.minimum(level, L // 2)[:, None]
    j = np.arange(m)[None, :]
    src = np.where((j < s) | ((j >= L[:, None] - s) & (j < L[:, None])), L[:, None] - 1 - j, j)
    return np.take_along_axis(ideal.items[:, :m], src, axis=1)


def _perturb_redundancy(ideal: IdealOrdering, level: int) -> np.ndarray:
    items = ideal.items.copy()
    member = ideal.member.copy()
    key = ideal.key.copy()
    n, m = items.shape
    a = ideal.aspect
    change = (a[:, 1:] != a[:, :-1]) & (a[:, :-1] >= 0) & (np.arange(1, m)[None, :] < ideal.lengths[:, None])
    has = change.any(axis=1)
    p = np.where(has, change.argmax(axis=1) + 1, m)
    cur = np.where(has, a[np.arange(n), np.maximum(p - 1, 0)], -1)
    rows = np.flatnonzero(has)
    if len(rows) == 0 or level <= 0:
        return items
    positions = np.arange(m)[None, :]
    for t in range(level):
        q = p[rows] + t
        live = q < ideal.lengths[rows]
        rows_t, q = rows[live], q[live]
        if len(rows_t) == 0:
            break
        show = member[rows_t, :, cur[rows_t]] & (positions >= q[:, None])
        found = show.any(axis=1)
        k = np.where(show, key[rows_t], np.iinfo(np.int64).max).argmin(axis=1)
        rows_t, q, k = rows_t[found], q[found], k[found]
        for arr in (items, key):
            _swap_rows(arr, rows_t, q, k)
        tmp = member[rows_t, q].copy()
        member[rows_t, q] = member[rows_t, k]
        member[rows_t, k] = tmp
        rows = rows_t      # users without a remaining item of the aspect stop here (saturate)
    return items


def _perturb_aspect(ideal: IdealOrdering, level: int) -> np.ndarray:
    items = ideal.items.copy()
    if level <= 0:
        return items
    n, m = items.shape
    c = len(ideal.labels)
    if c == 0:
        return items
    w = ideal.weights
    most = w.argmax(axis=1)
    first = ideal.member[:, 0, :]                                   # aspects of the first item
    pos = np.arange(m)[None, :]
    # candidate items: further down, not showing the most liked aspect
    cand = (pos >= 1) & (pos < ideal.lengths[:, None]) & ~ideal.member[np.arange(n), :, most]
    has_item = (ideal.member & cand[..., None]).any(axis=1)         # (n, c)
    eligible = has_item & ~first & (w > 0)
    eligible[np.arange(n), most] = False
    order = np.argsort(-np.where(eligible, w, -np.inf), axis=1, kind="stable")
    n_el = eligible.sum(axis=1)
    rows = np.flatnonzero(n_el > 0)
    s = np.minimum(level, n_el[rows]) - 1
    target = order[rows, s]
    show = ideal.member[rows, :, target] & cand[rows]
    k = np.where(show, ideal.key[rows], np.iinfo(np.int64).max).argmin(axis=1)
    _swap_rows(items, rows, np.zeros(len(rows), dtype=np.int64), k)
    return items


def perturb(ideal: IdealOrdering, family: str, level: int, size: int | None = None) -> np.ndarray:
    """The (n_users, size) item matrix of ``family`` at ``level`` (0 = the ideal, cut at ``size``;
    None = the whole ordering)."""
    if family not in FAMILIES:
        raise unknown_name("perturbation family", family, FAMILIES)
    level = int(level)
    if level < 0:
        raise InputError(f"perturbation level must be >= 0, got {level}")
    size = int(ideal.items.shape[1] if size is None else size)
    if size <= 0:
        raise InputError(f"size must be a positive integer, got {size}")
    if family == "swap":
        return _perturb_swap(ideal, level, size)
    full = _perturb_redundancy(ideal, level) if family == "redundancy" else _perturb_aspect(ideal, level)
    return full[:, :size]


def perturbed_runs(ideal: IdealOrdering, family: str, levels: int, size: int | None = None) -> list[Run]:
    """Runs for levels 0 (the ideal) .. ``levels`` of ``family``, lists cut at ``size`` (None: whole)."""
    return [ideal.to_run(size, name=f"{family}-{lvl}", items=perturb(ideal, family, lvl, size))
            for lvl in range(int(levels) + 1)]


# --------------------------------------------------------------------------------------------
# scoring many runs
# --------------------------------------------------------------------------------------------
def score_runs(runs: Sequence[Run], qrels: Qrels, metrics, *, aspects=None, train=None,
               users=None) -> np.ndarray:
    """Per-user scores of several runs: array (n_metrics, n_runs, n_users).

    ``users`` defaults to ``"relevant"`` (the qrels' users with a relevant item). Diversity
    metrics get ``aspects`` and ``train`` (an empty training frame stands in when none is given:
    metrics with ``profile="train"`` then fall back to uniform weights, with a warning).
    """
    from ..judged import judge

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


def _sample_users(qrels: Qrels, users, n_users, seed) -> np.ndarray:
    pool = qrels.relevant_users if users is None else np.asarray(users)
    if n_users is not None and n_users < len(pool):
        pool = np.sort(_rng(seed).choice(pool, size=int(n_users), replace=False))
    return pool


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


# --------------------------------------------------------------------------------------------
# Exp. 3: robustness to incompleteness
# --------------------------------------------------------------------------------------------
def shuffled_runs(ideal: IdealOrdering, n_systems: int, size: int = 100, seed=0, *,
                  shared: bool = True) -> np.ndarray:
    """(n_systems, n_users, size) item matrices: random shuffles of the users' ideal lists.

    ``shared=True`` (default): a system is one random permutation of the ranks 1..size applied to
    every user's ideal list (a user with a shorter list keeps the permutation's relative order of
    its ranks), so systems differ in quality consistently across users. ``shared=False``: every
    user's list is shuffled independently (all systems then have the same expected quality).
    """
    rng = _rng(seed)
    m = min(size, ideal.items.shape[1])
    L = np.minimum(ideal.lengths, m)
    if shared:
        keys = np.broadcast_to(rng.random((n_systems, 1, m)), (n_systems, len(ideal), m))
    else:
        keys = rng.random((n_systems, len(ideal), m))
    keys = np.where(np.arange(m)[None, None, :] < L[None, :, None], keys, 2.0)
    order = np.argsort(keys, axis=2, kind="stable")
    return np.take_along_axis(np.broadcast_to(ideal.items[:, :m], (n_systems,) + (len(ideal), m)), order, axis=2)


def proportional_removal_order(test: pd.DataFrame, aspects, seed=0) -> np.ndarray:
    """Removal rank of every test rating (row order of ``test``): remove ranks < f·N to drop a fraction f.

    Proportional by category: each rating is assigned to one of its item's aspects at random (items
    without aspects form their own stratum); within a stratum the order is random, and strata are
    interleaved by relative position, so any prefix removes the same share of every category.
    """
    rng = _rng(seed)
    idx = dv.aspect_index(aspects)
    member = idx.lookup(test["item"].to_numpy()).reshape(len(test), idx.n_aspects)
    n_asp = member.sum(axis=1)
    pick = np.floor(rng.random(len(test)) * np.maximum(n_asp, 1)).astype(np.int64)
    csum = np.cumsum(member, axis=1)
    stratum = np.where(n_asp > 0, (csum <= pick[:, None]).sum(axis=1), idx.n_aspects)
    key = rng.random(len(test))
    order = np.lexsort((key, stratum))
    st_sorted = stratum[order]
    starts = np.flatnonzero(np.r_[True, st_sorted[1:] != st_sorted[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    within = np.arange(len(order)) - np.repeat(starts, sizes)
    rel = (within + rng.random(len(order))) / np.repeat(sizes, sizes)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order[np.argsort(rel, kind="stable")]] = np.arange(len(order))
    return rank


def robustness(test, aspects, *, cutoffs: Iterable[int] = (10, 100), betas: Iterable[float] = (0.25, 0.5, 0.75, 1.0),
               alpha: float = 0.005, profile: str = "test", n_systems: int = 50, n_removals: int = 50,
               fractions: Iterable[float] = tuple(np.round(np.arange(0.1, 1.0, 0.1), 2)),
               size: int | None = None, users=None, n_users: int | None = None, seed=0,
               shared_permutation: bool = True, threshold: float = 4.0, max_rating: float | None = None,
               train=None, tie_break: str = "more") -> pd.DataFrame:
    """Exp. 3: τ between αβ-nDCG's system rankings with the full and with reduced test sets.

    ``n_systems`` random shuffles of the users' ideal lists (cut at ``size``, default the largest
    cut-off; see :func:`shuffled_runs` for ``shared_permutation``) are ranked by mean αβ-nDCG@k; ``fractions`` of the test ratings are removed
    proportionally by category (:func:`proportional_removal_order`), ``n_removals`` times with
    different seeds; every reduced test set re-judges the same lists. Returns one row per
    (cutoff, beta, fraction, removal) with τ (columns ``cutoff, beta, fraction, removal, tau``).
    ``tie_break``: the ideal ordering's tie-break (:func:`ideal_ordering`).
    """
    qrels = _as_qrels(test, threshold, max_rating)
    cutoffs = sorted({int(k) for k in cutoffs})
    betas = [float(b) for b in betas]
    fractions = [float(f) for f in fractions]
    if not cutoffs or min(cutoffs) <= 0:
        raise InputError("cutoffs must be positive integers")
    for f in fractions:
        if not 0.0 < f < 1.0:
            raise InputError(f"removal fractions must lie in (0, 1), got {f}")
    alpha = _check_unit("alpha", alpha, "ab-nDCG")
    for b in betas:
        _check_unit("beta", b, "ab-nDCG")
    rng = _rng(seed)
    kmax = max(cutoffs)
    size = int(kmax if size is None else size)
    idx = dv.aspect_index(aspects)
    eval_users = _sample_users(qrels, users, n_users, rng)
    ideal = ideal_ordering(qrels, idx, users=eval_users, tie_break=tie_break)
    stacks = shuffled_runs(ideal, n_systems, size, rng, shared=shared_permutation)   # (S, n, size)
    S, n, m = stacks.shape
    if m < kmax:   # lists shorter than the cut-off: pad (positions past the lists contribute nothing)
        stacks = np.concatenate([stacks, np.repeat(stacks[:, :, :1], kmax - m, axis=2)], axis=2)
    items = stacks[:, :, :kmax].reshape(S * n, kmax)
    L = np.minimum(ideal.lengths, min(size, kmax))
    valid = np.broadcast_to(np.arange(kmax)[None, None, :] < L[None, :, None], (S, n, kmax)).reshape(S * n, kmax)
    users_rep = np.tile(eval_users, S)
    pairs = dv.list_pairs(items, valid, idx)
    rmax = float(qrels.max_rating)
    disc = dv.discount(kmax)

    def system_means(q: Qrels) -> dict:
        labels = np.where(valid, q.lookup(users_rep, items), np.nan)
        jd = dv.judgments_from_qrels(q, eval_users, idx)
        gamma = dv.profile_weights(eval_users, idx, profile, train=train, judgments=jd, threshold=q.threshold)
        out = {}
        for b in betas:
            g = dv.ab_gains(items, labels, valid, np.tile(gamma, (S, 1)), alpha, b, rmax, idx, pairs=pairs)
            dcg = np.cumsum(g * disc, axis=1)
            idcg = np.cumsum(dv.ab_ideal_gains(jd, gamma, alpha, b, rmax, kmax) * disc, axis=1)
            for k in cutoffs:
                num = dcg[:, k - 1].reshape(S, n)
                den = idcg[:, k - 1][None, :]
                out[(k, b)] = np.divide(num, den, out=np.zeros_like(num), where=den > 0).mean(axis=1)
        return out

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # users emptied by the removal fall back to uniform γ
        full = system_means(qrels)
        frame = qrels.to_frame()
        rows = []
        for r in range(int(n_removals)):
            rank = proportional_removal_order(frame, idx, rng)
            for f in fractions:
                keep = rank >= int(round(f * len(frame)))
                reduced = system_means(qrels.mask(keep))
                for (k, b), means in reduced.items():
                    rows.append((k, b, f, r, agreement.kendall_tau(full[(k, b)], means)))
    return pd.DataFrame(rows, columns=["cutoff", "beta", "fraction", "removal", "tau"])


def robustness_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean (and standard deviation) of τ over the removals, per (cutoff, beta, fraction): Fig. 4."""
    g = df.groupby(["cutoff", "beta", "fraction"], as_index=False)["tau"]
    return g.agg(tau="mean", sd="std")


# --------------------------------------------------------------------------------------------
# the paper's claims (Table 1, Exps. 1-3) as data, for meta.findings
# --------------------------------------------------------------------------------------------
#: the metrics that weight aspects by the user's interest (Sec. 5.2.4: "the metrics that explicitly
#: consider aspect weight in their formulation")
ASPECT_WEIGHTED = ("ab-nDCG", "EU", "RBU")
SUBTOPIC = ("S-Recall", "S-RR")


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
    """
    from . import axioms as ax
    from .findings import Claim, Evidence, agrees_if

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
