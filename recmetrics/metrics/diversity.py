r"""Aspect-aware metrics: accuracy and diversity together (Parapar & Radlinski, RecSys 2021).

Every kernel takes a :class:`~recmetrics.judged.Judged`, a cut-off ``k`` (None = the whole list)
and the *aspects* of the items (``aspects=``: a ``pd.Series``/mapping item id -> tuple of aspect
labels, e.g. MovieLens genres). The metrics that weight aspects by the user's interest also take
the user's *profile* (``train=``: the training ratings ``user, item, rating``). Pass both to
:func:`recmetrics.evaluate`: ``rm.evaluate(run, qrels, ["ab-nDCG@10"], aspects=ds.aspects,
train=train)``.

Notation: user :math:`u`, ranked list :math:`i_1, i_2, \dots`, aspects :math:`a_\phi`,
test rating :math:`r_{u,i}` (missing when the user did not rate :math:`i`), top rating
:math:`r_{max}` (the qrels' ``max_rating`` unless a metric's ``max_rating`` parameter is set).

**αβ-nDCG** (``ab-nDCG``, Eq. 4-16 of the paper). The probability that item :math:`i`
satisfies the user's interest in :math:`a_\phi` is (Eq. 5-6)

.. math::
   P(a_\phi|u,i) = \begin{cases} 0 & a_\phi \notin i\\ \alpha & r_{u,i}\ \text{missing}\\
   \beta\, r_{u,i}/r_{max} & \text{otherwise,}\end{cases}

the user's interest in the aspect is the maximum-likelihood estimate over a profile (Eq. 9)
:math:`\gamma^u_\phi = \sum_{i\in I_u, a_\phi\in i} r_{u,i} / \sum_\varphi\sum_{i\in I_u,
a_\varphi\in i} r_{u,i}`, redundancy discounts it by what was already shown (Eq. 12,
:math:`R_\phi(k) = \prod_{j<k} 1 - P(a_\phi|u,i_j)`), the gain at rank :math:`k` is (Eq. 13)
:math:`G[k] = 1 - \prod_\phi \bigl(1 - P(a_\phi|u,i_k)\,\gamma^u_\phi\,R_\phi(k)\bigr)`, and
:math:`\alpha\beta\text{-nDCG@}k = \sum_{j\le k} G[j]/\log_2(1+j) \,/\, \mathrm{IDCG}@k`, the
ideal being built greedily from the user's judged test items (highest gain next).

Conventions (documented and tested):

* **Profile** (``profile=``): ``"train"`` (default: Eq. 9 over the training ratings, the user
  profile :math:`I_u` of the paper's Sec. 3), ``"test"`` (Eq. 9 over the user's test ratings,
  the ground truth used in the paper's Sec. 5 experiments) or ``"uniform"`` (equal weight on
  every aspect of the user's relevant test items, ndeval's convention for intent-aware metrics).
  Because the registry checks its context statically, ``train=`` must be passed to ``evaluate``
  even when ``profile`` is not ``"train"`` (any DataFrame, it is not read then).
* **Users with no rated aspect** in their profile (no training rating on an item with an aspect,
  or only zero ratings): :math:`\gamma` is undefined; it falls back to the uniform
  :math:`1/|\mathcal A|` over every aspect label of ``aspects`` (Clarke et al.'s constant
  :math:`\gamma`) and a :class:`UserWarning` names the users.
* **Items without aspects** (an empty tuple, or absent from ``aspects``) show no aspect: they
  contribute no aspect gain (but still take a rank, and still cost ``e`` in EU and RBU).
* **Ideal (greedy)**: candidates are the user's judged test items; at each rank the item with
  the highest gain given the ranks above it is taken; ties go to the item trec_eval/ndeval rank
  first (the largest item id compared as strings). The greedy ideal is an approximation (the
  exact problem is NP-complete), so a ranking can, rarely, score above 1; αβ-nDCG can also
  exceed 1 when unjudged items (gain from ``alpha``) take ranks where the ideal, built from
  judged items only, has smaller gains (e.g. items rated 0, or no judged item left).
* **Cut-off larger than a list**: positions past the end of a list contribute nothing (as in
  trec_eval); the ideal still has ``k`` ranks when the user has enough judged items. A cut-off
  deeper than the judged matrix raises :class:`~recmetrics.errors.InputError`
  (``evaluate`` judges deep enough automatically).
* **Parameters**: ``alpha`` and ``beta`` (and NRBP's ``alpha``, ``beta``; EU's ``alpha``) must be
  in (0, 1]; RBU/EU's persistence ``p`` in (0, 1); the effort ``e`` >= 0; anything else raises
  :class:`~recmetrics.errors.InputError`.

The metrics αβ-nDCG is compared with (Sec. 4.2), adapted to recommendation:

* **α-nDCG** (``a-nDCG``, Clarke et al. 2008), graded: item :math:`i` carries aspect
  :math:`\phi` with grade :math:`J(i,\phi) = [a_\phi\in i]\, r_{u,i}/r_{max}` (0 when unrated),
  :math:`G[k] = \sum_\phi J(i_k,\phi)\prod_{j<k}(1-\alpha J(i_j,\phi))`; every aspect counts the
  same (no user weights), a missing rating counts as 0. With binary judgments this is exactly
  ndeval's α-nDCG (tested against ``pyndeval``).
* **NRBP** (Clarke et al. 2009): :math:`\frac{1-(1-\alpha)\beta}{N}\sum_k \beta^{k-1}G[k]` with
  the α-nDCG gain and :math:`N` the number of aspects of the user's positively rated test items
  (ndeval's "actual subtopics"); no cut-off by default (the whole list).
* **S-Recall@k** (Zhai et al.): the fraction of the user's aspects (those of the user's relevant
  test items) shown by a relevant item in the top k (``relevant_only=False``: by any item).
* **S-RR@k**: the reciprocal of the first rank at which every aspect of the user is covered,
  0 if that takes more than k ranks.
* **ERR-IA**, **P-IA**, **nDCG-IA** (Agrawal et al. 2009; Chapelle et al. 2009):
  :math:`\sum_\phi \gamma^u_\phi M_\phi` with :math:`M_\phi` the metric computed on the aspect-
  conditional relevance :math:`r_{u,i,\phi} = [a_\phi\in i] r_{u,i}` (ERR's stop probability
  :math:`(2^{r}-1)/2^{r_{max}}`; P counts relevant items; nDCG's gain is the rating and its
  ideal is per aspect). Unnormalised, as in the literature: the maximum is below 1.
* **RBU** (Amigó et al. 2018):
  :math:`(1-p)\sum_k p^{k-1}\bigl(\sum_\phi \gamma^u_\phi\, g(i_k,\phi)\, D_\phi(k) - e\bigr)`
  with ERR-IA's redundancy :math:`D_\phi(k)=\prod_{j<k}(1-g(i_j,\phi))` and, as in the authors'
  code (``jCarrilloDeAlbornoz/RBU``, ``RBU.java``), :math:`g = [a_\phi\in i](2^{r}-1)/2^{g^u_\phi}`
  with :math:`g^u_\phi` the highest grade among the user's judged items showing the aspect
  (``norm="aspect"``); ``norm="scale"`` (default: paper 002's Table 1 holds only under it, see
  :func:`rank_biased_utility`) uses :math:`2^{r_{max}}` for every aspect.
* **EU** is a **reconstruction**: Amigó et al. 2018's definition of EU (after Yang & Lad 2009) was
  not available to check against (no text or code found). We use RBU's form with the rating-scale
  grade :math:`g = [a_\phi\in i](2^{r}-1)/2^{r_{max}}` and the α-redundancy
  :math:`D_\phi(k)=\prod_{j<k}(1-\alpha g(i_j,\phi))`; paper 002 gives EU no ``p``, we use RBU's.
* **ERR-IA and ndeval**: with binary judgments and the uniform profile, ours equals ndeval's
  ERR-IA@k times :math:`\alpha\sum_{i\le k}(1-\alpha)^{i-1}/i` (ndeval's "ideal ideal"
  normaliser) **only at ndeval's α = 0.5**, where ndeval's per-subtopic stop probability α equals
  our :math:`(2^1-1)/2^1`; at any other α the two differ (tested at α = 0.25).
"""
from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..errors import InputError, show, require_columns
from .ranking import safe_div
from .registry import register

