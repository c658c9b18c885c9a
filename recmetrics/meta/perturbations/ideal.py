r"""The ideal ordering of Parapar & Radlinski (RecSys 2021, Sec. 5.1): every judged item of a user, greedily.

Per user, one per-aspect list per aspect holds the user's judged items showing it, by rating then
by number of aspects (descending, or ascending with ``tie_break="fewer"``: the paper says only that
ties are broken "based on the number of aspects", not in which direction), then by trec_eval's tie
order. At every rank the next aspect is

.. math:: \mathrm{next} = \arg\max_\phi \; w(u, a_\phi) - w(\vec\iota^u, a_\phi)

and its best unused item is taken. Both weights are the maximum-likelihood estimate of Eq. 9, the
rating mass of the aspect over the rating mass of all aspects,
:math:`w(x, a_\phi) = \sum_{j \in x: a_\phi \in j} r_{u,j} / \sum_\varphi \sum_{j \in x: a_\varphi \in j} r_{u,j}`,
over the user's ground truth (:math:`x = I_u`) and over the items placed so far (:math:`x = \vec\iota^u`).
Ties between aspects go to the aspect label that sorts first; items without aspects come last (by
rating); an aspect whose list is exhausted is skipped.

The ordering is the level 0 of every perturbation family (:mod:`.families`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...data.run import Run, trec_tie_order
from ...errors import unknown_name
from ...metrics import diversity as dv
from ...metrics.diversity.weights import mle_weights
from ._inputs import _as_qrels

#: the two readings of Sec. 5.1's tie-break between equally rated items of a per-aspect list
TIE_BREAKS = ("more", "fewer")

__all__ = ["TIE_BREAKS", "IdealOrdering", "ideal_ordering"]


@dataclass
class IdealOrdering:
    """Per-user ideal orderings of all judged items, with the construction trace.

    ``items[u, :lengths[u]]`` is user ``users[u]``'s ordering; ``aspect[u, r]`` is the index (in
    ``labels``) of the aspect picked at rank r (-1 for an item without aspects); ``weights`` are
    the users' aspect weights w(u, a) (Eq. 9 over the ground truth); ``member`` (n, m, c) the
    aspects of the ordered items; ``key`` each item's position in the per-aspect lists' order;
    ``ratings`` the items' ratings (NaN past a user's list); ``metadata`` the threshold and the
    tie-break. Built by :func:`ideal_ordering`.
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
        """The ordering (or a perturbed ``items`` matrix of the same shape) as a Run cut at ``size``.

        size: list length (default None: the whole ordering); name: the run's name; items: an item
        matrix with the ordering's rows (e.g. from :func:`~recmetrics.meta.perturbations.perturb`),
        default the ideal items. Each list keeps ``min(lengths[u], size)`` items.

        Examples
        --------
        >>> import pandas as pd
        >>> test = pd.DataFrame({"user": "u", "item": ["a", "b", "c"], "rating": [3.0, 5.0, 4.0]})
        >>> run = ideal_ordering(test, {"a": ("x",), "b": ("x",), "c": ("y",)}).to_run(2)
        >>> run.name, run.items.tolist()
        ('ideal', [['b', 'c']])
        """
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
    r"""The paper's ideal ordering (Sec. 5.1) of every judged item of each user (vectorised over users).

    At every rank, the aspect with the largest deficit
    :math:`\arg\max_\phi w(u, a_\phi) - w(\vec\iota^u, a_\phi)` (Eq. 9 weights over the ground truth
    and over the items placed so far; see the module docstring) gives its best unused item.
    Parapar & Radlinski, "Towards Unified Metrics for Accuracy and Diversity for Recommender
    Systems", RecSys 2021, Sec. 5.1.

    test: a Qrels or a DataFrame ``user, item, rating`` (the ground truth; a DataFrame is read with
    ``threshold`` (default 4) and ``max_rating`` (default: the largest rating)); aspects: item ->
    labels; users: the users to order (default: every judged user); tie_break: how equally rated
    items of a per-aspect list are ordered, ``"more"`` (items showing more aspects first, the
    default) or ``"fewer"`` (fewer aspects first). Sec. 5.1 says only "for breaking ties, we sort
    items based on the number of aspects they exhibit"; notebook 03 runs Exps. 1-2 both ways.
    Ties between aspects go to the label that sorts first; items without aspects come last.
    Returns an :class:`IdealOrdering`; an unknown ``tie_break`` raises ``UnknownNameError``.

    Examples
    --------
    >>> import pandas as pd
    >>> test = pd.DataFrame({"user": "u", "item": ["a1", "a2", "b1", "c1", "ab", "n0"],
    ...                      "rating": [5.0, 4.0, 4.0, 3.0, 5.0, 4.0]})
    >>> aspects = {"a1": ("A",), "a2": ("A",), "b1": ("B",), "c1": ("C",), "ab": ("A", "B"), "n0": ()}
    >>> ideal = ideal_ordering(test, aspects)
    >>> ideal.items[0].tolist()                  # w(u) = A .54, B .35, C .12; n0 has no aspect
    ['ab', 'c1', 'a1', 'b1', 'a2', 'n0']
    >>> [str(ideal.labels[a]) if a >= 0 else None for a in ideal.aspect[0]]
    ['A', 'C', 'A', 'B', 'A', None]
    >>> ideal_ordering(test, aspects, tie_break="fewer").items[0, :2].tolist()   # a1 (one aspect) before ab
    ['a1', 'ab']
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

    w_user = np.nan_to_num(mle_weights(jd.row, jd.ratings, jd.member, n))   # Eq. 9, ground truth
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
