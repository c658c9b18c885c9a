r"""The novelty-biased metrics α-nDCG and NRBP (Clarke et al. 2008, 2009), graded for ratings.

* **α-nDCG** (``a-nDCG``), graded: item :math:`i` carries aspect :math:`\phi` with grade
  :math:`J(i,\phi) = [a_\phi\in i]\, r_{u,i}/r_{max}` (0 when unrated),
  :math:`G[k] = \sum_\phi J(i_k,\phi)\prod_{j<k}(1-\alpha J(i_j,\phi))`; every aspect counts the
  same (no user weights), a missing rating counts as 0. Normalised by the greedy ideal
  (:mod:`.ideal`). With binary judgments this is exactly ndeval's α-nDCG (tested against
  ``pyndeval``).
* **NRBP** (Clarke et al. 2009): :math:`\frac{1-(1-\alpha)\beta}{N}\sum_k \beta^{k-1}G[k]` with
  the α-nDCG gain and :math:`N` the number of aspects of the user's positively rated test items
  (ndeval's "actual subtopics"); no cut-off by default (the whole list).

Both are adaptations to recommendation compared with αβ-nDCG in Parapar & Radlinski (RecSys
2021, Sec. 4.2). ``alpha`` (α-nDCG 0.5, NRBP 0.25) and NRBP's ``beta`` (0.9) must lie in (0, 1];
``max_rating`` 0 means the qrels' maximum rating.
"""
from __future__ import annotations

import numpy as np

from ..ranking import safe_div
from ..registry import register
from .aspects import aspect_index
from .ideal import _cached_ideal, greedy_ideal
from .judgments import Judgments, _positive_aspects, _rmax, judgments_of
from .lists import ListPairs, _cascade, _run_arrays, discount, judged_pairs, list_pairs, row_dot
from .params import check_unit, checker


def _grades(labels: np.ndarray, rmax: float) -> np.ndarray:
    return np.nan_to_num(labels) / rmax


def alpha_gains(items: np.ndarray, labels: np.ndarray, valid: np.ndarray, alpha: float, rmax: float,
                aspects, pairs: ListPairs | None = None) -> np.ndarray:
    r"""Per-rank α-nDCG gains :math:`\sum_\phi J(i_k,\phi)\prod_{j<k}(1-\alpha J(i_j,\phi))`.

    items/labels/valid: (rows, k) item ids, ratings (NaN = unrated, grade 0) and in-list
    positions; aspects: the item -> aspects mapping (or its index); pairs: a precomputed
    :func:`~recmetrics.metrics.diversity.lists.list_pairs` (optional). Returns ``(rows, k)``.

    Examples
    --------
    >>> import numpy as np
    >>> alpha_gains(np.array([["a", "b"]]), np.array([[5.0, 5.0]]), np.ones((1, 2), bool),
    ...             0.5, 5.0, {"a": ("x", "y"), "b": ("x",)}).tolist()     # b's x is half-redundant
    [[2.0, 0.5]]
    """
    pairs = list_pairs(items, valid, aspects) if pairs is None else pairs
    J = (_grades(labels, rmax) * valid).ravel()[pairs.flat]
    return _cascade(pairs, J, alpha * J, None, "sum")


def alpha_ideal_gains(judgments: Judgments, alpha: float, rmax: float, k: int) -> np.ndarray:
    """Greedy ideal α-nDCG gains from the users' judged items (ndeval's idealResult).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> from recmetrics.metrics.diversity import judgments_from_qrels
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 5.0]}))
    >>> jd = judgments_from_qrels(qrels, [1], {"a": ("x",), "b": ("x", "y")})
    >>> alpha_ideal_gains(jd, 0.5, 5.0, k=2).tolist()
    [[2.0, 0.5]]
    """
    J = judgments.member * (judgments.ratings / rmax)[:, None]
    return greedy_ideal(judgments.row, J, alpha * J, None, judgments.n_users, k, "sum")


@register("a-nDCG", check=checker("a-nDCG"), aliases=("alpha-nDCG", "alphandcg"), params={"alpha": 0.5, "max_rating": 0.0},
          needs=("aspects",), family="diversity", bounds=(0.0, 1.0), perfect=1.0,
          description="α-nDCG@k (Clarke et al. 2008), graded: aspect grade r/r_max, redundancy "
                      "(1-α·J), all aspects equal, missing = 0; greedy ideal (= ndeval with binary judgments)")
def alpha_ndcg(j, k, alpha=0.5, max_rating=0.0, *, aspects):
    """α-nDCG@k per user (Clarke et al. 2008), graded: the DCG of :func:`alpha_gains` over the DCG
    of the greedy ideal :func:`alpha_ideal_gains` (0 when the ideal is 0); ``alpha`` 0.5.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 5.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> alpha_ndcg(j, 2, aspects={"a": ("x",), "b": ("x", "y")}).round(4).tolist()
    [0.8406]
    """
    name = "a-nDCG"
    alpha = check_unit("alpha", alpha, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    dcg = row_dot(alpha_gains(j.items[:, :k], labels, valid, alpha, rmax, idx, judged_pairs(j, k, valid, idx)),
                  discount(k))
    idcg = row_dot(_cached_ideal(j, "alpha", (id(idx), alpha, rmax), k,
                                 lambda: alpha_ideal_gains(judgments_of(j, idx), alpha, rmax, k),
                                 keep=(idx,)), discount(k))
    return safe_div(dcg, idcg)


@register("NRBP", check=checker("NRBP"), params={"alpha": 0.25, "beta": 0.9, "max_rating": 0.0}, needs=("aspects",),
          family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Novelty- and rank-biased precision (Clarke et al. 2009), graded like α-nDCG; "
                      "whole list unless a cut-off is given (= ndeval's NRBP with binary judgments)")
def nrbp(j, k, alpha=0.25, beta=0.9, max_rating=0.0, *, aspects):
    r"""NRBP per user (Clarke et al. 2009): :math:`\frac{1-(1-\alpha)\beta}{N}\sum_k
    \beta^{k-1}G[k]` with the α-nDCG gains and :math:`N` the aspects of the user's positively
    rated test items (0 when :math:`N = 0`); ``alpha`` 0.25, ``beta`` 0.9, whole list by default.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 5.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> nrbp(j, None, aspects={"a": ("x",), "b": ("x", "y")}).round(4).tolist()
    [0.4184]
    """
    name = "NRBP"
    alpha = check_unit("alpha", alpha, name)
    beta = check_unit("beta", beta, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    g = alpha_gains(j.items[:, :k], labels, valid, alpha, rmax, idx, judged_pairs(j, k, valid, idx))
    score = row_dot(g, beta ** np.arange(k))
    n_aspects = _positive_aspects(j, idx).sum(axis=1)
    return safe_div((1.0 - (1.0 - alpha) * beta) * score, n_aspects)