if TYPE_CHECKING:
    import pandas as pd

PROFILES = ("train", "test", "uniform")
_CACHE_SIZE = 16

__all__ = [
    "PROFILES", "AspectIndex", "aspect_index", "attach_judgments", "judgments_of", "Judgments",
    "judgments_from_qrels", "profile_weights", "aspect_weights", "list_pairs", "ListPairs", "ab_gains", "ab_ideal_gains", "alpha_gains", "alpha_ideal_gains",
    "greedy_ideal", "score_lists", "discount",
]


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------
def discount(n: int) -> np.ndarray:
    """:math:`1/\\log_2(1+j)` for ranks :math:`j = 1..n`."""
    return 1.0 / np.log2(np.arange(2, n + 2))


def _check_unit(name: str, value: float, metric: str, *, open_right: bool = False) -> float:
    v = float(value)
    ok = 0.0 < v < 1.0 if open_right else 0.0 < v <= 1.0
    if not math.isfinite(v) or not ok:
        rng = "(0, 1)" if open_right else "(0, 1]"
        raise InputError(f"{metric}: parameter {name}={value!r} must lie in {rng}")
    return v


def _check_nonneg(name: str, value: float, metric: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{metric}: parameter {name}={value!r} must be a finite number >= 0")
    return v


def _check_profile(profile: str, metric: str) -> str:
    p = str(profile).lower()
    if p not in PROFILES:
        raise InputError(f"{metric}: profile={profile!r} must be one of {PROFILES}")
    return p


def _rmax(j, max_rating: float, metric: str) -> float:
    r = float(max_rating) if max_rating else float(j.max_rating)
    if not math.isfinite(r) or r <= 0:
        raise InputError(f"{metric}: the top rating r_max must be a positive number, got {r!r}")
    return r


class _LRU:
    """A tiny LRU cache; entries keep their key objects alive so ``id()`` keys stay unique."""

    def __init__(self, size: int = _CACHE_SIZE):
        self.size = size
        self.data: OrderedDict = OrderedDict()

    def get(self, key):
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
            return hit[1]
        return None

    def put(self, key, keep, value):
        self.data[key] = (keep, value)
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)
        return value


_ASPECT_CACHE = _LRU()
_IDEAL_CACHE = _LRU(64)


# ------------------------------------------------------------------------------------------
# aspects
# ------------------------------------------------------------------------------------------
def _labels_of(value) -> tuple:
    import pandas as pd

    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, float) and math.isnan(value):
        return ()
    if isinstance(value, (tuple, list, set, frozenset, np.ndarray, pd.Index)):
        return tuple(value)
    raise InputError(f"aspects: value {value!r} is not a tuple/list/set of aspect labels")


