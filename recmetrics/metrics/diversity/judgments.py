"""The users' full test judgments with the aspects of the judged items.

A :class:`~recmetrics.judged.Judged` keeps only the judged *positions* of the ranked lists; the
aspect-aware metrics also need every judged *item* of each user — for the greedy ideals, the
test-profile weights (Eq. 9 over the test ratings) and the users' own aspects (S-Recall, S-RR,
NRBP, RBU's per-aspect grades). They are read from the :class:`~recmetrics.data.qrels.Qrels` the
Judged was built from (:func:`recmetrics.judged.judge` keeps them; :func:`attach_judgments` does
it for judged objects built otherwise) as flat arrays grouped by user (:class:`Judgments`).

The top of the rating scale :math:`r_{max}` every graded kernel divides by is resolved here too
(``_rmax``): the metric's ``max_rating`` parameter, else the qrels' ``max_rating`` (the scale the
:class:`~recmetrics.data.qrels.Qrels` was declared with, by default its largest rating). A
``max_rating`` below a grade of an evaluated user is an error naming the user and the item, as
for :class:`~recmetrics.data.qrels.Qrels` and ``ERR``: every gain :math:`r/r_{max}` or
:math:`(2^r-1)/2^{r_{max}}` is a probability, and a grade above the top would push it (and the
metric, e.g. ERR-IA 1.39 or αβ-nDCG past its ideal) above 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from .aspects import aspect_index
from .cache import _LRU

_JUDGMENTS_CACHE = _LRU(16)


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
    qrels = _qrels_of(judged)
    users = np.asarray(judged.users)
    # every run judged against the same Qrels for the same users shares them (e.g. the levels of a
    # perturbation family): the entry keeps qrels and index alive, so their ids stay unique
    shared = ("judgments", id(qrels), id(idx), users.dtype.str,
              hash(users.tobytes()) if users.dtype != object else hash(tuple(users.tolist())))
    hit = _JUDGMENTS_CACHE.get(shared)
    if hit is not None and len(hit[0]) == len(users) and np.array_equal(hit[0], users):
        out = hit[1]
    else:
        out = judgments_from_qrels(qrels, users, idx)
        _JUDGMENTS_CACHE.put(shared, (qrels, idx), (users.copy(), out))
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
        rows, member = judgments.row[sel], judgments.member[sel]
        if len(rows) > 1 and (rows[1:] < rows[:-1]).any():     # not grouped by row: one at a time
            np.logical_or.at(out, rows, member)
        else:                                                  # grouped (judgments_from_qrels): per group
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            out[rows[starts]] = np.logical_or.reduceat(member, starts, axis=0)
    return out


_RATED_CACHE = _LRU(16)


def _rated_aspects(judgments: Judgments, minimum: float, strict: bool) -> np.ndarray:
    """:func:`aspects_rated_at_least`, shared by every judged run whose judgments are the same object
    (:func:`judgments_of` hands the same one to every run judged against one Qrels for one set of users)."""
    key = (id(judgments), float(minimum), bool(strict))
    hit = _RATED_CACHE.get(key)
    if hit is None:
        hit = _RATED_CACHE.put(key, judgments, aspects_rated_at_least(judgments, minimum, strict))
    return hit


def _relevant_aspects(judged, aspects) -> np.ndarray:
    """(n, c) aspects shown by at least one relevant (>= threshold) judged item of each user."""
    return _rated_aspects(judgments_of(judged, aspects), judged.threshold, False)


def _positive_aspects(judged, aspects) -> np.ndarray:
    """(n, c) aspects shown by at least one positively rated judged item of each user."""
    return _rated_aspects(judgments_of(judged, aspects), 0.0, True)


def _rmax(judged, max_rating: float, metric: str) -> float:
    """The top rating :math:`r_{max}` of a graded kernel: ``max_rating`` if given (non-zero), else
    the qrels' ``max_rating``.

    Raises :class:`~recmetrics.errors.InputError` when it is not a positive number, or when
    ``max_rating`` is below a grade of one of the evaluated users (naming the user, the item and
    the grade). Give the dataset's declared scale (``Dataset.rating_scale[1]``), not the test
    split's largest rating.

    Examples
    --------
    >>> import pandas as pd, recmetrics as rm
    >>> qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 2.0]}))
    >>> j = rm.judge(rm.Run.from_lists({1: ["b"]}), qrels)
    >>> _rmax(j, 0.0, "ERR-IA"), _rmax(j, 10.0, "ERR-IA")
    (5.0, 10.0)
    >>> _rmax(j, 4.0, "ERR-IA")
    Traceback (most recent call last):
    ...
    recmetrics.errors.InputError: ERR-IA: max_rating=4 is below the grade 5 user 1 gave item 'a'; ...
    """
    r = float(max_rating) if max_rating else float(judged.max_rating)
    if not math.isfinite(r) or r <= 0:
        raise InputError(f"{metric}: the top rating r_max must be a positive number, got {r!r}")
    if max_rating and r < float(judged.max_rating):
        _reject_grades_above(judged, r, metric)
    return r


def _reject_grades_above(judged, rmax: float, metric: str) -> None:
    """Raise InputError naming the evaluated user's judgment with the largest grade above ``rmax`` (if any)."""
    import numpy as np
    import pandas as pd

    frame = _qrels_of(judged).to_frame()
    rating = frame["rating"].to_numpy(dtype=np.float64)
    mine = pd.Index(judged.users).get_indexer(frame["user"].to_numpy()) >= 0
    above = np.flatnonzero(mine & (rating > rmax))
    if len(above) == 0:
        return
    t = above[np.argmax(rating[above])]
    top = float(rating[t])
    user, item = (x.item() if isinstance(x, np.generic) else x for x in (frame["user"].iloc[t], frame["item"].iloc[t]))
    raise InputError(
        f"{metric}: max_rating={rmax:g} is below the grade {top:g} user {user!r} gave item {item!r}; {len(above)} judgment(s) of the evaluated users exceed it, and each gain "
        f"would exceed 1 — give max_rating >= {top:g} (the dataset's declared scale, Dataset.rating_scale[1]) "
        f"or leave it out (the qrels' max_rating)")
