r"""αβ-nDCG (``ab-nDCG``, Eq. 4-16 of Parapar & Radlinski, RecSys 2021): its gains and greedy ideal.

Notation: user :math:`u`, ranked list :math:`i_1, i_2, \dots`, aspects :math:`a_\phi`, test
rating :math:`r_{u,i}` (missing when the user did not rate :math:`i`), top rating
:math:`r_{max}` (the qrels' ``max_rating`` unless the ``max_rating`` parameter is set). The
probability that item :math:`i` satisfies the user's interest in :math:`a_\phi` is (Eq. 5-6)

.. math::
   P(a_\phi|u,i) = \begin{cases} 0 & a_\phi \notin i\\ \alpha & r_{u,i}\ \text{missing}\\
   \beta\, r_{u,i}/r_{max} & \text{otherwise,}\end{cases}

the user's interest in the aspect is :math:`\gamma^u_\phi` (Eq. 9, :mod:`.weights`), redundancy
discounts it by what was already shown (Eq. 12, :math:`R_\phi(k) = \prod_{j<k} 1 -
P(a_\phi|u,i_j)`), the gain at rank :math:`k` is (Eq. 13)
:math:`G[k] = 1 - \prod_\phi \bigl(1 - P(a_\phi|u,i_k)\,\gamma^u_\phi\,R_\phi(k)\bigr)`, and
:math:`\alpha\beta\text{-nDCG@}k = \sum_{j\le k} G[j]/\log_2(1+j) \,/\, \mathrm{IDCG}@k`, the
ideal being built greedily from the user's judged test items (highest gain next, :mod:`.ideal`).

Parameters: ``alpha`` (default 0.005) and ``beta`` (default 0.5) in (0, 1]; ``profile``
(default ``"train"``, :mod:`.weights`); ``max_rating`` (default 0: the qrels' maximum rating).
Items without aspects contribute no aspect gain (but still take a rank).
"""
from __future__ import annotations

import math

import numpy as np

from ..ranking import safe_div
from ..registry import register
from .ideal import _cached_ideal, greedy_ideal
from .judgments import Judgments, _rmax, judgments_of
from .lists import ListPairs, _cascade, _profiled_lists, discount, judged_pairs, list_pairs, row_dot
from .params import check_unit, checker


def ab_item_probability(labels: np.ndarray, valid: np.ndarray, alpha: float, beta: float,
                        rmax: float) -> np.ndarray:
    r"""Eq. 5-6 without the aspect test: ``alpha`` if unrated, :math:`\beta r/r_{max}` if rated, 0
    past the list.

    >>> import numpy as np
    >>> ab_item_probability(np.array([[5.0, np.nan, 2.0]]), np.array([[True, True, False]]),
    ...                     alpha=0.1, beta=0.5, rmax=5.0).tolist()
    [[0.5, 0.1, 0.0]]
    """
    p = np.where(np.isnan(labels), alpha, beta * np.nan_to_num(labels) / rmax)
    return np.where(valid, p, 0.0)