@dataclass(frozen=True)
class AspectIndex:
    """Item -> aspect membership as a boolean matrix.

    ``matrix[i, c]`` says whether item ``items[i]`` shows aspect ``labels[c]``; the extra last row
    (all False) stands for items absent from the mapping, which show no aspect.
    """

    items: pd.Index
    labels: np.ndarray
    matrix: np.ndarray

    @property
    def n_aspects(self) -> int:
        return len(self.labels)

    def positions(self, items) -> np.ndarray:
        arr = np.asarray(items)
        flat = arr.ravel()
        pos = self.items.get_indexer(flat) if len(flat) else np.zeros(0, dtype=np.int64)
        pos = np.where(pos < 0, len(self.items), pos)
        return pos.reshape(arr.shape)

    def lookup(self, items) -> np.ndarray:
        """Membership of ``items`` (any shape): boolean array of shape ``items.shape + (c,)``."""
        return self.matrix[self.positions(items)]

    def covered(self, items) -> np.ndarray:
        """Whether each item is in the mapping (with or without aspects)."""
        return self.positions(items) < len(self.items)

    def pairs(self, items, valid=None) -> tuple[np.ndarray, np.ndarray]:
        """Sparse membership of a (rows, k) item matrix: (flat position, aspect) of every pair.

        ``flat position`` is ``row * k + rank``; positions where ``valid`` is False are skipped.
        Pairs come ordered by flat position, then aspect.
        """
        pos = self.positions(items).ravel()
        if valid is not None:
            keep = np.flatnonzero(np.asarray(valid).ravel())
        else:
            keep = np.arange(len(pos))
        indptr, indices = self._csr
        counts = indptr[pos[keep] + 1] - indptr[pos[keep]]
        flat = np.repeat(keep, counts)
        offs = np.arange(len(flat)) - np.repeat(np.cumsum(counts) - counts, counts)
        aspect = indices[np.repeat(indptr[pos[keep]], counts) + offs]
        return flat.astype(np.int64), aspect.astype(np.int64)

    @property
    def _csr(self):
        cached = self.__dict__.get("_csr_cache")
        if cached is None:
            rows, cols = np.nonzero(self.matrix)
            indptr = np.zeros(self.matrix.shape[0] + 1, dtype=np.int64)
            np.add.at(indptr, rows + 1, 1)
            cached = (np.cumsum(indptr), cols.astype(np.int64))
            object.__setattr__(self, "_csr_cache", cached)
        return cached


def aspect_index(aspects) -> AspectIndex:
    """Parse ``aspects`` (Series or mapping item -> iterable of labels) into an :class:`AspectIndex`.

    A string value is one label; ``None``/NaN or an empty tuple means no aspect. Labels are sorted
    (as strings). Parsed indexes are cached by object identity (do not mutate a Series in place
    between calls).
    """
    import pandas as pd

    if isinstance(aspects, AspectIndex):
        return aspects
    if aspects is None:
        raise InputError("aspects are required: pass aspects= (a Series item id -> tuple of aspect labels)")
    key = id(aspects)
    hit = _ASPECT_CACHE.get(key)
    if hit is not None:
        return hit
    if isinstance(aspects, pd.Series):
        series = aspects
    elif isinstance(aspects, Mapping):
        series = pd.Series(list(aspects.values()), index=list(aspects.keys()), dtype=object)
    else:
        raise InputError(f"aspects must be a pandas Series or a mapping item id -> tuple of labels, "
                         f"got {type(aspects).__name__}")
    index = pd.Index(series.index)
    if index.has_duplicates:
        dup = index[index.duplicated()][0]
        raise InputError(f"aspects: item {dup!r} appears more than once; one tuple of labels per item")
    parsed = [_labels_of(v) for v in series.to_numpy()]
    labels = sorted({a for t in parsed for a in t}, key=str)
    col = {a: c for c, a in enumerate(labels)}
    matrix = np.zeros((len(index) + 1, len(labels)), dtype=bool)
    rows = np.fromiter((r for r, t in enumerate(parsed) for _ in t), dtype=np.int64,
                       count=sum(len(t) for t in parsed))
    cols = np.fromiter((col[a] for t in parsed for a in t), dtype=np.int64, count=len(rows))
    matrix[rows, cols] = True
    out = AspectIndex(index, np.array(labels, dtype=object), matrix)
    return _ASPECT_CACHE.put(key, aspects, out)


