r"""Exp. 3 of Parapar & Radlinski (RecSys 2021, Sec. 5.4): robustness of αβ-nDCG to incompleteness.

Random systems (shuffles of the users' ideal lists, :func:`~.families.shuffled_runs`) are ranked
by mean αβ-nDCG@k with the full test set and with test sets reduced by removing a fraction of the
ratings proportionally by category (:func:`proportional_removal_order`); :func:`robustness` gives
Kendall's τ between the two system rankings for every (cut-off, β, fraction, removal) and
:func:`robustness_summary` its mean and standard deviation over the removals (Fig. 4). The lists
are built once: every reduced test set re-judges the same lists (:mod:`.fixed_lists`: their pairs,
judgments and γ cells prepared once, each cell's judgment and aspects carried from the ideal lists
by the shuffle (:func:`~.families.shuffled_order`); each set's judgments filtered from the full
set's; the ideal of every β in one greedy pass, the full set's once for every draw of systems —
bit-identical to ``ab_ideal_gains`` and to ``ab_gains`` followed by the running DCG).

(The incompleteness scenarios of Valcarce et al. for any metric live in
:mod:`recmetrics.meta.robustness`.)
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ...errors import InputError
from ...metrics import diversity as dv
from ...metrics.diversity.params import check_unit
from .. import agreement
from ._inputs import _as_qrels, _rng, _sample_users
from .families import shuffled_order
from .fixed_lists import FixedLists, ideal_dcg, reduced_judgments
from .ideal import ideal_ordering

__all__ = ["proportional_removal_order", "robustness", "robustness_by_draw", "robustness_summary", "SYSTEM_DRAWS"]

#: how Exp. 3 draws its shuffled systems (:func:`robustness` ``systems=``): one set for every removal, or a new set per removal
SYSTEM_DRAWS = ("once", "per-removal")


def proportional_removal_order(test: pd.DataFrame, aspects, seed=0) -> np.ndarray:
    """Removal rank of every test rating (row order of ``test``): remove ranks < f·N to drop a fraction f.

    Proportional by category: each rating is assigned to one of its item's aspects at random (items
    without aspects form their own stratum); within a stratum the order is random, and strata are
    interleaved by relative position, so any prefix removes the same share of every category.
    A rating at position i (0-based) of a stratum of size n gets the key (i + U)/n, U ~ uniform(0, 1),
    and the ranks sort the keys; the removals for growing f are nested. Sec. 5.4 of Parapar &
    Radlinski (RecSys 2021) says "we distribute the item removals among the categories
    proportionally to the category presence"; assigning a multi-aspect item's rating to one
    aspect at random is this package's reading. ``seed``: an int or a ``numpy.random.Generator``.

    Examples
    --------
    >>> import pandas as pd
    >>> test = pd.DataFrame({"user": [1] * 5 + [2] * 4,
    ...                      "item": ["x1", "x2", "x3", "y1", "y2", "x1", "x4", "x5", "y3"],
    ...                      "rating": [5.0, 4, 3, 5, 2, 4, 4, 5, 3]})
    >>> aspects = {i: (i[0],) for i in test["item"]}        # six x ratings, three y ratings
    >>> rank = proportional_removal_order(test, aspects, seed=0)
    >>> sorted(rank.tolist()) == list(range(9))
    True
    >>> test["item"][rank < 3].str[0].value_counts().to_dict()   # a third removed: 2 of x, 1 of y
    {'x': 2, 'y': 1}
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
               train=None, tie_break: str = "more", systems: str = "once") -> pd.DataFrame:
    """Exp. 3: τ between αβ-nDCG's system rankings with the full and with reduced test sets.

    ``n_systems`` random shuffles of the users' ideal lists (cut at ``size``, default the largest
    cut-off; see :func:`shuffled_runs` for ``shared_permutation``) are ranked by mean αβ-nDCG@k; ``fractions`` of the test ratings are removed
    proportionally by category (:func:`proportional_removal_order`), ``n_removals`` times with
    different seeds; every reduced test set re-judges the same lists. Returns one row per
    (cutoff, beta, fraction, removal) with τ (columns ``cutoff, beta, fraction, removal, tau``).
    ``tie_break``: the ideal ordering's tie-break (:func:`ideal_ordering`).

    ``systems`` (:data:`SYSTEM_DRAWS`): ``"once"`` (default) shuffles one set of systems that every
    removal re-judges; ``"per-removal"`` shuffles a new set for each removal (rankings with the full
    and the reduced set still compare the same systems). Sec. 5.4 says "we use 50 systems produced
    by random shuffles ... We produce 50 different removals and report averaged values", which
    reads either way. The choice decides what the removals' spread measures: with one set it is the
    removals' noise around *these* systems, and a comparison of β's (paired by removal) decides on
    one draw of systems, whose own luck it never sees; with a set per removal every removal is an
    independent replicate of the whole experiment, so the spread includes the draw of the systems.
    :func:`robustness_by_draw` runs several draws on the same removals.

    Random streams: ``seed`` samples the users (``n_users``), then gives the systems' shuffles and
    the removals a stream each, so the removals do not depend on how the systems are drawn: removal
    ``r`` is the same under either draw, and so is the first set of systems (the one ``"once"``
    keeps) — two draws compared removal by removal differ only in the later sets of systems.

    τ(k, β, f, r) = τ_b((mean_u αβ-nDCG@k(s, full))_s, (mean_u αβ-nDCG@k(s, reduced_{f,r}))_s)
    over the systems s (:func:`recmetrics.meta.agreement.kendall_tau`). The reduced test set
    changes the judgments, the users' aspect weights (``profile``, default ``"test"``: Eq. 9 over
    the test ratings, as the paper's Sec. 5) and the ideal gains; the evaluated users stay those
    of the full set (default: the users with a relevant item, or ``users``; ``n_users`` samples
    them, seeded), a user emptied by the removal scoring 0 with uniform weights.
    Defaults: the paper's α = 0.005, cut-offs 10 and 100, 50 systems and 50 removals; the β grid
    (0.25 ... 1) and the fractions 10 %-90 % are choices. ``train``: training ratings for
    ``profile="train"``. A cut-off <= 0 or a fraction outside (0, 1) raises ``InputError``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> aspects = {f"i{j}": tuple(a for a in "ABC" if rng.random() < 0.5) for j in range(30)}
    >>> test = pd.DataFrame([(u, f"i{j}", float(rng.integers(1, 6))) for u in range(8)
    ...                      for j in rng.choice(30, 12, replace=False)], columns=["user", "item", "rating"])
    >>> robustness(test, aspects, cutoffs=(5,), betas=(0.5,), n_systems=5, n_removals=2,
    ...            fractions=(0.2, 0.5), seed=0).round(3)
       cutoff  beta  fraction  removal    tau
    0       5   0.5       0.2        0  1.000
    1       5   0.5       0.5        0  1.000
    2       5   0.5       0.2        1  0.333
    3       5   0.5       0.5        1 -0.333
    """
    if systems not in SYSTEM_DRAWS:
        raise InputError(f"systems must be one of {SYSTEM_DRAWS}, got {systems!r}")
    return _robustness(test, aspects, [systems], cutoffs=cutoffs, betas=betas, alpha=alpha, profile=profile,
                       n_systems=n_systems, n_removals=n_removals, fractions=fractions, size=size, users=users,
                       n_users=n_users, seed=seed, shared_permutation=shared_permutation, threshold=threshold,
                       max_rating=max_rating, train=train, tie_break=tie_break)[systems]


