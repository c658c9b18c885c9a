r"""Rank-biased utility (RBU, Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018) and expected utility (EU).

Both browse the list with RBP's persistence ``p`` and charge an effort ``e`` per item:

* **RBU**: :math:`(1-p)\sum_k p^{k-1}\bigl(\sum_\phi \gamma^u_\phi\, g(i_k,\phi)\, D_\phi(k) -
  e\bigr)` with ERR-IA's redundancy :math:`D_\phi(k)=\prod_{j<k}(1-g(i_j,\phi))` and, as in the
  authors' code (``jCarrilloDeAlbornoz/RBU``, ``RBU.java``), :math:`g = [a_\phi\in
  i](2^{r}-1)/2^{g^u_\phi}` with :math:`g^u_\phi` the highest grade among the user's judged items
  showing the aspect (``norm="aspect"``); ``norm="scale"`` (default: paper 002's Table 1 holds
  only under it, see :func:`rank_biased_utility`) uses :math:`2^{r_{max}}` for every aspect.
* **EU** is a **reconstruction**: Amigó et al. 2018's definition of EU (after Yang & Lad 2009)
  was not available to check against (no text or code found). We use RBU's form with the
  rating-scale grade :math:`g = [a_\phi\in i](2^{r}-1)/2^{r_{max}}` and the α-redundancy
  :math:`D_\phi(k)=\prod_{j<k}(1-\alpha g(i_j,\phi))`; paper 002 gives EU no ``p``, we use RBU's.

Parameters: ``p`` in (0, 1) (default 0.99), ``e`` >= 0 (default 0.05), EU's ``alpha`` in (0, 1]
(default 0.25), ``profile`` (default ``"train"``, :mod:`.weights`), ``max_rating`` (0: the
qrels' maximum rating). Items without aspects gain nothing but still cost ``e``.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ..registry import register
from .aspects import aspect_index
from .intent_aware import _err_grade
from .judgments import Judgments, _rmax, judgments_of
from .lists import _cascade, _run_arrays, judged_pairs, row_dot
from .params import _check_nonneg, _check_profile, check_unit, checker
from .weights import aspect_weights

#: RBU's grade normalisers: the user's top grade of the aspect (the authors' code) or the scale's
RBU_NORMS = ("aspect", "scale")


def aspect_top_grades(judgments: Judgments) -> np.ndarray:
    """(n, c): the highest rating among each user's judged items showing each aspect (NaN if none).

    The normaliser of RBU in its authors' code (``jCarrilloDeAlbornoz/RBU``, ``RBU.java``: the
    first item of the aspect's perfect ranking, ``2^max grade``).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> from recmetrics.metrics.diversity import judgments_from_qrels
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> jd = judgments_from_qrels(qrels, [1], {"a": ("x",), "b": ("x", "y"), "c": ("z",)})
    >>> aspect_top_grades(jd).tolist()
    [[5.0, 2.0, nan]]
    """
    out = np.full((judgments.n_users, judgments.member.shape[1]), -np.inf)
    t, a = np.nonzero(judgments.member)
    if len(t):
        np.maximum.at(out, (judgments.row[t], a), judgments.ratings[t])
    return np.where(np.isfinite(out), out, np.nan)


def _utility(j, k, idx, gamma, p, e, redundancy: float | None, rmax: float,
             top: np.ndarray | None = None) -> np.ndarray:
    """(1-p) Σ_k p^{k-1} (Σ_φ γ_φ g_kφ D_φ(k) - e); redundancy=None: ERR-IA's Π(1-g), else Π(1-αg).

    ``g = (2^r - 1) / 2^{r_max}``, or ``/ 2^{top[u, φ]}`` when ``top`` (the user's highest grade of
    each aspect, :func:`aspect_top_grades`) is given.
    """
    k, valid, labels = _run_arrays(j, k)
    pairs = judged_pairs(j, k, valid, idx)
    if top is None:
        g = _err_grade(labels, rmax).ravel()[pairs.flat]
    else:
        num = np.exp2(np.nan_to_num(labels)).ravel()[pairs.flat] - 1.0
        den = np.exp2(top[pairs.flat // k, pairs.aspect]) if len(pairs.flat) else np.zeros(0)
        # an item of the list showing φ with a rating implies a judged item showing φ, so den is
        # finite wherever num > 0; unjudged items have num = 0
        g = np.divide(num, den, out=np.zeros_like(num), where=np.isfinite(den) & (num > 0))
    w = gamma[pairs.flat // k, pairs.aspect] if len(pairs.flat) else np.zeros(0)
    gain = _cascade(pairs, w * g, g if redundancy is None else redundancy * g, None, "sum")
    return (1.0 - p) * row_dot(gain - e * valid, p ** np.arange(k))


@register("EU", check=checker("EU"), aliases=("expected-utility",), params={"alpha": 0.25, "e": 0.05, "p": 0.99,
                                                       "profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(-math.inf, 1.0), perfect=None,
          description="Expected utility (Yang & Lad 2009), a RECONSTRUCTION (Amigó et al. 2018's "
                      "definition not found): rank-biased aspect-weighted gain with (1-α·g) redundancy "
                      "minus effort e per item")
def expected_utility(j, k, alpha=0.25, e=0.05, p=0.99, profile="train", max_rating=0.0, *,
                     aspects, train):
    r"""EU — a reconstruction, not checked against a reference: Amigó et al. 2018's definition (the
    one paper 002 follows) could not be found, as text or code. Form: RBU's rank-biased utility with
    the rating-scale grade :math:`(2^r-1)/2^{r_{max}}` and redundancy :math:`\prod(1-\alpha g)`.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 4.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("x",)}
    >>> expected_utility(j, 2, p=0.5, e=0.0, profile="test", aspects=aspects, train=None).round(4).tolist()
    [0.5732]
    """
    name = "EU"
    alpha = check_unit("alpha", alpha, name)
    e = _check_nonneg("e", e, name)
    p = check_unit("p", p, name, open_right=True)
    profile = _check_profile(profile, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    gamma = aspect_weights(j, idx, train, profile)
    return _utility(j, k, idx, gamma, p, e, alpha, rmax)


@register("RBU", check=checker("RBU"), aliases=("rank-biased-utility",), params={"e": 0.05, "p": 0.99, "profile": "train",
                                                            "max_rating": 0.0, "norm": "scale"},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(-math.inf, 1.0), perfect=None,
          description="Rank-biased utility (Amigó et al. 2018): RBP browsing, ERR-IA redundancy, "
                      "effort e per item; grades (2^r-1)/2^r_max (norm=aspect: /2^(user's top grade "
                      "of the aspect), the authors' code)")
def rank_biased_utility(j, k, e=0.05, p=0.99, profile="train", max_rating=0.0, norm="scale", *,
                        aspects, train):
    """RBU (Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018), checked against the authors' code
    ``jCarrilloDeAlbornoz/RBU`` (``RBU.java``). ``norm="aspect"`` divides ``2^r - 1`` by ``2^g``
    with ``g`` the highest grade among the user's judged items showing the aspect (the authors'
    rule); ``norm="scale"`` (default) by ``2^{r_max}`` for every aspect. The default stays
    ``"scale"`` because nothing shows that paper 002 ran the authors' code (it names no
    implementation) and its Table 1 needs the scale rule: under the authors' rule RBU violates
    AspRel (an item of a more liked aspect rated 1 whose aspect has a 5 elsewhere gets grade
    1/32, one of a less liked aspect whose best grade is 1 gets 1/2; ``tests/test_axioms.py``),
    while Table 1 marks RBU as satisfying it.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5.0, 4.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("x",)}
    >>> rank_biased_utility(j, 2, p=0.5, e=0.0, profile="test", aspects=aspects, train=None).round(4).tolist()
    [0.488]
    """
    name = "RBU"
    e = _check_nonneg("e", e, name)
    p = check_unit("p", p, name, open_right=True)
    profile = _check_profile(profile, name)
    norm = str(norm).lower()
    if norm not in RBU_NORMS:
        raise InputError(f"{name}: norm={norm!r} must be one of {RBU_NORMS}")
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    gamma = aspect_weights(j, idx, train, profile)
    top = aspect_top_grades(judgments_of(j, idx)) if norm == "aspect" else None
    return _utility(j, k, idx, gamma, p, e, None, rmax, top)