# ------------------------------------------------------------------------------------------
# the user's full judgments (needed for the ideal and for the ground-truth profile)
# ------------------------------------------------------------------------------------------
def attach_judgments(judged, qrels):
    """Make ``judged`` refer to the :class:`~recmetrics.data.qrels.Qrels` it was built from.

    The aspect-aware ideals need each user's judged *items* (not only their sorted ratings);
    :func:`recmetrics.judged.judge` already keeps them (``Judged.qrels``), this is for judged
    objects built otherwise. Returns ``judged``.
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
        if len(self.row) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.r_[True, self.row[1:] != self.row[:-1]])


def judgments_from_qrels(qrels, users, aspects) -> Judgments:
    """The judgments of ``users`` (in that row order) in ``qrels``, with aspect membership.

    Users absent from the qrels simply have no judgment.
    """
    import pandas as pd

    from ..data.run import trec_tie_order

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
    """The full judgments of ``judged.users`` (from the attached Qrels) with aspect membership."""
    idx = aspect_index(aspects)
    cache = judged.__dict__.setdefault("_diversity_cache", {})
    key = ("judgments", id(idx))
    if key in cache:
        return cache[key][1]
    out = judgments_from_qrels(_qrels_of(judged), judged.users, idx)
    cache[key] = (idx, out)
    return out


# ------------------------------------------------------------------------------------------
# aspect weights gamma (Eq. 9)
# ------------------------------------------------------------------------------------------
def _mle_weights(rows: np.ndarray, ratings: np.ndarray, member: np.ndarray, n: int) -> np.ndarray:
    """Eq. 9: per-row rating mass of each aspect, normalised over aspects (NaN when undefined)."""
    c = member.shape[1]
    sums = np.zeros((n, c))
    if len(rows):
        for a in range(c):  # c is small (genres): one bincount per aspect
            sel = member[:, a]
            if sel.any():
                sums[:, a] = np.bincount(rows[sel], weights=ratings[sel], minlength=n)
    total = sums.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(total > 0, sums / np.where(total > 0, total, 1.0), np.nan)
    return w


def aspects_rated_at_least(judgments: Judgments, minimum: float, strict: bool = False) -> np.ndarray:
    """(n, c): aspects shown by a judged item rated >= ``minimum`` (> when ``strict``)."""
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


def _fallback(w: np.ndarray, users, where: str) -> np.ndarray:
    bad = np.isnan(w).any(axis=1)
    if bad.any():
        c = w.shape[1]
        example = ", ".join(show(u) for u in np.asarray(users)[bad][:3])
        warnings.warn(
            f"{int(bad.sum())} user(s) have no rated item with an aspect in their {where} "
            f"(e.g. {example}); their aspect weights gamma fall back to the uniform 1/{c} "
            f"over every aspect", UserWarning, stacklevel=4)
        w = w.copy()
        w[bad] = 1.0 / c if c else 0.0
    return w


def profile_weights(users, aspects, profile: str = "train", *, train=None,
                    judgments: Judgments | None = None, threshold: float | None = None) -> np.ndarray:
    r"""Aspect weights :math:`\gamma^u_\phi` (Eq. 9) of ``users``, shape ``(n_users, n_aspects)``.

    ``profile="train"`` reads ``train`` (DataFrame ``user, item, rating``); ``"test"`` and
    ``"uniform"`` read ``judgments`` (``"uniform"``: equal weights on the aspects of the user's
    judged items rated >= ``threshold``). Users whose profile has no rated aspect fall back to
    uniform weights over all aspects, with a :class:`UserWarning`.
    """
    import pandas as pd

    profile = _check_profile(profile, "aspect weights")
    idx = aspect_index(aspects)
    n, c = len(users), idx.n_aspects
    if c == 0:
        return np.zeros((n, 0))
    if profile == "train":
        if not isinstance(train, pd.DataFrame):
            raise InputError(f"profile='train' needs the training ratings as a DataFrame (user, item, "
                             f"rating), got {type(train).__name__}")
        require_columns(train, ("user", "item", "rating"), "train")
        rows = pd.Index(users).get_indexer(train["user"].to_numpy())
        keep = rows >= 0
        ratings = pd.to_numeric(train["rating"], errors="coerce").to_numpy(dtype=np.float64)[keep]
        if np.isnan(ratings).any() or (ratings < 0).any():
            raise InputError("train: ratings must be non-negative numbers")
        member = idx.lookup(train["item"].to_numpy()[keep]).reshape(-1, c)
        return _fallback(_mle_weights(rows[keep], ratings, member, n), users, "training profile")
    if judgments is None:
        raise InputError(f"profile={profile!r} needs the users' judgments")
    if profile == "test":
        return _fallback(_mle_weights(judgments.row, judgments.ratings, judgments.member, n), users,
                         "test judgments")
    rel = aspects_rated_at_least(judgments, threshold).astype(np.float64)
    cnt = rel.sum(axis=1, keepdims=True)
    w = np.where(cnt > 0, rel / np.where(cnt > 0, cnt, 1.0), np.nan)
    return _fallback(w, users, "relevant test items")


def aspect_weights(judged, aspects, train=None, profile: str = "train") -> np.ndarray:
    """:func:`profile_weights` of ``judged.users`` (cached on the Judged)."""
    profile = _check_profile(profile, "aspect weights")
    idx = aspect_index(aspects)
    cache = judged.__dict__.setdefault("_diversity_cache", {})
    key = ("weights", id(idx), profile, id(train) if profile == "train" else None)
    if key in cache:
        return cache[key][1]
    jd = judgments_of(judged, idx) if profile != "train" else None
    w = profile_weights(judged.users, idx, profile, train=train, judgments=jd, threshold=judged.threshold)
    cache[key] = ((idx, train), w)
    return w


# ------------------------------------------------------------------------------------------
# the ranked lists as tensors
# ------------------------------------------------------------------------------------------
def _run_arrays(j, k):
    """Cut-off, in-list mask and labels (NaN past the end of a list) of the top k."""
    k = j.cut(k)
    valid = np.arange(k)[None, :] < np.minimum(j.lengths, k)[:, None]
    labels = np.where(valid, j.labels[:, :k], np.nan)
    return k, valid, labels


def _run_member(j, k, valid, idx):
    """Dense (rows, k, c) aspect membership of the top k (False past the end of a list)."""
    return idx.lookup(j.items[:, :k]) & valid[..., None]


# ------------------------------------------------------------------------------------------
# αβ-nDCG
# ------------------------------------------------------------------------------------------
def ab_item_probability(labels: np.ndarray, valid: np.ndarray, alpha: float, beta: float,
                        rmax: float) -> np.ndarray:
    """Eq. 5-6 without the aspect test: alpha if unrated, beta*r/r_max if rated, 0 past the list."""
    p = np.where(np.isnan(labels), alpha, beta * np.nan_to_num(labels) / rmax)
    return np.where(valid, p, 0.0)


_P_MAX = 1.0 - 1e-15  # keeps log1p(-p) finite; a factor 1e-15 stands for an exhausted aspect


def _exclusive_log_cascade(group: np.ndarray, logs: np.ndarray) -> np.ndarray:
    """Within consecutive runs of equal ``group``, the sum of ``logs`` of the earlier elements."""
    if len(logs) == 0:
        return logs
    inc = np.cumsum(logs)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    base = np.repeat(inc[starts] - logs[starts], np.diff(np.r_[starts, len(logs)]))
    return inc - logs - base


@dataclass(frozen=True)
class ListPairs:
    """Sparse (cell, aspect) pairs of ranked lists, sorted for the per-aspect cascade.

    Depends only on the items and the in-list mask, so it can be reused for any ratings and
    parameters (e.g. across re-judged qrels).
    """

    flat: np.ndarray       # (P,) row * k + rank of each pair
    aspect: np.ndarray     # (P,) aspect index
    order: np.ndarray      # pairs sorted by (row, aspect, rank)
    group: np.ndarray      # (P,) group id of the sorted pairs (row, aspect)
    n_rows: int
    k: int


def list_pairs(items: np.ndarray, valid: np.ndarray, aspects) -> ListPairs:
    """Build the :class:`ListPairs` of a (rows, k) item matrix."""
    idx = aspect_index(aspects)
    rows, k = np.shape(items)
    flat, aspect = idx.pairs(items, valid)
    row = flat // max(k, 1)
    order = np.lexsort((flat, aspect, row))
    group = row[order] * (idx.n_aspects + 1) + aspect[order]
    return ListPairs(flat, aspect, order, group, rows, k)


def _cascade(pairs: ListPairs, value: np.ndarray, decay: np.ndarray, weight: np.ndarray | None,
             combine: str) -> np.ndarray:
    r"""Gains of the (rows, k) cells of ``pairs``.

    ``value``/``decay``/``weight`` are per pair; an aspect's state before a cell is
    :math:`\prod (1 - decay)` over the earlier pairs of the same row and aspect.
    ``combine``: ``"noisy-or"`` gives :math:`1-\prod(1 - value\cdot weight\cdot R)`,
    ``"sum"`` gives :math:`\sum value\cdot R`.
    """
    n_cells = pairs.n_rows * pairs.k
    if len(pairs.flat) == 0:
        return np.zeros((pairs.n_rows, pairs.k))
    logs = np.log1p(-np.minimum(decay[pairs.order], _P_MAX))
    R = np.empty(len(pairs.flat))
    R[pairs.order] = np.exp(_exclusive_log_cascade(pairs.group, logs))
    if combine == "noisy-or":
        term = np.log1p(-np.minimum(value * weight * R, _P_MAX))
        out = -np.expm1(np.bincount(pairs.flat, weights=term, minlength=n_cells))
    else:
        out = np.bincount(pairs.flat, weights=value * R, minlength=n_cells)
    return out.reshape(pairs.n_rows, pairs.k)


def ab_gains(items: np.ndarray, labels: np.ndarray, valid: np.ndarray, gamma: np.ndarray,
             alpha: float, beta: float, rmax: float, aspects, pairs: ListPairs | None = None) -> np.ndarray:
    """Per-rank αβ-nDCG gains G[k] (Eq. 13) of ranked lists, shape ``(rows, k)``.

    items/labels/valid: (rows, k) item ids, ratings (NaN = unrated) and in-list positions;
    gamma: (rows, c) aspect weights; aspects: the item -> aspects mapping (or its index);
    pairs: a precomputed :func:`list_pairs` of ``items``/``valid`` (optional).
    """
    pairs = list_pairs(items, valid, aspects) if pairs is None else pairs
    k = pairs.k
    p = ab_item_probability(labels, valid, alpha, beta, rmax).ravel()[pairs.flat]      # Eq. 5-6
    w = gamma[pairs.flat // k, pairs.aspect] if len(pairs.flat) else np.zeros(0)
    return _cascade(pairs, p, p, w, "noisy-or")                                     # Eq. 12-13


def greedy_ideal(row: np.ndarray, value: np.ndarray, decay: np.ndarray, weights: np.ndarray | None,
                 n_rows: int, k: int, combine: str) -> np.ndarray:
    r"""Greedy ideal gains for candidates grouped by ``row`` (contiguous, in tie order).

    ``value``/``decay``: (N, c) per candidate and aspect. At each rank every still-unused
    candidate's gain is computed given the aspect state ``R`` of its row (``R`` starts at 1 and is
    multiplied by ``1 - decay`` of each chosen item); the candidate with the highest gain is taken
    (ties: the first in its group). ``combine``: ``"noisy-or"`` (αβ-nDCG,
    :math:`1-\prod_\phi(1-v_\phi w_\phi R_\phi)`) or ``"sum"`` (α-nDCG,
    :math:`\sum_\phi v_\phi R_\phi`). Vectorised over rows (and sparse over aspects);
    sequential over ranks. Returns ``(n_rows, k)`` gains (0 once a row runs out of candidates).
    """
    out = np.zeros((n_rows, k))
    N = len(row)
    if N == 0 or k == 0:
        return out
    c = value.shape[1]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    sizes = np.diff(np.r_[starts, N])
    seg_rows = row[starts]
    seg_of = np.repeat(np.arange(len(starts)), sizes)
    cand, asp = np.nonzero(value)              # sparse pairs
    v = value[cand, asp]
    pair_row = row[cand]
    w = weights[pair_row, asp] if weights is not None else None
    R = np.ones((n_rows, c))
    avail = np.ones(N, dtype=bool)
    pos = np.arange(N)
    for step in range(min(k, int(sizes.max()))):
        Rp = R[pair_row, asp]
        if combine == "noisy-or":
            term = np.log1p(-np.minimum(v * w * Rp, _P_MAX))
            g = -np.expm1(np.bincount(cand, weights=term, minlength=N))
        else:
            g = np.bincount(cand, weights=v * Rp, minlength=N)
        g = np.where(avail, g, -np.inf)
        best = np.maximum.reduceat(g, starts)
        ok = best > -np.inf
        hit = avail & (g == best[seg_of])
        first = np.minimum.reduceat(np.where(hit, pos, N), starts)
        sel = first[ok]
        out[seg_rows[ok], step] = best[ok]
        R[row[sel]] *= 1.0 - decay[sel]
        avail[sel] = False
    return out


def ab_ideal_gains(judgments: Judgments, gamma: np.ndarray, alpha: float, beta: float, rmax: float,
                   k: int) -> np.ndarray:
    """Greedy ideal αβ-nDCG gains from the users' judged items (alpha is unused: all are rated)."""
    P = judgments.member * (beta * judgments.ratings / rmax)[:, None]
    return greedy_ideal(judgments.row, P, P, gamma, judgments.n_users, k, "noisy-or")


