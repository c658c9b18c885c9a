"""Analytic expectations and bounds of paper 004 (§4.4-4.6) and the uniform-test-profile split.

* :func:`expected_random_precision` — E[P_RND@n] of a design, computed exactly from its target-set
  sizes: 1R gives 1/t with 1/t = avg 1/|T_u^r| (Eq. 4.5); AR gives avg_u ρ_u, ρ_u = |PR_test(u)|/|T_u|
  (the form of Eq. 4.4 stated under it), with the min(n, |T_u|)/n correction for short sets.
* :func:`sigma_delta` — the closed form σ·δ = σ·pr/(t|U|) of Eq. 4.4.
* :func:`eq42_bounds` — the lemma of Eq. 4.2: |U|·P@n/pr_test <= 1RP@n <= Σ_u m_u P_u@m_u/(n pr_test),
  m_u = n + pr_test(u) - 1, computed on the AR sets T_u = PR_test(u) ∪ N_u with the same N_u as 1R.
* :func:`uniform_size` / :func:`uniform_split` — §4.6.2: ζ = max{k : (1-ε) r(i_k) k / r >= σ},
  T = the ζ most popular items, η = (1-ε) r(i_ζ) test ratings per item ("so that η = (1 − ε)
  r(i_ζ)"), rounded to the nearest integer. On MovieLens 1M's statistics (r = 1,000,209, σ = ε = 0.2)
  this gives the thesis' |T| = 1,703 and η = 118; the earlier rule η = round(σ r/|T|) gave 117
  (117.46). The test ratio reached, |T| η / r, is reported (``test_ratio``; ≥ σ up to the rounding),
  and so is the smallest training share left to an item of T (``train_share_min``; rounding η up can
  leave the least popular items of T a fraction of a rating under ε).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .designs import Design, parse
from .targets import build_targets, check_system, popularity, rank_sets, score_sets


def random_precision_per_set(ts, n: int = 10, threshold: float | None = None) -> np.ndarray:
    """E[P@n] of a random ranking of each target set of ``ts`` (:func:`~recmetrics.protocols.build_targets`):
    1R: min(n, |T|)/n · 1/|T| (Eq. 4.5 per set); AR: min(n, |T|)/n · |PR_test(u) ∩ T|/|T| (ρ_u, the
    per-user form of Eq. 4.4). Averaged as the design averages them (Eq. 4.1; P1R: mean of the
    percentile means) it is the design's random expectation; a set left short by a small pool
    counts with its actual size."""
    lengths = ts.lengths.astype(np.float64)
    if ts.rel_item is not None:
        return np.minimum(n, lengths) / n / lengths
    th = ts.metadata.get("threshold", 4.0) if threshold is None else threshold
    n_rel = ts.qrels.assign(rel=ts.qrels["rating"] >= th).groupby("set")["rel"].sum()
    n_rel = n_rel.reindex(np.arange(len(ts.lengths)), fill_value=0).to_numpy()
    return np.minimum(n, lengths) / n * n_rel / lengths


def random_precision_variance_per_set(ts, n: int = 10, threshold: float | None = None) -> np.ndarray:
    """Var[P@n] of a random ranking of each target set of ``ts``: the hits in the top min(n, |T|) are
    hypergeometric (min(n, |T|) draws from |T| items of which K are relevant; 1R: K = 1), so
    Var[P@n] = k (K/|T|)(1 - K/|T|)(|T| - k)/(|T| - 1) / n², k = min(n, |T|)."""
    T = ts.lengths.astype(np.float64)
    k = np.minimum(n, T)
    if ts.rel_item is not None:
        K = np.ones(len(T))
    else:
        th = ts.metadata.get("threshold", 4.0) if threshold is None else threshold
        K = ts.qrels.assign(rel=ts.qrels["rating"] >= th).groupby("set")["rel"].sum()
        K = K.reindex(np.arange(len(T)), fill_value=0).to_numpy(dtype=np.float64)
    q = K / T
    with np.errstate(invalid="ignore", divide="ignore"):
        fpc = np.where(T > 1, (T - k) / np.maximum(T - 1, 1), 0.0)
    return k * q * (1 - q) * fpc / n ** 2


def expected_random_precision(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design", n: int = 10, *,
                              threshold: float = 4.0, seed: int = 0, users=None, targets=None) -> float:
    """E[P@n] of a random ranking under ``design`` (Eq. 4.5 for 1R, Eq. 4.4's avg_u ρ_u for AR),
    from the actual target-set sizes (:func:`random_precision_per_set`; they do not depend on the seed
    unless an NN pool is short). ``targets`` reuses sets built by :func:`build_targets`.

    >>> import recmetrics as rm
    >>> train, test = rm.splits.holdout(rm.datasets.load("movielens-small").ratings, 0.2, seed=0)
    >>> round(expected_random_precision(train, test, "TI-1R-NN(n=99)", threshold=5), 12)  # 1/t, t = 100
    0.01
    """
    d = parse(design)
    ts = targets if targets is not None else build_targets(train, test, d, threshold=threshold, seed=seed,
                                                            users=users)
    per = random_precision_per_set(ts, n, threshold)
    if d.kind == "P1R":
        return float(pd.Series(per).groupby(ts.group).mean().mean())
    return float(per.mean())


def sigma_delta(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design" = "TI-AR-AN", *,
                threshold: float = 4.0, seed: int = 0) -> dict:
    """Eq. 4.4's closed form: σ = |test|/(|train|+|test|), δ = pr/(t|U|) with pr the positive ratings
    (train + test), t the harmonic mean of |T_u| and U the evaluated users. Returns σ, δ, t, σ·δ."""
    d = parse(design)
    ts = build_targets(train, test, d, threshold=threshold, seed=seed)
    sigma = len(test) / (len(train) + len(test))
    pr = int((train["rating"] >= threshold).sum() + (test["rating"] >= threshold).sum())
    t = float(1.0 / np.mean(1.0 / ts.lengths))
    n_users = int(pd.unique(ts.users).size)
    delta = pr / (t * n_users)
    return {"sigma": sigma, "delta": delta, "t": t, "users": n_users, "pr": pr, "sigma_delta": sigma * delta}


def eq42_bounds(system, train: pd.DataFrame, test: pd.DataFrame, n: int = 10, *, size: int = 100,
                candidates: str = "TI", threshold: float = 4.0, seed: int = 0, users=None, targets=None) -> dict:
    """1RP@n of ``system`` under ``{candidates}-1R-NN(n=size)`` and its Eq. 4.2 bounds from the AR sets
    with the same N_u (same seed). Returns ``lower, value, upper``; lower <= value <= upper holds exactly
    because ties are broken by one random key per item shared by every set. ``targets``: the two
    sets' builds ``(1R, AR)`` with these arguments, when the caller has them (several systems share them)."""
    check_system(system, "eq42_bounds")
    if targets is None:
        targets = (build_targets(train, test, f"{candidates}-1R-NN(n={size})", threshold=threshold, seed=seed,
                                 users=users),
                   build_targets(train, test, f"{candidates}-AR-NN(n={size})", threshold=threshold, seed=seed,
                                 users=users))
    one, ar = targets
    _, pos1 = rank_sets(one, score_sets(system, one), seed, depth=n)   # only whether a rank is below n counts
    hit1 = pos1[one.starts[:-1]] < n  # the relevant item is first in each 1R set
    pr_test = len(hit1)
    set_of = np.repeat(np.arange(len(ar.lengths)), ar.lengths)
    rel_set = ar.qrels[ar.qrels["rating"] >= threshold]
    key = pd.MultiIndex.from_arrays([set_of, ar.items])
    rel_key = pd.MultiIndex.from_arrays([rel_set["set"].to_numpy(), rel_set["item"].to_numpy()])
    is_rel = key.isin(rel_key)
    n_rel = np.bincount(set_of[is_rel], minlength=len(ar.lengths))
    m_u = n + n_rel - 1
    # a relevant item counts when ranked above n or above m_u: the ranks below max(n, m_u) are not needed
    _, pos = rank_sets(ar, score_sets(system, ar), seed, depth=int(max(n, m_u.max(initial=n))))
    lower = float((pos[is_rel] < n).sum()) / (n * pr_test)  # |U| P@n / pr_test = Σ_u hits_u@n / (n pr_test)
    upper = np.bincount(set_of[is_rel], weights=pos[is_rel] < m_u[set_of[is_rel]],
                        minlength=len(ar.lengths)).sum() / (n * pr_test)
    return {"lower": float(lower), "value": float(hit1.sum() / (n * pr_test)), "upper": float(upper),
            "pr_test": pr_test, "users": len(ar.lengths)}


def uniform_size(counts, sigma: float = 0.2, eps: float = 0.2) -> tuple[int, int]:
    """(ζ, η) of §4.6.2 from the item popularity counts r(i) (any order): ζ = max{k : (1-ε) r(i_k) k / r >= σ}
    over the items sorted by decreasing r(i), and η = (1-ε) r(i_ζ) rounded to the nearest integer
    (at least 1, at most r(i_ζ) - 1 so every item of T keeps a training rating).

    >>> import numpy as np
    >>> # MovieLens 1M as far as the thesis fixes it: 3,706 items, r = 1,000,209 ratings, and the count
    >>> # r(i_1703) = 147 at the edge of T that |T| = 1,703 implies (r(i_1703) >= 147 > r(i_1704))
    >>> counts = np.r_[np.full(200, 3696), np.full(1503, 147), np.full(2003, 20)]
    >>> counts[0] += 1_000_209 - counts.sum()
    >>> uniform_size(counts, 0.2, 0.2)  # the thesis: |T| = 1,703, η = 118 (round(0.8 · 147) = round(117.6))
    (1703, 118)
    """
    for name, v in (("sigma", sigma), ("eps", eps)):
        if not (isinstance(v, (int, float)) and 0 < v < 1):
            raise InputError(f"uniform_split: {name} must be in (0, 1), got {v!r}")
    r_i = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    r = int(r_i.sum())
    k = np.arange(1, len(r_i) + 1)
    feas = (1 - eps) * r_i * k / r
    ok = np.flatnonzero(feas >= sigma)
    if len(ok) == 0:
        raise InputError(f"uniform_split: no item set T satisfies (1-ε) r(i_k) k / r >= σ for σ={sigma:g}, "
                         f"ε={eps:g}; the largest feasible σ is {feas.max():.4f} (or lower ε)")
    zeta = int(ok.max()) + 1
    eta = int(np.floor((1 - eps) * r_i[zeta - 1] + 0.5))
    eta = max(1, min(eta, int(r_i[zeta - 1]) - 1))
    return zeta, eta


def uniform_split(ratings: pd.DataFrame, sigma: float = 0.2, eps: float = 0.2, *, folds: int | None = None,
                  seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """§4.6.2 split where every test item has η test ratings: returns ``(train, test, info)`` with
    ``info = {T, eta, zeta, sigma, eps, test_ratio, train_share_min}`` (:func:`uniform_size`;
    ``test_ratio`` = |T| η / r, the test share reached). Use with designs U1R / UAR (C = T).

    Errors: σ or ε outside (0, 1); ε < 1/folds (each fold must leave an item ε of its ratings);
    no k with (1-ε) r(i_k) k / r >= σ (the message gives the largest feasible σ).

    >>> import recmetrics as rm
    >>> train, test, info = uniform_split(rm.datasets.load("movielens-small").ratings, 0.2, 0.2)
    >>> info["T"], info["eta"], round(info["test_ratio"], 3)
    (1566, 13, 0.204)
    """
    if folds is not None and eps < 1.0 / folds:
        raise InputError(f"uniform_split: eps={eps:g} < 1/folds = {1 / folds:g}; with {folds} folds use eps >= {1 / folds:g}")
    r_i = popularity(ratings)
    zeta, eta = uniform_size(r_i.to_numpy(), sigma, eps)
    T = r_i.index[:zeta].to_numpy()
    rng = np.random.default_rng(seed)
    keys = rng.random(len(ratings))
    in_T = ratings["item"].isin(set(T)).to_numpy()
    frame = pd.DataFrame({"item": ratings["item"].to_numpy(), "key": keys})
    rank = frame.groupby("item")["key"].rank(method="first").to_numpy()
    is_test = in_T & (rank <= eta)
    info = {"T": len(T), "eta": eta, "zeta": zeta, "sigma": sigma, "eps": eps,
            "test_ratio": float(is_test.mean()), "train_share_min": float(1 - eta / r_i.iloc[zeta - 1])}
    return ratings[~is_test].reset_index(drop=True), ratings[is_test].reset_index(drop=True), info