def robustness_by_draw(test, aspects, *, draws: Iterable[str] = SYSTEM_DRAWS, **kw) -> dict[str, pd.DataFrame]:
    """``{draw: robustness(test, aspects, systems=draw, **kw)}`` for each draw of ``draws``
    (:data:`SYSTEM_DRAWS`), each table equal to :func:`robustness`'s alone, computed on common
    removals: each reduced test set's judgments, aspect weights and ideal gains once for every draw,
    and the first set of systems once. The draws' τ are paired by removal (common random numbers),
    so their difference is the draw's alone, not the removals' luck as well. ``kw``: the keywords
    of :func:`robustness` but ``systems``, with its defaults.

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> aspects = {f"i{j}": tuple(a for a in "ABC" if rng.random() < 0.5) for j in range(30)}
    >>> test = pd.DataFrame([(u, f"i{j}", float(rng.integers(1, 6))) for u in range(8)
    ...                      for j in rng.choice(30, 12, replace=False)], columns=["user", "item", "rating"])
    >>> both = robustness_by_draw(test, aspects, cutoffs=(5,), betas=(0.5,), n_systems=5, n_removals=3,
    ...                           fractions=(0.5,), seed=0)
    >>> pd.DataFrame({d: t["tau"] for d, t in both.items()}).round(3)   # removal 0: the same systems
        once  per-removal
    0  1.000          1.0
    1 -0.333         -0.8
    2  0.333          0.4
    """
    import inspect

    draws = list(dict.fromkeys(draws))
    bad = [d for d in draws if d not in SYSTEM_DRAWS]
    if not draws or bad:
        raise InputError(f"draws must be among {SYSTEM_DRAWS}, got {bad[0] if bad else 'none'!r}")
    defaults = {name: p.default for name, p in inspect.signature(robustness).parameters.items()
                if p.kind is p.KEYWORD_ONLY and name != "systems"}   # one set of defaults: robustness'
    unknown = sorted(set(kw) - set(defaults))
    if unknown:
        raise TypeError(f"robustness_by_draw() got an unexpected keyword argument {unknown[0]!r}")
    return _robustness(test, aspects, draws, **{**defaults, **kw})


