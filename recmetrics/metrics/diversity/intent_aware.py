r"""The intent-aware family: ERR-IA, P-IA, nDCG-IA (Agrawal et al. 2009; Chapelle et al. 2009).

Each is :math:`\sum_\phi \gamma^u_\phi M_\phi` with :math:`\gamma^u` the user's aspect weights
(:mod:`.weights`, ``profile`` default ``"train"``) and :math:`M_\phi` the metric computed on the
aspect-conditional relevance :math:`r_{u,i,\phi} = [a_\phi\in i] r_{u,i}`:

* **ERR-IA**: ERR's stop probability :math:`(2^{r}-1)/2^{r_{max}}` per aspect (``max_rating``
  0 = the qrels' maximum rating), :math:`\sum_k \frac1k \sum_\phi \gamma_\phi R_{k\phi}
  \prod_{j<k}(1-R_{j\phi})`;
* **P-IA@k** (cut-off required): P counts the relevant items showing the aspect, over k;
* **nDCG-IA**: the rating as gain, discount :math:`1/\log_2(1+j)`, an ideal per aspect (the
  user's judged items showing it, by rating).

Unnormalised, as in the literature: the maximum is below 1.

**ERR-IA and ndeval**: with binary judgments and the uniform profile, ours equals ndeval's
ERR-IA@k times :math:`\alpha\sum_{i\le k}(1-\alpha)^{i-1}/i` (ndeval's "ideal ideal"
normaliser) **only at ndeval's α = 0.5**, where ndeval's per-subtopic stop probability α equals
our :math:`(2^1-1)/2^1`; at any other α the two differ (tested at α = 0.25).
"""
from __future__ import annotations

import numpy as np

from ..ranking import safe_div
from ..registry import register
from .judgments import Judgments, _rmax, judgments_of
from .lists import _cascade, _profiled_lists, _run_member, discount, judged_pairs, row_dot
from .params import checker


def _err_grade(labels: np.ndarray, rmax: float) -> np.ndarray:
    return (np.exp2(np.nan_to_num(labels)) - 1.0) / np.exp2(rmax)


@register("ERR-IA", check=checker("ERR-IA"), aliases=("err_ia", "errIA"), params={"profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Intent-aware ERR (Chapelle et al. 2009): Σ_φ γ_φ ERR_φ@k on aspect-conditional "
                      "ratings, stop probability (2^r-1)/2^r_max (= ndeval's ERR-IA after rescaling only "
                      "at ndeval's α = 0.5)")
def err_ia(j, k, profile="train", max_rating=0.0, *, aspects, train):
    r"""ERR-IA. Equals ndeval's ERR-IA@k (binary judgments, ``profile="uniform"``) multiplied by
    ndeval's normaliser :math:`\alpha\sum_{i\le k}(1-\alpha)^{i-1}/i` only when ndeval runs with
    α = 0.5: ndeval's stop probability per subtopic is α, ours :math:`(2^1-1)/2^1 = 0.5`; at any
    other α they differ (``tests/test_diversity.py`` checks both).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [1.0, 1.0]}),
    ...                  threshold=1, max_rating=1)          # binary judgments: stop probability 1/2
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("x", "y")}
    >>> err_ia(j, 2, profile="uniform", aspects=aspects, train=None).tolist()   # ½(½) + ½(¼ + ½)/2
    [0.4375]
    """
    name = "ERR-IA"
    rmax = _rmax(j, max_rating, name)
    _, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, name)
    pairs = judged_pairs(j, k, valid, idx)
    R = _err_grade(labels, rmax).ravel()[pairs.flat]
    w = gamma[pairs.flat // k, pairs.aspect] if len(pairs.flat) else np.zeros(0)
    per_rank = _cascade(pairs, w * R, R, None, "sum")       # Σ_φ γ_φ R_kφ Π_{j<k}(1 - R_jφ)
    return row_dot(per_rank, 1.0 / np.arange(1, k + 1))


@register("P-IA", check=checker("P-IA"), aliases=("p_ia", "precision-ia"), params={"profile": "train"},
          needs=("aspects",), optional=("train",), family="diversity", cutoff="required", bounds=(0.0, 1.0),
          perfect=None,
          description="Intent-aware precision@k (Agrawal et al. 2009): Σ_φ γ_φ P@k_φ, P_φ counting "
                      "relevant items showing φ")
def p_ia(j, k, profile="train", *, aspects, train):
    r"""P-IA@k per user (Agrawal et al. 2009): :math:`\sum_\phi \gamma_\phi\, |\{i \in L^k:
    a_\phi \in i,\ r_{u,i} \ge \text{threshold}\}| / k`.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> p_ia(j, 2, profile="uniform", aspects={"a": ("x",), "b": ("y",)}, train=None).tolist()
    [0.5]
    """
    _, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, "P-IA")
    member = _run_member(j, k, valid, idx)
    rel = valid & (labels >= j.threshold)
    hits = (member & rel[..., None]).sum(axis=1)   # (n, c)
    return (hits * gamma).sum(axis=1) / k


def _aspect_idcg(judgments: Judgments, k: int) -> np.ndarray:
    """(n, c) ideal DCG@k of each aspect's judged items (ratings as gains, sorted descending)."""
    n, c = judgments.n_users, judgments.member.shape[1]
    out = np.zeros((n, c))
    t, a = np.nonzero(judgments.member)
    if len(t) == 0:
        return out
    gains = judgments.ratings[t]
    rows = judgments.row[t]
    order = np.lexsort((-gains, a, rows))
    rows, a, gains = rows[order], a[order], gains[order]
    group = rows * c + a
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    rank = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
    top = (rank < k) & (gains > 0)
    disc = discount(k)
    np.add.at(out, (rows[top], a[top]), gains[top] * disc[rank[top]])
    return out


@register("nDCG-IA", check=checker("nDCG-IA"), aliases=("ndcg_ia", "ndcgIA"), params={"profile": "train"},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Intent-aware nDCG@k (Agrawal et al. 2009): Σ_φ γ_φ nDCG@k_φ, rating as gain, "
                      "per-aspect ideal")
def ndcg_ia(j, k, profile="train", *, aspects, train):
    r"""nDCG-IA@k per user (Agrawal et al. 2009): :math:`\sum_\phi \gamma_\phi\,
    \mathrm{nDCG@}k_\phi` with the rating as gain and each aspect's ideal built from the user's
    judged items showing it.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 4.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["b", "a"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("y",)}
    >>> ndcg_ia(j, 2, profile="uniform", aspects=aspects, train=None).round(4).tolist()
    [0.8155]
    """
    _, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, "nDCG-IA")
    member = _run_member(j, k, valid, idx)
    g = np.where(valid, np.nan_to_num(labels), 0.0)
    g = np.where(g > 0, g, 0.0)
    dcg = np.einsum("rkc,rk,k->rc", member, g, discount(k))
    idcg = _aspect_idcg(judgments_of(j, idx), k)
    nd = safe_div(dcg, idcg)
    return (nd * gamma).sum(axis=1)
