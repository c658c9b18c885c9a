"""IDEAL"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...data.run import Run, trec_tie_order
from ...errors import unknown_name
from ...metrics import diversity as dv
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
    aspects of the ordered items; ``key`` each item's position in the per-aspect lists' order.
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
        """The ordering (or a perturbed ``items`` matrix of the same shape) as a Run cut at ``size``."""
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
    """The paper's ideal ordering (Sec. 5.1) of every judged item of each user (vectorised over users).

    test: a Qrels or a DataFrame ``user, item, rating`` (the ground truth); aspects: item -> labels;
    users: the users to order (default: every judged user); tie_break: how equally rated items of
    a per-aspect list are ordered, ``"more"`` (items showing more aspects first, the default) or
    ``"fewer"`` (fewer aspects first). Sec. 5.1 says only "for breaking ties, we sort items based
    on the number of aspects they exhibit"; notebook 03 runs Exps. 1-2 both ways.
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

    w_user = np.nan_to_num(dv._mle_weights(jd.row, jd.ratings, jd.member, n))   # Eq. 9, ground truth
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