def ab_gains(items: np.ndarray, labels: np.ndarray, valid: np.ndarray, gamma: np.ndarray,
             alpha: float, beta: float, rmax: float, aspects, pairs: ListPairs | None = None) -> np.ndarray:
    r"""Per-rank αβ-nDCG gains :math:`G[k]` (Eq. 13) of ranked lists, shape ``(rows, k)``.

    items/labels/valid: (rows, k) item ids, ratings (NaN = unrated) and in-list positions;
    gamma: (rows, c) aspect weights; aspects: the item -> aspects mapping (or its index);
    pairs: a precomputed :func:`~recmetrics.metrics.diversity.lists.list_pairs` of
    ``items``/``valid`` (optional).

    Examples
    --------
    Two items showing aspect x (γ = 1), rated 5 then 4 on a 1-5 scale, β = 0.5: the first gains
    0.5, the second :math:`0.4\,(1 - 0.5)`:

    >>> import numpy as np
    >>> ab_gains(np.array([["a", "b"]]), np.array([[5.0, 4.0]]), np.ones((1, 2), bool),
    ...          np.array([[1.0]]), 0.005, 0.5, 5.0, {"a": ("x",), "b": ("x",)}).round(4).tolist()
    [[0.5, 0.2]]
    """
    pairs = list_pairs(items, valid, aspects) if pairs is None else pairs
    k = pairs.k
    p = ab_item_probability(labels, valid, alpha, beta, rmax).ravel()[pairs.flat]      # Eq. 5-6
    w = gamma[pairs.flat // k, pairs.aspect] if len(pairs.flat) else np.zeros(0)
    return _cascade(pairs, p, p, w, "noisy-or")                                     # Eq. 12-13


def ab_ideal_gains(judgments: Judgments, gamma: np.ndarray, alpha: float, beta: float, rmax: float,
                   k: int) -> np.ndarray:
    """Greedy ideal αβ-nDCG gains from the users' judged items (alpha is unused: all are rated).

    ``judgments``: :class:`~recmetrics.metrics.diversity.judgments.Judgments` of the users;
    ``gamma``: their (n_users, c) aspect weights. Returns ``(n_users, k)`` gains (see
    :func:`~recmetrics.metrics.diversity.ideal.greedy_ideal`).

    Examples
    --------
    >>> import numpy as np, pandas as pd, recmetrics as rm
    >>> from recmetrics.metrics.diversity import judgments_from_qrels
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5.0, 4.0, 2.0]}))
    >>> jd = judgments_from_qrels(qrels, [1], {"a": ("x",), "b": ("x",), "c": ("y",)})
    >>> ab_ideal_gains(jd, np.array([[0.5, 0.5]]), 0.005, 0.5, 5.0, k=3).round(4).tolist()
    [[0.25, 0.1, 0.1]]
    """
    P = judgments.member * (beta * judgments.ratings / rmax)[:, None]
    return greedy_ideal(judgments.row, P, P, gamma, judgments.n_users, k, "noisy-or")


@register("ab-nDCG", check=checker("ab-nDCG"), aliases=("abndcg", "alphabeta-nDCG", "alpha-beta-nDCG"),
          params={"alpha": 0.005, "beta": 0.5, "profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, math.inf), perfect=1.0,
          description="αβ-nDCG@k (Parapar & Radlinski 2021, Eq. 4-16): rating- and redundancy-aware "
                      "aspect gain weighted by the user's aspect interest, greedy ideal")
def ab_ndcg(j, k, alpha=0.005, beta=0.5, profile="train", max_rating=0.0, *, aspects, train):
    r"""αβ-nDCG@k per user (Parapar & Radlinski 2021, Eq. 4-16): the DCG of the gains
    :func:`ab_gains` over the DCG of the greedy ideal :func:`ab_ideal_gains` (0 when the ideal is 0).

    ``alpha`` (0.005, unrated items), ``beta`` (0.5, rated items) in (0, 1]; ``profile``
    (``"train"``: Eq. 9 over ``train``; ``"test"``; ``"uniform"``); ``max_rating`` (0: the
    qrels' maximum rating). Can exceed 1 (see :mod:`.ideal`).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5.0, 4.0, 2.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "c", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("x",), "c": ("y",)}
    >>> ab_ndcg(j, 3, profile="test", aspects=aspects, train=None).round(4).tolist()  # ideal: a, b, c
    [0.9686]
    """
    name = "ab-nDCG"
    alpha = check_unit("alpha", alpha, name)
    beta = check_unit("beta", beta, name)
    rmax = _rmax(j, max_rating, name)
    profile, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, name)
    dcg = row_dot(ab_gains(j.items[:, :k], labels, valid, gamma, alpha, beta, rmax, idx,
                           pairs=judged_pairs(j, k, valid, idx)), discount(k))
    idcg = row_dot(_cached_ideal(
        j, "ab", (id(idx), profile, id(train) if profile == "train" else None, alpha, beta, rmax), k,
        lambda: ab_ideal_gains(judgments_of(j, idx), gamma, alpha, beta, rmax, k),
        keep=(idx, train)), discount(k))
    return safe_div(dcg, idcg)
