"""The users' full test judgments with the aspects of the judged items.

A :class:`~recmetrics.judged.Judged` keeps only the judged *positions* of the ranked lists; the
aspect-aware metrics also need every judged *item* of each user — for the greedy ideals, the
test-profile weights (Eq. 9 over the test ratings) and the users' own aspects (S-Recall, S-RR,
NRBP, RBU's per-aspect grades). They are read from the :class:`~recmetrics.data.qrels.Qrels` the
Judged was built from (:func:`recmetrics.judged.judge` keeps them; :func:`attach_judgments` does
it for judged objects built otherwise) as flat arrays grouped by user (:class:`Judgments`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from .aspects import aspect_index


def attach_judgments(judged, qrels):
    """Make ``judged`` refer to the :class:`~recmetrics.data.qrels.Qrels` it was built from.

    The aspect-aware ideals need each user's judged *items* (not only their sorted ratings);
    :func:`recmetrics.judged.judge` already keeps them (``Judged.qrels``), this is for judged
    objects built otherwise. Returns ``judged``.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> j = attach_judgments(rm.judge(rm.Run.from_lists({1: ["b", "a"]}), qrels), qrels)
    >>> j.qrels is qrels
    True
    """
    judged.__dict__["qrels"] = qrels
    return judged


def _qrels_of(judged):
    q = judged.__dict__.get("qrels", None)
    if q is None:
        q = getattr(judged, "qrels", None)
    if q is None and isinstance(getattr(judged, "metadata", None), dict):
        q = judged.metadata.get("qrels")
    if q is None:
        raise InputError(
            "this aspect-aware metric needs each user's judged items (for its greedy ideal and the "
            "test-profile weights), but this judged object does not keep the Qrels it was judged "
            "against; use recmetrics.judged.judge (which keeps them) or "
            "recmetrics.metrics.diversity.attach_judgments(judged, qrels)")
    return q


@dataclass(frozen=True)
class Judgments:
    """The evaluated users' judgments as flat arrays, grouped by user.

    ``row[t]`` is the row (in ``judged.users``) of judgment ``t``; judgments of a user are
    contiguous and in trec_eval's tie order (largest item id string first). ``member`` is the
    (N, c) aspect membership of the judged items.
    """

    row: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    member: np.ndarray
    n_users: int

    @property
    def starts(self) -> np.ndarray:
        """Index of the first judgment of each user that has one."""
        if len(self.row) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.r_[True, self.row[1:] != self.row[:-1]])


def judgments_from_qrels(qrels, users, aspects) -> Judgments:
    """The judgments of ``users`` (in that row order) in ``qrels``, with aspect membership.

    Users absent from the qrels simply have no judgment. A user's judgments come in trec_eval's
    tie order (largest item id string first), the order the greedy ideals break ties in.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"],
    ...                                "rating": [5.0, 2.0, 4.0]}))
    >>> jd = judgments_from_qrels(qrels, [2, 1, 3], {"a": ("x",), "b": ("x", "y")})
    >>> jd.row.tolist(), jd.items.tolist(), jd.ratings.tolist()
    ([0, 1, 1], ['a', 'b', 'a'], [4.0, 2.0, 5.0])
    >>> jd.member.tolist(), jd.starts.tolist()
    ([[True, False], [True, True], [True, False]], [0, 1])
    """
    import pandas as pd

    from ...data.run import trec_tie_order

    idx = aspect_index(aspects)
    frame = qrels.to_frame()
    row = pd.Index(users).get_indexer(frame["user"].to_numpy())
    keep = row >= 0
    row = row[keep]
    items = frame["item"].to_numpy()[keep]
    ratings = frame["rating"].to_numpy(dtype=np.float64)[keep]
    order = np.lexsort((trec_tie_order(items), row)) if len(items) else np.zeros(0, dtype=np.int64)
    return Judgments(row[order].astype(np.int64), items[order], ratings[order],
                     idx.lookup(items[order]).reshape(len(order), idx.n_aspects), len(users))


def judgments_of(judged, aspects) -> Judgments:
    """The full judgments of ``judged.users`` (from the attached Qrels) with aspect membership.

    Cached on ``judged`` per aspect index. Raises :class:`~recmetrics.errors.InputError` when
    ``judged`` keeps no Qrels (see :func:`attach_judgments`).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["a"]}), qrels)
    >>> judgments_of(j, {"a": ("x",), "b": ("y",)}).items.tolist()
    ['b', 'a']
    """
    idx = aspect_index(aspects)
    cache = judged.__dict__.setdefault("_diversity_cache", {})
    key = ("judgments", id(idx))
    if key in cache:
        return cache[key][1]
    out = judgments_from_qrels(_qrels_of(judged), judged.users, idx)
    cache[key] = (idx, out)
    return out


def aspects_rated_at_least(judgments: Judgments, minimum: float, strict: bool = False) -> np.ndarray:
    r"""(n, c): aspects shown by a judged item rated >= ``minimum`` (> when ``strict``).

    The user's aspects :math:`\mathcal A_u` of S-Recall and S-RR (``minimum`` = the relevance
    threshold) and of NRBP's normaliser (``minimum=0, strict=True``: positively rated items).

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> jd = judgments_from_qrels(qrels, [1], {"a": ("x",), "b": ("y",)})
    >>> aspects_rated_at_least(jd, 4.0).tolist(), aspects_rated_at_least(jd, 0.0, strict=True).tolist()
    ([[True, False]], [[True, True]])
    """
    out = np.zeros((judgments.n_users, judgments.member.shape[1]), dtype=bool)
    sel = judgments.ratings > minimum if strict else judgments.ratings >= minimum
    if sel.any():
        np.logical_or.at(out, judgments.row[sel], judgments.member[sel])
    return out


def _relevant_aspects(judged, aspects) -> np.ndarray:
    """(n, c) aspects shown by at least one relevant (>= threshold) judged item of each user."""
    return aspects_rated_at_least(judgments_of(judged, aspects), judged.threshold)


def _positive_aspects(judged, aspects) -> np.ndarray:
    """(n, c) aspects shown by at least one positively rated judged item of each user."""
    return aspects_rated_at_least(judgments_of(judged, aspects), 0.0, strict=True)
