"""Analytic expectations and bounds of paper 004 (§4.4-4.6) and the uniform-test-profile split.

* :func:`expected_random_precision` — E[P_RND@n] of a design, computed exactly from its target-set
  sizes: 1R gives 1/t with 1/t = avg 1/|T_u^r| (Eq. 4.5); AR gives avg_u ρ_u, ρ_u = |PR_test(u)|/|T_u|
  (the form of Eq. 4.4 stated under it), with the min(n, |T_u|)/n correction for short sets.
* :func:`sigma_delta` — the closed form σ·δ = σ·pr/(t|U|) of Eq. 4.4.
* :func:`eq42_bounds` — the lemma of Eq. 4.2: |U|·P@n/pr_test <= 1RP@n <= Σ_u m_u P_u@m_u/(n pr_test),
  m_u = n + pr_test(u) - 1, computed on the AR sets T_u = PR_test(u) ∪ N_u with the same N_u as 1R.
* :func:`uniform_split` — §4.6.2: ζ = max{k : (1-ε) r(i_k) k / r >= σ}, T = the ζ most popular items,
  η = σ r/|T| test ratings per item (the thesis' MovieLens 1M numbers, |T| = 1,703 and η = 118, are
  σ r/|T| = 0.2·1,000,209/1,703 ≈ 117.5; η <= (1-ε) r(i_ζ) by the choice of ζ).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .designs import Design, parse
from .targets import build_targets, check_system, popularity, rank_sets, score_sets


def expected_random_precision(train: pd.DataFrame, test: pd.DataFrame, design: "str | Design", n: int = 10, *,
                              threshold: float = 4.0, seed: int = 0, users=None) -> float:
    """E[P@n] of a random ranking under ``design`` (Eq. 4.5 for 1R, Eq. 4.4's avg_u ρ_u for AR),
    from the actual target-set sizes (which do not depend on the seed)."""
    d = parse(design)
    ts = build_targets(train, test, d, threshold=threshold, seed=seed, users=users)
    if ts.rel_item is not None:
        per = np.minimum(n, ts.lengths) / n / ts.lengths
        if d.kind == "P1R":
            return float(pd.Series(per).groupby(ts.group).mean().mean())
        return float(per.mean())
    n_rel = ts.qrels.assign(rel=ts.qrels["rating"] >= threshold).groupby("set")["rel"].sum()
    n_rel = n_rel.reindex(np.arange(len(ts.lengths)), fill_value=0).to_numpy()
    return float(np.mean(np.minimum(n, ts.lengths) / n * n_rel / ts.lengths))


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
                candidates: str = "TI", threshold: float = 4.0, seed: int = 0, users=None) -> dict:
    """1RP@n of ``system`` under ``{candidates}-1R-NN(n=size)`` and its Eq. 4.2 bounds from the AR sets
    with the same N_u (same seed). Returns ``lower, value, upper``; lower <= value <= upper holds exactly
    because ties are broken by one random key per item shared by every set."""
    check_system(system, "eq42_bounds")
    one = build_targets(train, test, f"{candidates}-1R-NN(n={size})", threshold=threshold, seed=seed, users=users)
    ar = build_targets(train, test, f"{candidates}-AR-NN(n={size})", threshold=threshold, seed=seed, users=users)
    _, pos1 = rank_sets(one, score_sets(system, one), seed)
    hit1 = pos1[one.starts[:-1]] < n  # the relevant item is first in each 1R set
    pr_test = len(hit1)
    _, pos = rank_sets(ar, score_sets(system, ar), seed)
    set_of = np.repeat(np.arange(len(ar.lengths)), ar.lengths)
    rel_set = ar.qrels[ar.qrels["rating"] >= threshold]
    key = pd.MultiIndex.from_arrays([set_of, ar.items])
    rel_key = pd.MultiIndex.from_arrays([rel_set["set"].to_numpy(), rel_set["item"].to_numpy()])
    is_rel = key.isin(rel_key)
    n_rel = np.bincount(set_of[is_rel], minlength=len(ar.lengths))
    m_u = n + n_rel - 1
    lower = float((pos[is_rel] < n).sum()) / (n * pr_test)  # |U| P@n / pr_test = Σ_u hits_u@n / (n pr_test)
    upper = np.bincount(set_of[is_rel], weights=pos[is_rel] < m_u[set_of[is_rel]],
                        minlength=len(ar.lengths)).sum() / (n * pr_test)
    return {"lower": float(lower), "value": float(hit1.sum() / (n * pr_test)), "upper": float(upper),
            "pr_test": pr_test, "users": len(ar.lengths)}


def uniform_split(ratings: pd.DataFrame, sigma: float = 0.2, eps: float = 0.2, *, folds: int | None = None,
                  seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """§4.6.2 split where every test item has η test ratings: returns ``(train, test, info)`` with
    ``info = {T, eta, zeta, sigma, eps, eta_max}``. Use with designs U1R / UAR (C = T).

    Errors: σ or ε outside (0, 1); ε < 1/folds (each fold must leave an item ε of its ratings);
    no k with (1-ε) r(i_k) k / r >= σ (the message gives the largest feasible σ)."""
    for name, v in (("sigma", sigma), ("eps", eps)):
        if not (isinstance(v, (int, float)) and 0 < v < 1):
            raise InputError(f"uniform_split: {name} must be in (0, 1), got {v!r}")
    if folds is not None and eps < 1.0 / folds:
        raise InputError(f"uniform_split: eps={eps:g} < 1/folds = {1 / folds:g}; with {folds} folds use eps >= {1 / folds:g}")
    r_i = popularity(ratings)
    r = len(ratings)
    k = np.arange(1, len(r_i) + 1)
    feas = (1 - eps) * r_i.to_numpy() * k / r
    ok = np.flatnonzero(feas >= sigma)
    if len(ok) == 0:
        raise InputError(f"uniform_split: no item set T satisfies (1-ε) r(i_k) k / r >= σ for σ={sigma:g}, "
                         f"ε={eps:g}; the largest feasible σ is {feas.max():.4f} (or lower ε)")
    zeta = int(ok.max()) + 1
    T = r_i.index[:zeta].to_numpy()
    eta = int(round(sigma * r / zeta))
    eta_max = int(np.floor((1 - eps) * r_i.iloc[zeta - 1]))
    eta = max(1, min(eta, eta_max))
    rng = np.random.default_rng(seed)
    keys = rng.random(len(ratings))
    in_T = ratings["item"].isin(set(T)).to_numpy()
    frame = pd.DataFrame({"item": ratings["item"].to_numpy(), "key": keys})
    rank = frame.groupby("item")["key"].rank(method="first").to_numpy()
    is_test = in_T & (rank <= eta)
    info = {"T": len(T), "eta": eta, "zeta": zeta, "eta_max": eta_max, "sigma": sigma, "eps": eps,
            "test_ratio": float(is_test.mean())}
    return ratings[~is_test].reset_index(drop=True), ratings[is_test].reset_index(drop=True), info
