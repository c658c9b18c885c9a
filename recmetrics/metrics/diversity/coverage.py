r"""Aspect coverage: S-Recall and S-RR (Zhai, Cohen & Lafferty, SIGIR 2003), no user weights.

The user's aspects :math:`\mathcal A_u` are those of the user's relevant (rating >= threshold)
test items.

* **S-Recall@k**: the fraction of :math:`\mathcal A_u` shown by a relevant item in the top k
  (``relevant_only=False``: by any item, as Parapar & Radlinski's Sec. 4.2 describes it);
  0 when :math:`\mathcal A_u` is empty. Equals ndeval's ``strec``.
* **S-RR@k**: the reciprocal of the first rank at which every aspect of :math:`\mathcal A_u` is
  covered, 0 if that takes more than k ranks (no cut-off: the whole list) or the user has no
  aspect.
"""
from __future__ import annotations

import numpy as np

from ..ranking import safe_div
from ..registry import register
from .aspects import aspect_index
from .judgments import _relevant_aspects
from .lists import _run_arrays, judged_pairs


def _coverage(j, k, idx, relevant_only: bool):
    """(rows, k) number of the user's aspects covered up to each rank, and (rows,) |A_u|."""
    k, valid, labels = _run_arrays(j, k)
    user_aspects = _relevant_aspects(j, idx)
    show = valid & (labels >= j.threshold) if relevant_only else valid
    pairs = judged_pairs(j, k, show, idx)
    counts = np.zeros((len(j.users), k), dtype=np.int64)
    if len(pairs.flat):
        g = pairs.group
        first = np.r_[True, g[1:] != g[:-1]]                 # first showing of (row, aspect)
        sel = pairs.order[first]
        sel = sel[user_aspects[pairs.flat[sel] // k, pairs.aspect[sel]]]
        counts = np.cumsum(np.bincount(pairs.flat[sel], minlength=len(j.users) * k)
                           .reshape(len(j.users), k), axis=1)
    return counts, user_aspects.sum(axis=1)


@register("S-Recall", aliases=("srecall", "strec", "subtopic-recall", "s_recall"),
          params={"relevant_only": True}, needs=("aspects",), family="diversity",
          bounds=(0.0, 1.0), perfect=1.0,
          description="Subtopic recall@k (Zhai et al.): share of the user's aspects shown by a relevant "
                      "item in the top k (= ndeval's strec)")
def s_recall(j, k, relevant_only=True, *, aspects):
    r""":math:`|\{\phi \in \mathcal A_u: \phi \text{ shown in the top } k\}| / |\mathcal A_u|` per
    user; ``relevant_only`` (default True): only relevant items show aspects.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5.0, 4.0, 1.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "c", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("y",), "c": ("y",)}
    >>> s_recall(j, 2, aspects=aspects).tolist(), s_recall(j, 2, False, aspects=aspects).tolist()
    ([0.5], [1.0])
    """
    idx = aspect_index(aspects)
    counts, n_aspects = _coverage(j, k, idx, bool(relevant_only))
    last = counts[:, -1] if counts.shape[1] else np.zeros(len(j.users))
    return safe_div(last, n_aspects)


@register("S-RR", aliases=("srr", "subtopic-rr", "s_rr"), params={"relevant_only": True},
          needs=("aspects",), family="diversity", bounds=(0.0, 1.0), perfect=1.0,
          description="Subtopic reciprocal rank@k: 1 / the first rank where every aspect of the user is "
                      "covered (0 if not within k; no cut-off = the whole list)")
def s_rr(j, k, relevant_only=True, *, aspects):
    r"""1 / the first rank at which the top items cover :math:`\mathcal A_u` (0 if not within
    ``k``); ``relevant_only`` (default True): only relevant items show aspects.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5.0, 4.0, 1.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a", "c", "b"]}), qrels)
    >>> aspects = {"a": ("x",), "b": ("y",), "c": ("y",)}
    >>> s_rr(j, None, aspects=aspects).round(4).tolist(), s_rr(j, None, False, aspects=aspects).tolist()
    ([0.3333], [0.5])
    """
    idx = aspect_index(aspects)
    counts, n_aspects = _coverage(j, k, idx, bool(relevant_only))
    full = (counts == n_aspects[:, None]) & (n_aspects[:, None] > 0)
    first = full.argmax(axis=1) if full.shape[1] else np.zeros(len(j.users), dtype=np.int64)
    return np.where(full.any(axis=1), 1.0 / (first + 1), 0.0)
