"""Rank-biased precision and its residual (Moffat & Zobel, TOIS 27(1), 2008), vectorised over users.

A user reads the list top-down and goes on from each item to the next with probability ``p``
(the persistence); RBP is the expected gain per item read::

    RBP = (1 - p) * sum_i g_i p^(i-1)

Its residual is how much RBP could still grow if every unjudged item (and every item past the end
of the list) had the highest gain: ``p^d + (1 - p) * sum_{i unjudged, i <= d} p^(i-1)`` for a list
of depth d. Gains (open choice, parameters):

* ``RBP(p=0.8)``: graded, the grade over the user's highest judged grade (so g <= 1 and
  RBP <= 1) — trec_eval's ``rbp`` (m_rbp.c), whose default p is 0.9 (``RBP(p=0.9)``);
* ``RBP(p=0.8,rel=2)``: binary, 1 for grades >= 2 (ir_measures' ``RBP(rel=2)``);
* ``RBP(p=0.8,gain=grade)``: the raw grade (ranx's ``rbp``; exceeds 1 for grades above 1).

Powers of p are built by repeated multiplication and summed in rank order from zero, as
trec_eval does. p must lie in (0, 1).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .registry import register

RBP_GAINS = ("scaled", "grade")


def _check(name: str, p: float) -> None:
    if not 0.0 < p < 1.0:
        raise InputError(f"{name}: persistence p must be in (0, 1), got p={p:g} "
                         f"(e.g. {name}(p=0.8): the user goes on to the next item with probability 0.8)")


def powers(p: float, n: int) -> np.ndarray:
    """``[1, p, p^2, ..., p^n]`` by repeated multiplication (trec_eval's cur_p)."""
    return np.cumprod(np.r_[1.0, np.full(n, p)])


def _user_max_grade(j) -> np.ndarray:
    """Each user's highest judged grade (0 without a positive one): the head of its ideal ranking."""
    from .gains import _ideal

    ig, _, n_pos, start = _ideal(j, {})
    return np.where(n_pos > 0, ig[np.minimum(start, max(len(ig) - 1, 0))] if len(ig) else 0.0, 0.0)


def rbp_gain(j, rel: int = 0, gain: str = "scaled") -> np.ndarray:
    """The gain of each judged hit (0 for negative labels)."""
    vals = j.hits.vals
    if rel:
        return (vals >= rel).astype(np.float64)
    g = np.maximum(vals, 0.0)
    if gain == "scaled":  # m_rbp.c: gains over [0, max] are mapped to [0, 1] when max > 1
        g = g / np.maximum(_user_max_grade(j), 1.0)[j.hits.rows]
    return g


@register("RBP", params={"p": 0.8, "rel": 0, "gain": "scaled"}, perfect=None, trec_eval="rbp",
          check=lambda params: _check("RBP", params["p"]),
          description="Rank-biased precision (Moffat & Zobel 2008): (1-p) sum g_i p^(i-1); graded (grade over the "
                      "user's top grade), binary with rel=N")
def rank_biased_precision(j, k, p=0.8, rel=0, gain="scaled"):
    """``RBP(p=0.9)`` equals trec_eval's ``rbp`` per user, ``RBP(p=0.8,rel=1)`` ranx's ``rbp.8`` and
    ir_measures' ``RBP(rel=1)`` on binary judgments. With a cut-off, items below rank k gain nothing.

    >>> # grades [1, 0, 1], p = 0.5, binary: (1 - 0.5) * (1 + 0.25) = 0.625
    """
    _check("RBP", p)
    if gain not in RBP_GAINS:
        raise InputError(f"RBP: gain must be one of {RBP_GAINS} (grade over the user's top grade, or the raw grade), "
                         f"got {gain!r}")
    if rel < 0:
        raise InputError(f"RBP: rel must be >= 1 (binary gain: grade >= rel) or 0 (graded), got {rel}")
    h = j.hits
    g = rbp_gain(j, rel, gain)
    pw = powers(p, j.depth)
    return (1.0 - p) * j.per_user(g * pw[h.cols], (g != 0) & (h.cols < j.cut(k)))


@register("RBP_resid", params={"p": 0.8, "zero_when_judged": False}, perfect=None, trec_eval="rbp_resid",
          check=lambda params: _check("RBP_resid", params["p"]),
          description="RBP residual: the RBP the unjudged items and the items past the list could still add "
                      "(Moffat & Zobel 2008)")
def rbp_residual(j, k, p=0.8, zero_when_judged=False):
    """``p^d + (1 - p) * sum over unjudged ranks i <= d of p^(i-1)``, d the list's depth (or k).
    ``zero_when_judged=true`` is trec_eval's ``rbp_resid`` (m_rbp_resid.c), which is 0 for a list
    without unjudged items even though the items past its end are unknown."""
    _check("RBP_resid", p)
    h = j.hits
    kk = j.cut(k)
    depth = np.minimum(j.lengths, kk)
    pw = powers(p, j.depth)
    judged = (h.vals >= 0) & (h.cols < kk)
    resid = pw[depth] + (1.0 - p) * _unjudged_mass(j, pw, depth, judged)
    if zero_when_judged:
        resid = np.where(depth - j.per_user(1.0, judged) > 0, resid, 0.0)
    return resid


def _unjudged_mass(j, pw: np.ndarray, depth: np.ndarray, judged: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """Sum of ``pw[i]`` over the unjudged ranks i < depth of each user, added in rank order (as
    trec_eval adds them: a total minus the judged part would round differently); chunks of about
    ``chunk`` list cells."""
    n = len(depth)
    out = np.zeros(n)
    ends = np.cumsum(depth)
    starts = ends - depth
    hit_flat = starts[j.hits.rows[judged]] + j.hits.cols[judged]  # cell of each judged hit
    u0 = 0
    while u0 < n:
        u1 = int(np.searchsorted(ends, starts[u0] + chunk, side="right"))
        u1 = max(u1, u0 + 1)
        c0, c1 = starts[u0], ends[u1 - 1]
        local = np.repeat(np.arange(u1 - u0), depth[u0:u1])
        w = pw[np.arange(c1 - c0) - (starts[u0:u1] - c0)[local]]
        lo, hi = np.searchsorted(hit_flat, [c0, c1])
        w[hit_flat[lo:hi] - c0] = 0.0
        out[u0:u1] = np.bincount(local, weights=w, minlength=u1 - u0)
        u0 = u1
    return out