def _cached_ideal(j, kind: str, params: tuple, k: int, compute, keep: tuple = ()):
    """Ideal gains shared by every run judged against the same Qrels for the same users."""
    qrels = _qrels_of(j)
    users = np.asarray(j.users)
    key = (kind, id(qrels), params, k, users.dtype.str, hash(users.tobytes()) if users.dtype != object
           else hash(tuple(users.tolist())))
    hit = _IDEAL_CACHE.get(key)
    if hit is not None and hit.shape[0] == len(users):
        return hit
    return _IDEAL_CACHE.put(key, (qrels, keep), compute())


def _profiled_lists(j, k, profile, aspects, train, name):
    """What the profile-weighted kernels share: the checked profile, the aspect index, the judged
    lists cut at ``k`` (``k, valid, labels``) and the users' aspect weights γ."""
    profile = _check_profile(profile, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    return profile, idx, k, valid, labels, aspect_weights(j, idx, train, profile)


@register("ab-nDCG", aliases=("abndcg", "alphabeta-nDCG", "alpha-beta-nDCG"),
          params={"alpha": 0.005, "beta": 0.5, "profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, math.inf), perfect=1.0,
          description="αβ-nDCG@k (Parapar & Radlinski 2021, Eq. 4-16): rating- and redundancy-aware "
                      "aspect gain weighted by the user's aspect interest, greedy ideal")
def ab_ndcg(j, k, alpha=0.005, beta=0.5, profile="train", max_rating=0.0, *, aspects, train):
    name = "ab-nDCG"
    alpha = _check_unit("alpha", alpha, name)
    beta = _check_unit("beta", beta, name)
    rmax = _rmax(j, max_rating, name)
    profile, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, name)
    dcg = ab_gains(j.items[:, :k], labels, valid, gamma, alpha, beta, rmax, idx) @ discount(k)
    idcg = _cached_ideal(
        j, "ab", (id(idx), profile, id(train) if profile == "train" else None, alpha, beta, rmax), k,
        lambda: ab_ideal_gains(judgments_of(j, idx), gamma, alpha, beta, rmax, k),
        keep=(idx, train)) @ discount(k)
    return safe_div(dcg, idcg)


# ------------------------------------------------------------------------------------------
# α-nDCG, NRBP, S-Recall, S-RR (no user weights)
# ------------------------------------------------------------------------------------------
def _grades(labels: np.ndarray, rmax: float) -> np.ndarray:
    return np.nan_to_num(labels) / rmax


def alpha_gains(items: np.ndarray, labels: np.ndarray, valid: np.ndarray, alpha: float, rmax: float,
                aspects, pairs: ListPairs | None = None) -> np.ndarray:
    r"""Per-rank α-nDCG gains :math:`\sum_\phi J(i_k,\phi)\prod_{j<k}(1-\alpha J(i_j,\phi))`."""
    pairs = list_pairs(items, valid, aspects) if pairs is None else pairs
    J = (_grades(labels, rmax) * valid).ravel()[pairs.flat]
    return _cascade(pairs, J, alpha * J, None, "sum")


def alpha_ideal_gains(judgments: Judgments, alpha: float, rmax: float, k: int) -> np.ndarray:
    """Greedy ideal α-nDCG gains from the users' judged items (ndeval's idealResult)."""
    J = judgments.member * (judgments.ratings / rmax)[:, None]
    return greedy_ideal(judgments.row, J, alpha * J, None, judgments.n_users, k, "sum")


@register("a-nDCG", aliases=("alpha-nDCG", "alphandcg"), params={"alpha": 0.5, "max_rating": 0.0},
          needs=("aspects",), family="diversity", bounds=(0.0, 1.0), perfect=1.0,
          description="α-nDCG@k (Clarke et al. 2008), graded: aspect grade r/r_max, redundancy "
                      "(1-α·J), all aspects equal, missing = 0; greedy ideal (= ndeval with binary judgments)")
def alpha_ndcg(j, k, alpha=0.5, max_rating=0.0, *, aspects):
    name = "a-nDCG"
    alpha = _check_unit("alpha", alpha, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    dcg = alpha_gains(j.items[:, :k], labels, valid, alpha, rmax, idx) @ discount(k)
    idcg = _cached_ideal(j, "alpha", (id(idx), alpha, rmax), k,
                         lambda: alpha_ideal_gains(judgments_of(j, idx), alpha, rmax, k),
                         keep=(idx,)) @ discount(k)
    return safe_div(dcg, idcg)


@register("NRBP", params={"alpha": 0.25, "beta": 0.9, "max_rating": 0.0}, needs=("aspects",),
          family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Novelty- and rank-biased precision (Clarke et al. 2009), graded like α-nDCG; "
                      "whole list unless a cut-off is given (= ndeval's NRBP with binary judgments)")
def nrbp(j, k, alpha=0.25, beta=0.9, max_rating=0.0, *, aspects):
    name = "NRBP"
    alpha = _check_unit("alpha", alpha, name)
    beta = _check_unit("beta", beta, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    k, valid, labels = _run_arrays(j, k)
    g = alpha_gains(j.items[:, :k], labels, valid, alpha, rmax, idx)
    score = g @ (beta ** np.arange(k))
    n_aspects = _positive_aspects(j, idx).sum(axis=1)
    return safe_div((1.0 - (1.0 - alpha) * beta) * score, n_aspects)


def _coverage(j, k, idx, relevant_only: bool):
    """(rows, k) number of the user's aspects covered up to each rank, and (rows,) |A_u|."""
    k, valid, labels = _run_arrays(j, k)
    user_aspects = _relevant_aspects(j, idx)
    show = valid & (labels >= j.threshold) if relevant_only else valid
    pairs = list_pairs(j.items[:, :k], show, idx)
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
    idx = aspect_index(aspects)
    counts, n_aspects = _coverage(j, k, idx, bool(relevant_only))
    last = counts[:, -1] if counts.shape[1] else np.zeros(len(j.users))
    return safe_div(last, n_aspects)


@register("S-RR", aliases=("srr", "subtopic-rr", "s_rr"), params={"relevant_only": True},
          needs=("aspects",), family="diversity", bounds=(0.0, 1.0), perfect=1.0,
          description="Subtopic reciprocal rank@k: 1 / the first rank where every aspect of the user is "
                      "covered (0 if not within k; no cut-off = the whole list)")
def s_rr(j, k, relevant_only=True, *, aspects):
    idx = aspect_index(aspects)
    counts, n_aspects = _coverage(j, k, idx, bool(relevant_only))
    full = (counts == n_aspects[:, None]) & (n_aspects[:, None] > 0)
    first = full.argmax(axis=1) if full.shape[1] else np.zeros(len(j.users), dtype=np.int64)
    return np.where(full.any(axis=1), 1.0 / (first + 1), 0.0)


# ------------------------------------------------------------------------------------------
# intent-aware metrics: ERR-IA, P-IA, nDCG-IA
# ------------------------------------------------------------------------------------------
def _err_grade(labels: np.ndarray, rmax: float) -> np.ndarray:
    return (np.exp2(np.nan_to_num(labels)) - 1.0) / np.exp2(rmax)


@register("ERR-IA", aliases=("err_ia", "errIA"), params={"profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Intent-aware ERR (Chapelle et al. 2009): Σ_φ γ_φ ERR_φ@k on aspect-conditional "
                      "ratings, stop probability (2^r-1)/2^r_max (= ndeval's ERR-IA after rescaling only "
                      "at ndeval's α = 0.5)")
def err_ia(j, k, profile="train", max_rating=0.0, *, aspects, train):
    r"""ERR-IA. Equals ndeval's ERR-IA@k (binary judgments, ``profile="uniform"``) multiplied by
    ndeval's normaliser :math:`\alpha\sum_{i\le k}(1-\alpha)^{i-1}/i` only when ndeval runs with
    α = 0.5: ndeval's stop probability per subtopic is α, ours :math:`(2^1-1)/2^1 = 0.5`; at any
    other α they differ (``tests/test_diversity.py`` checks both)."""
    name = "ERR-IA"
    rmax = _rmax(j, max_rating, name)
    _, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, name)
    pairs = list_pairs(j.items[:, :k], valid, idx)
    R = _err_grade(labels, rmax).ravel()[pairs.flat]
    w = gamma[pairs.flat // k, pairs.aspect] if len(pairs.flat) else np.zeros(0)
    per_rank = _cascade(pairs, w * R, R, None, "sum")       # Σ_φ γ_φ R_kφ Π_{j<k}(1 - R_jφ)
    return per_rank @ (1.0 / np.arange(1, k + 1))


@register("P-IA", aliases=("p_ia", "precision-ia"), params={"profile": "train"},
          needs=("aspects",), optional=("train",), family="diversity", cutoff="required", bounds=(0.0, 1.0),
          perfect=None,
          description="Intent-aware precision@k (Agrawal et al. 2009): Σ_φ γ_φ P@k_φ, P_φ counting "
                      "relevant items showing φ")
def p_ia(j, k, profile="train", *, aspects, train):
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


@register("nDCG-IA", aliases=("ndcg_ia", "ndcgIA"), params={"profile": "train"},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Intent-aware nDCG@k (Agrawal et al. 2009): Σ_φ γ_φ nDCG@k_φ, rating as gain, "
                      "per-aspect ideal")
def ndcg_ia(j, k, profile="train", *, aspects, train):
    _, idx, k, valid, labels, gamma = _profiled_lists(j, k, profile, aspects, train, "nDCG-IA")
    member = _run_member(j, k, valid, idx)
    g = np.where(valid, np.nan_to_num(labels), 0.0)
    g = np.where(g > 0, g, 0.0)
    dcg = np.einsum("rkc,rk,k->rc", member, g, discount(k))
    idcg = _aspect_idcg(judgments_of(j, idx), k)
    nd = safe_div(dcg, idcg)
    return (nd * gamma).sum(axis=1)


# ------------------------------------------------------------------------------------------
# EU and RBU
# ------------------------------------------------------------------------------------------
RBU_NORMS = ("aspect", "scale")


def aspect_top_grades(judgments: Judgments) -> np.ndarray:
    """(n, c): the highest rating among each user's judged items showing each aspect (NaN if none).

    The normaliser of RBU in its authors' code (``jCarrilloDeAlbornoz/RBU``, ``RBU.java``: the
    first item of the aspect's perfect ranking, ``2^max grade``).
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
    pairs = list_pairs(j.items[:, :k], valid, idx)
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
    return (1.0 - p) * ((gain - e * valid) @ (p ** np.arange(k)))


@register("EU", aliases=("expected-utility",), params={"alpha": 0.25, "e": 0.05, "p": 0.99,
                                                       "profile": "train", "max_rating": 0.0},
          needs=("aspects",), optional=("train",), family="diversity", bounds=(-math.inf, 1.0), perfect=None,
          description="Expected utility (Yang & Lad 2009), a RECONSTRUCTION (Amigó et al. 2018's "
                      "definition not found): rank-biased aspect-weighted gain with (1-α·g) redundancy "
                      "minus effort e per item")
def expected_utility(j, k, alpha=0.25, e=0.05, p=0.99, profile="train", max_rating=0.0, *,
                     aspects, train):
    r"""EU — a reconstruction, not checked against a reference: Amigó et al. 2018's definition (the
    one paper 002 follows) could not be found, as text or code. Form: RBU's rank-biased utility with
    the rating-scale grade :math:`(2^r-1)/2^{r_{max}}` and redundancy :math:`\prod(1-\alpha g)`."""
    name = "EU"
    alpha = _check_unit("alpha", alpha, name)
    e = _check_nonneg("e", e, name)
    p = _check_unit("p", p, name, open_right=True)
    profile = _check_profile(profile, name)
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    gamma = aspect_weights(j, idx, train, profile)
    return _utility(j, k, idx, gamma, p, e, alpha, rmax)


@register("RBU", aliases=("rank-biased-utility",), params={"e": 0.05, "p": 0.99, "profile": "train",
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
    while Table 1 marks RBU as satisfying it."""
    name = "RBU"
    e = _check_nonneg("e", e, name)
    p = _check_unit("p", p, name, open_right=True)
    profile = _check_profile(profile, name)
    norm = str(norm).lower()
    if norm not in RBU_NORMS:
        raise InputError(f"{name}: norm={norm!r} must be one of {RBU_NORMS}")
    rmax = _rmax(j, max_rating, name)
    idx = aspect_index(aspects)
    gamma = aspect_weights(j, idx, train, profile)
    top = aspect_top_grades(judgments_of(j, idx)) if norm == "aspect" else None
    return _utility(j, k, idx, gamma, p, e, None, rmax, top)


# ------------------------------------------------------------------------------------------
# scoring hand-made rankings (axioms, widgets)
# ------------------------------------------------------------------------------------------
PROFILE_PREFIX = "__profile__:"


def _profile_frame(profile, user) -> tuple[pd.DataFrame, dict]:
    """Training ratings realising ``profile``: a mapping aspect -> weight, or (item, rating) pairs."""
    import pandas as pd

    if profile is None:
        return pd.DataFrame({"user": [], "item": [], "rating": []}), {}
    if isinstance(profile, pd.DataFrame):
        f = profile[["item", "rating"]].copy()
        f.insert(0, "user", user)
        return f, {}
    if isinstance(profile, Mapping):
        rows, extra = [], {}
        for label, weight in profile.items():
            w = float(weight)
            if not math.isfinite(w) or w < 0:
                raise InputError(f"profile weight of aspect {label!r} must be >= 0, got {weight!r}")
            if w > 0:
                item = f"{PROFILE_PREFIX}{label}"
                rows.append((user, item, w))
                extra[item] = (label,)
        return pd.DataFrame(rows, columns=["user", "item", "rating"]), extra
    raise InputError(f"profile must be a mapping aspect -> weight or a DataFrame (item, rating), "
                     f"got {type(profile).__name__}")


def score_lists(lists: Sequence[Sequence[Any]], judgments, aspects: Mapping, metrics,
                *, profile=None, threshold: float = 4.0, max_rating: float = 5.0) -> pd.DataFrame:
    """Score hand-made rankings of one (hypothetical) user with any registered metrics.

    lists: the rankings (item ids, best first); judgments: the user's test ratings as a mapping
    item -> rating (unrated items are absent), or one mapping per list; aspects: mapping item ->
    labels; profile: the user's interest, as a mapping aspect -> weight (realised as training
    ratings, so Eq. 9 returns exactly these weights normalised), a DataFrame ``item, rating`` of
    training ratings, None, or one of those per list. Each list is scored as a separate user with
    its own copy of the judgments. Returns a DataFrame (one row per list, one column per metric).
    """
    import pandas as pd

    from ..data.qrels import Qrels
    from ..data.run import Run
    from ..judged import judge
    from .registry import parse

    lists = [list(x) for x in lists]
    if not lists:
        raise InputError("score_lists needs at least one ranking")
    n = len(lists)
    per_j = list(judgments) if isinstance(judgments, (list, tuple)) else [judgments] * n
    per_p = list(profile) if isinstance(profile, (list, tuple)) else [profile] * n
    if len(per_j) != n or len(per_p) != n:
        raise InputError("give one judgments mapping (and profile) per list, or a single one for all")
    specs = [parse(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    q_rows, t_frames, extra = [], [], {}
    for u in range(n):
        for item, rating in per_j[u].items():
            if rating is None or (isinstance(rating, float) and math.isnan(rating)):
                continue
            q_rows.append((u, item, float(rating)))
        f, ex = _profile_frame(per_p[u], u)
        t_frames.append(f)
        extra.update(ex)
    if not q_rows:
        raise InputError("the user needs at least one judged (rated) item")
    qrels = Qrels(pd.DataFrame(q_rows, columns=["user", "item", "rating"]), threshold=threshold,
                  max_rating=max_rating)
    for row in lists:
        if len(set(row)) != len(row):
            raise InputError(f"ranking {row!r} lists an item twice")
    run = Run.from_lists({u: lists[u] for u in range(n)}, name="hand-made")
    depth = max([len(x) for x in lists] + [s.k or 0 for s in specs] + [1])
    j = attach_judgments(judge(run, qrels, depth=depth, users=np.arange(n)), qrels)
    asp = dict(aspects)
    asp.update(extra)
    asp_series = pd.Series(list(asp.values()), index=list(asp.keys()), dtype=object)
    train = pd.concat(t_frames, ignore_index=True) if t_frames else None
    out = {str(s): s(j, aspects=asp_series, train=train) for s in specs}
    return pd.DataFrame(out, index=pd.RangeIndex(n, name="list"))