def _robustness(test, aspects, draws: list, *, cutoffs, betas, alpha, profile, n_systems, n_removals, fractions,
                size, users, n_users, seed, shared_permutation, threshold, max_rating, train,
                tie_break) -> dict[str, pd.DataFrame]:
    """Exp. 3 for each draw of systems of ``draws`` on common removals (:func:`robustness_by_draw`)."""
    qrels = _as_qrels(test, threshold, max_rating)
    cutoffs = sorted({int(k) for k in cutoffs})
    betas = [float(b) for b in betas]
    fractions = [float(f) for f in fractions]
    if not cutoffs or min(cutoffs) <= 0:
        raise InputError("cutoffs must be positive integers")
    for f in fractions:
        if not 0.0 < f < 1.0:
            raise InputError(f"removal fractions must lie in (0, 1), got {f}")
    alpha = check_unit("alpha", alpha, "ab-nDCG")
    for b in betas:
        check_unit("beta", b, "ab-nDCG")
    rng = _rng(seed)
    kmax = max(cutoffs)
    size = int(kmax if size is None else size)
    idx = dv.aspect_index(aspects)
    eval_users = _sample_users(qrels, users, n_users, rng)
    # a stream each for the systems' shuffles and the removals: every draw of systems meets the same removals
    system_rng, removal_rng = (np.random.default_rng(int(s)) for s in rng.integers(0, 2**62, size=2))
    ideal = ideal_ordering(qrels, idx, users=eval_users, tie_break=tie_break)
    rmax = float(qrels.max_rating)
    disc = dv.discount(kmax)
    frame = qrels.to_frame()
    ratings = frame["rating"].to_numpy(dtype=np.float64)
    full_jd = dv.judgments_from_qrels(qrels, eval_users, idx)
    jd_pos = qrels.positions(np.asarray(eval_users)[full_jd.row], full_jd.items[:, None])[:, 0]
    # what every shuffle carries from the ideal lists: each position's judgment and aspects
    m = min(size, ideal.items.shape[1])
    head = ideal.items[:, :m]
    in_list = np.arange(m)[None, :] < np.minimum(ideal.lengths, m)[:, None]
    ideal_at = np.where(in_list, qrels.positions(eval_users, head), -1)
    ideal_aspects = idx.positions(head)

    def draw() -> tuple:
        """One set of shuffled systems: its lists (judged once against the full test set) and its
        ``(n_systems,)`` means on the full set per (cut-off, β)."""
        order = shuffled_order(ideal, n_systems, size, system_rng, shared=shared_permutation)   # (S, n, m)
        S, n, _ = order.shape
        # lists shorter than the cut-off: padded (positions past the lists contribute nothing)
        order = np.concatenate([order, np.repeat(order[:, :, :1], max(kmax - m, 0), axis=2)], axis=2)[:, :, :kmax]
        L = np.minimum(ideal.lengths, min(size, kmax))
        valid = np.broadcast_to(np.arange(kmax)[None, None, :] < L[None, :, None], (S, n, kmax)).reshape(S * n, kmax)

        def carried(per_position: np.ndarray) -> np.ndarray:
            return np.take_along_axis(np.broadcast_to(per_position, (S, n, m)), order, axis=2).reshape(S * n, kmax)

        # the lists never change: each cell's judgment is known from the ideal list, and a reduced set
        # (a mask of the judgments) keeps the cells whose judgment it keeps
        lists = FixedLists(carried(head), valid, np.tile(np.arange(n), S), idx, np.where(valid, carried(ideal_at), -1),
                           ratings, positions=carried(ideal_aspects))
        return lists, S, system_means(lists, S, full_keep, full_gamma, full_ideal)

    def reduced_set(keep: np.ndarray) -> tuple:
        """A reduced test set's aspect weights and ideal DCGs (what every draw of systems shares)."""
        jd = reduced_judgments(full_jd, jd_pos, keep)
        gamma = dv.profile_weights(eval_users, idx, profile, train=train, judgments=jd, threshold=qrels.threshold)
        return gamma, ideal_dcg(jd, gamma, betas, rmax, kmax, disc)

    def system_means(lists, S: int, keep: np.ndarray, gamma: np.ndarray, idcg: dict) -> dict:
        dcg = lists.dcg(keep, gamma, alpha, betas, rmax, cutoffs, disc)
        out = {}
        for b in betas:
            for k in cutoffs:
                num = dcg[(k, b)].reshape(S, -1)
                den = idcg[b][:, k - 1][None, :]
                out[(k, b)] = np.divide(num, den, out=np.zeros_like(num), where=den > 0).mean(axis=1)
        return out

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # users emptied by the removal fall back to uniform γ
        full_keep = np.ones(len(frame), dtype=bool)
        full_gamma = dv.profile_weights(eval_users, idx, profile, train=train, judgments=full_jd,
                                        threshold=qrels.threshold)
        full_ideal = ideal_dcg(full_jd, full_gamma, betas, rmax, kmax, disc)   # every draw's, computed once
        first = draw()                      # the set "once" keeps and "per-removal" judges at removal 0
        rows: dict[str, list] = {d: [] for d in draws}
        for r in range(int(n_removals)):
            fresh = draw() if r and "per-removal" in draws else first
            drawn = {d: first if d == "once" else fresh for d in draws}
            rank = proportional_removal_order(frame, idx, removal_rng)
            for f in fractions:
                keep = rank >= int(round(f * len(frame)))
                gamma, idcg = reduced_set(keep)
                done: dict[int, dict] = {}   # draws judging the same set of systems share its means
                for d, (lists, S, full) in drawn.items():
                    if id(lists) not in done:
                        done[id(lists)] = system_means(lists, S, keep, gamma, idcg)
                    for (k, b), means in done[id(lists)].items():
                        rows[d].append((k, b, f, r, agreement.kendall_tau(full[(k, b)], means)))
    return {d: pd.DataFrame(rows[d], columns=["cutoff", "beta", "fraction", "removal", "tau"]) for d in draws}


def robustness_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean τ over the removals per (cutoff, beta, fraction), with its spread and Monte Carlo error: Fig. 4.

    tau = (1/R) Σ_r τ(k, β, f, r), sd its sample standard deviation (ddof = 1, NaN for one
    removal) over the R removals of :func:`robustness`, n = R and se = sd/√R, the Monte Carlo
    standard error of the mean a claim about it must clear (Parapar & Radlinski, RecSys 2021,
    Sec. 5.4 report averaged values). Columns ``cutoff, beta, fraction, tau, sd, n, se``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"cutoff": 5, "beta": 0.5, "fraction": [0.2, 0.2, 0.5, 0.5],
    ...                    "removal": [0, 1, 0, 1], "tau": [0.8, 0.4, -0.8, 0.0]})
    >>> robustness_summary(df).round(3)
       cutoff  beta  fraction  tau     sd  n   se
    0       5   0.5       0.2  0.6  0.283  2  0.2
    1       5   0.5       0.5 -0.4  0.566  2  0.4
    """
    g = df.groupby(["cutoff", "beta", "fraction"], as_index=False)["tau"]
    out = g.agg(tau="mean", sd="std", n="count")
    out["se"] = out["sd"] / np.sqrt(out["n"])
    return out
