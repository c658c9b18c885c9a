"""Classification and ROC metrics of a top-k list (Schröder, Thiele & Lehner 2011, §4.2, §4.3, §5).

The top-k list of a user is read as a binary classification of the user's *item universe*
(Table 1 of the paper): the first ``k`` ranked items are "recommended", every other item of the
universe is "not recommended"; the user's test ratings >= threshold are "relevant", every other
item of the universe is "irrelevant". :func:`confusion` returns the four per-user counts.

The universe (``universe=`` parameter of every metric here)
-----------------------------------------------------------
``"all"`` (default) -- the AllItems design: every item of the ``catalog`` that the user did not
    rate in ``train``. Unjudged items count as irrelevant. Needs the context ``train=`` (ratings
    DataFrame with ``user, item`` columns) and ``catalog=`` (array of every item id), e.g.
    ``rm.evaluate(run, qrels, ["markedness@10"], train=train, catalog=items)``. A ranked item
    outside the universe (one of the user's training items, or an id missing from the catalog)
    raises :class:`~recmetrics.errors.InputError` naming the user and the item, and so does a
    cut-off ``k`` larger than a user's universe. The user's test items are assumed to lie in the
    universe (a split keeps them out of the user's training ratings); when the counts show
    otherwise (``tn < 0``) an ``InputError`` names the user.
``"judged"`` -- only the user's judged items (relevant + judged non-relevant), as in the
    paper's ten-item examples: unjudged ranked items are skipped (neither recommended nor in the
    universe), so ``k`` counts ranks and may exceed the number of judged items. ``train`` and
    ``catalog`` are not used, but the registry still asks for them (``needs`` is static); pass
    what you have (any non-None value, e.g. ``catalog=[]``).

Users without a list in the run have an empty recommended set (``tp = fp = 0``): the metrics take
the values of that confusion matrix (see the table below); they are *not* forced to 0.

Metrics and their value when a denominator is zero
--------------------------------------------------
Precision and recall are the registered ``P@k`` and ``Recall@k`` of :mod:`.ranking` (``P@k``
divides by ``k`` as trec_eval does; the paper's ``tp / (tp + fp)`` used inside markedness equals
it whenever the list holds ``k`` items of the universe). ``F1@k`` is also in :mod:`.ranking`.

=====================  ===================================  =====================================
metric (registered)    definition                           zero denominator ->
=====================  ===================================  =====================================
fallout (FPR)          fp / (fp + tn)                       0 (no irrelevant item in the universe)
missrate (FNR)         fn / (tp + fn)                       0 (no relevant item)
inverse_precision      tn / (fn + tn)                       0 (the whole universe recommended)
inverse_recall (TNR)   tn / (fp + tn)                       0 (no irrelevant item)
Fbeta                  (1+b²)·P·R / (b²·P + R), P@k/R@k     0 (P = R = 0)
markedness             precision + inverse precision - 1    0, chance level (nothing recommended,
                       = (tp·tn - fp·fn)/((tp+fp)(fn+tn))      or everything recommended)
informedness           recall + inverse recall - 1          0, chance level (no relevant or no
                       = (tp·tn - fp·fn)/((tp+fn)(fp+tn))      irrelevant item)
MCC                    (tp·tn - fp·fn) / sqrt of the four   0, chance level (any marginal is 0)
                       marginals = sign · sqrt(inf · mk)
AUC                    area under the ROC of the whole      0.5, chance level (no relevant or no
                       list, the rest of the universe tied     irrelevant item)
LAUC@k                 AUC of the list cut at k (§5.2)      0.5, as AUC
BKTau[@k]              Kendall's tau-b, ranking vs          0, chance level (no relevant or no
                       relevance (§4.3)                        irrelevant item, or all tied)
=====================  ===================================  =====================================

Sign convention of MCC (the paper's ``± sqrt(informedness · markedness)``): markedness and
informedness share the sign of ``tp·tn - fp·fn``, so MCC takes that common sign; MCC² =
informedness · markedness exactly.

ROC, AUC and LAUC (§5.2). Walking down the list, a relevant item moves the ROC curve up by
``1/R`` and an irrelevant one right by ``1/(N - R)``; the items of the universe that the list
(cut at ``k``) does not rank are tied behind it, which draws the straight line from the end of
the list to (1, 1) -- the paper's "assume that all other relevant items will be distributed
uniformly over the rest of the ranking". The area is the probability that a random relevant item
is ranked above a random irrelevant one, ties counting one half (Mann-Whitney). ``AUC`` uses the
whole list (a full ranking of the universe gives the textbook AUC); ``LAUC@k`` the top k. LAUC is
1 when every relevant item is retrieved first and fits in the top k, 0 when the top k holds all
irrelevant items first, minimal when the top k holds no relevant item; a relevant item moving up
increases it, a swap at the top or the bottom of the top k changes it by the same 1/(R·(N-R)),
changes below rank k are ignored.

Boolean Kendall's tau (§4.3). The recommender's partial ranking of the universe -- the list in
its order, then every unranked item in one tied bucket -- against the relevance partial ranking
(relevant above irrelevant), by Kendall's tau-b (ties in either ranking, as
``scipy.stats.kendalltau``). ``BKTau`` uses the whole list, ``BKTau@k`` the top k (the paper's
top-k variant). With ``ordered=false`` the recommended items form one tied bucket as well
(recommended/not vs relevant/not): tau-b of a 2x2 table is exactly MCC@k. Its largest value for
a perfect ranking is ``sqrt(R·(N-R) / untied pairs of the ranking)``, below 1 (the relevance
ranking ties many pairs); per user it is a positive multiple of ``2·AUC - 1``.

Aggregation. The geometric and harmonic means (GMAP, HMAP) are only defined for non-negative
values: :func:`~recmetrics.metrics.aggregate.aggregate` raises ``InputError`` when a per-user
value is negative, which markedness, informedness, MCC and BKTau can be. For those, pass
``unit=true`` (e.g. ``MCC@10(unit=true)``) to get ``(1 + x) / 2`` in [0, 1] (for informedness
that is the balanced accuracy), which every mean accepts; the floor 1e-5 then applies to the
worst value (x = -1). The arithmetic and quadratic means accept negative values as they are.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import InputError, require_columns
from . import ranking as _ranking
from .ranking import safe_div
from .registry import register

if TYPE_CHECKING:
    import pandas as pd

UNIVERSES = ("all", "judged")
_NEEDS = ("train", "catalog")
_CACHE_ATTR = "_classification_universe"


def _show(v) -> str:
    if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:
        v = v.item()
    return repr(v)


class Confusion(NamedTuple):
    """Per-user confusion matrices of a top-k list: four int64 arrays aligned with ``judged.users``."""

    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """Size of each user's universe."""
        return self.tp + self.fp + self.fn + self.tn


class Universe(NamedTuple):
    """The item universe of every evaluated user."""

    mode: str
    size: np.ndarray     # (n_users,) number of items in the user's universe
    inside: np.ndarray   # (n_users, depth) the ranked item at this position belongs to the universe


# ------------------------------------------------------------------------------------ universe
def _check_mode(mode: str) -> str:
    if mode not in UNIVERSES:
        raise InputError(f"universe must be one of {UNIVERSES}, got {mode!r}")
    return mode


def _all_items_universe(j, train, catalog) -> Universe:
    import pandas as pd

    if catalog is None or train is None:
        raise InputError("the AllItems universe needs train= (training ratings, columns user, item) and "
                         "catalog= (every item id); or use universe=judged")
    if not isinstance(train, pd.DataFrame):
        raise InputError(f"train must be a DataFrame with columns user, item; got {type(train).__name__}")
    require_columns(train, ("user", "item"), "train")
    cat = pd.Index(pd.unique(np.asarray(catalog).ravel()))
    if len(cat) == 0:
        raise InputError("catalog is empty: pass the ids of every item that can be recommended")
    n, ncat = len(j), len(cat)
    users = pd.Index(j.users)
    uidx = users.get_indexer(train["user"].to_numpy())
    iidx = cat.get_indexer(train["item"].to_numpy())
    keep = (uidx >= 0) & (iidx >= 0)
    train_keys = np.unique(uidx[keep].astype(np.int64) * ncat + iidx[keep])
    size = ncat - np.bincount(train_keys // ncat, minlength=n).astype(np.int64)

    present = np.arange(j.depth)[None, :] < j.lengths[:, None]
    rows, cols = np.nonzero(present)
    ranked = j.items[rows, cols]
    ii = cat.get_indexer(ranked)
    if (ii < 0).any():
        b = int(np.flatnonzero(ii < 0)[0])
        raise InputError(
            f"item {_show(ranked[b])} at rank {cols[b] + 1} of user {_show(j.users[rows[b]])} is not in the "
            f"catalog ({ncat} items); the AllItems universe is the catalog minus the user's training items: "
            f"pass every item id as catalog=, or use universe=judged")
    if len(train_keys):
        keys = rows.astype(np.int64) * ncat + ii
        pos = np.minimum(np.searchsorted(train_keys, keys), len(train_keys) - 1)
        seen = train_keys[pos] == keys
        if seen.any():
            b = int(np.flatnonzero(seen)[0])
            raise InputError(
                f"item {_show(ranked[b])} at rank {cols[b] + 1} of user {_show(j.users[rows[b]])} is one of the "
                f"user's training items, outside the AllItems universe; recommend with exclude_seen=True "
                f"or use universe=judged")
    return Universe("all", size, present)


def item_universe(j, *, train=None, catalog=None, mode: str = "all") -> Universe:
    """The item universe of every user of ``j`` (see the module docstring).

    Computed once per (judged, train, catalog) and cached on the judged object, so that many
    metrics and cut-offs share the validation and the per-user counts (vectorised: one
    ``bincount`` over the training pairs, one sorted-key lookup of the ranked items).
    """
    mode = _check_mode(mode)
    cache = j.__dict__.setdefault(_CACHE_ATTR, {})
    key = (mode,) if mode == "judged" else (mode, id(train), id(catalog))
    hit = cache.get(key)
    if hit is not None and hit[0] is train and hit[1] is catalog:
        return hit[2]
    if mode == "judged":
        u = Universe("judged", (j.n_rel + j.n_nonrel).astype(np.int64), ~np.isnan(j.labels))
    else:
        u = _all_items_universe(j, train, catalog)
    cache[key] = (train, catalog, u)  # strong references keep the ids valid while j lives
    return u


def _resolve(j, k, U: Universe, check_k: bool) -> int:
    kk = j.cut(k)
    if check_k and U.mode == "all" and len(j):
        too = kk > U.size
        if too.any():
            b = int(np.flatnonzero(too)[0])
            raise InputError(
                f"cut-off k={kk} exceeds the universe of user {_show(j.users[b])} ({int(U.size[b])} items "
                f"not rated in training); a top-{kk} list cannot be drawn from it")
    return kk


def _counts(j, kk: int, U: Universe) -> Confusion:
    inside = U.inside[:, :kk].sum(axis=1).astype(np.int64)
    tp = j.rel[:, :kk].sum(axis=1).astype(np.int64)
    fp = inside - tp
    fn = np.asarray(j.n_rel, dtype=np.int64) - tp
    tn = U.size - inside - fn
    if (tn < 0).any():
        b = int(np.flatnonzero(tn < 0)[0])
        raise InputError(
            f"user {_show(j.users[b])}: the universe ({int(U.size[b])} items) is smaller than the recommended "
            f"items plus the relevant ones not recommended ({int(inside[b] + fn[b])}); are some of the user's "
            f"test items missing from the catalog or also in the training ratings?")
    return Confusion(tp, fp, fn, tn)


def confusion(j, k: int | None, *, train=None, catalog=None, universe: str = "all") -> Confusion:
    """tp, fp, fn, tn per user of the top-``k`` list (``k=None``: the whole list) of ``j``.

    ``universe='all'`` (AllItems, needs ``train`` and ``catalog``) or ``'judged'``. Raises
    :class:`InputError` for a ranked item outside the universe, and (AllItems) for ``k`` larger
    than a user's universe.
    """
    U = item_universe(j, train=train, catalog=catalog, mode=universe)
    kk = _resolve(j, k, U, check_k=k is not None)
    return _counts(j, kk, U)


def _discordant_in_list(j, kk: int, U: Universe) -> np.ndarray:
    """Sum over the relevant items of the top k of the irrelevant universe items ranked above them."""
    rel = j.rel[:, :kk]
    non = U.inside[:, :kk] & ~rel
    above = np.cumsum(non, axis=1) - non
    return (above * rel).sum(axis=1).astype(np.float64)


# ------------------------------------------------------------------------ functions of counts

def _f(c: Confusion):
    return tuple(np.asarray(x, dtype=np.float64) for x in c)


def precision_of(c: Confusion) -> np.ndarray:
    """tp / (tp + fp); 0 when nothing is recommended."""
    return safe_div(c.tp, c.tp + c.fp)


def recall_of(c: Confusion) -> np.ndarray:
    """tp / (tp + fn); 0 when the user has no relevant item."""
    return safe_div(c.tp, c.tp + c.fn)


def fallout_of(c: Confusion) -> np.ndarray:
    """fp / (fp + tn); 0 when the universe has no irrelevant item."""
    return safe_div(c.fp, c.fp + c.tn)


def miss_rate_of(c: Confusion) -> np.ndarray:
    """fn / (tp + fn); 0 when the user has no relevant item."""
    return safe_div(c.fn, c.tp + c.fn)


def inverse_precision_of(c: Confusion) -> np.ndarray:
    """tn / (fn + tn); 0 when the whole universe is recommended."""
    return safe_div(c.tn, c.fn + c.tn)


def inverse_recall_of(c: Confusion) -> np.ndarray:
    """tn / (fp + tn); 0 when the universe has no irrelevant item."""
    return safe_div(c.tn, c.fp + c.tn)


def f_beta(p, r, beta: float = 1.0) -> np.ndarray:
    """(1 + beta²)·p·r / (beta²·p + r); 0 when p = r = 0."""
    if not np.isfinite(beta) or beta <= 0:
        raise InputError(f"Fbeta needs beta > 0, got {beta!r}")
    p = np.asarray(p, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    b2 = beta * beta
    return safe_div((1 + b2) * p * r, b2 * p + r)


def _det(c: Confusion) -> np.ndarray:
    tp, fp, fn, tn = _f(c)
    return tp * tn - fp * fn


def markedness_of(c: Confusion) -> np.ndarray:
    """precision + inverse precision - 1; 0 when nothing or everything is recommended."""
    tp, fp, fn, tn = _f(c)
    return safe_div(_det(c), (tp + fp) * (fn + tn))


def informedness_of(c: Confusion) -> np.ndarray:
    """recall + inverse recall - 1; 0 when the user has no relevant or no irrelevant item."""
    tp, fp, fn, tn = _f(c)
    return safe_div(_det(c), (tp + fn) * (fp + tn))


def mcc_of(c: Confusion) -> np.ndarray:
    """Matthews correlation; 0 when a marginal of the table is 0."""
    tp, fp, fn, tn = _f(c)
    den = np.sqrt((tp + fp) * (fn + tn) * (tp + fn) * (fp + tn))
    return np.clip(safe_div(_det(c), den), -1.0, 1.0)


def auc_of(c: Confusion, discordant: np.ndarray) -> np.ndarray:
    """AUC of a list with confusion ``c`` (the list's items are the recommended ones, the rest of the
    universe tied behind) and ``discordant`` (irrelevant-above-relevant pairs inside the list);
    0.5 when the user has no relevant or no irrelevant item."""
    tp, fp, fn, tn = _f(c)
    pairs = (tp + fn) * (fp + tn)
    concordant = tp * fp - discordant + tp * tn
    auc = safe_div(concordant + 0.5 * fn * tn, pairs)
    return np.where(pairs > 0, auc, 0.5)


def bktau_of(c: Confusion, discordant: np.ndarray | None = None) -> np.ndarray:
    """Boolean Kendall's tau-b; ``discordant=None`` treats the recommended items as one tied bucket
    (then it equals :func:`mcc_of`). 0 when a ranking has no untied pair."""
    tp, fp, fn, tn = _f(c)
    n = tp + fp + fn + tn
    pairs = n * (n - 1) / 2
    unranked = fn + tn
    tied_sigma = unranked * (unranked - 1) / 2
    if discordant is None:
        rec = tp + fp
        tied_sigma = tied_sigma + rec * (rec - 1) / 2
        diff = tp * tn - fp * fn
    else:
        diff = tp * fp + tp * tn - 2 * discordant - fn * fp
    den = np.sqrt(np.maximum(pairs - tied_sigma, 0.0) * (tp + fn) * (fp + tn))
    return np.clip(safe_div(diff, den), -1.0, 1.0)


def rates(c: Confusion, beta: float = 1.0) -> pd.DataFrame:
    """Every count-based measure of ``c`` as a DataFrame (one row per user, the paper's precision)."""
    import pandas as pd

    p, r = precision_of(c), recall_of(c)
    return pd.DataFrame({
        "tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn,
        "precision": p, "recall": r, "fallout": fallout_of(c), "missrate": miss_rate_of(c),
        "inverse_precision": inverse_precision_of(c), "inverse_recall": inverse_recall_of(c),
        "F1": f_beta(p, r, 1.0), f"F{beta:g}": f_beta(p, r, beta),
        "markedness": markedness_of(c), "informedness": informedness_of(c), "MCC": mcc_of(c),
    })


def roc_curve(j, k: int | None = None, *, train=None, catalog=None, universe: str = "all") -> pd.DataFrame:
    """ROC points of every user's list cut at ``k`` (None: whole list), then the tied rest.

    Long DataFrame ``user, rank, fpr, tpr, part``: rank 0 is the origin, rank r the point after the
    r-th list position (``part='list'``), and a last row (``part='rest'``, rank k + 1) the corner
    (1, 1) reached by the straight line through the unranked items. ``tpr``/``fpr`` are NaN for a
    user without relevant / irrelevant items (the axis is undefined).
    """
    import pandas as pd

    U = item_universe(j, train=train, catalog=catalog, mode=universe)
    kk = _resolve(j, k, U, check_k=k is not None)
    rel = j.rel[:, :kk]
    non = U.inside[:, :kk] & ~rel
    n_rel = np.asarray(j.n_rel, dtype=np.float64)
    n_non = (U.size - j.n_rel).astype(np.float64)
    zero = np.zeros((len(j), 1))
    tpr = np.hstack([zero, np.cumsum(rel, axis=1), n_rel[:, None]])
    fpr = np.hstack([zero, np.cumsum(non, axis=1), n_non[:, None]])
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.where(n_rel[:, None] > 0, tpr / n_rel[:, None], np.nan)
        fpr = np.where(n_non[:, None] > 0, fpr / n_non[:, None], np.nan)
    width = kk + 2
    ranks = np.arange(width)
    return pd.DataFrame({
        "user": np.repeat(j.users, width),
        "rank": np.tile(ranks, len(j)),
        "fpr": fpr.ravel(),
        "tpr": tpr.ravel(),
        "part": np.tile(np.where(ranks == width - 1, "rest", "list"), len(j)),
    })


# ----------------------------------------------------------------------------- registration
def _unit(x: np.ndarray, unit: bool) -> np.ndarray:
    return (1.0 + x) / 2.0 if unit else x


def _conf(j, k, universe, train, catalog, check_k=True) -> tuple[Confusion, int, Universe]:
    U = item_universe(j, train=train, catalog=catalog, mode=universe)
    kk = _resolve(j, k, U, check_k=check_k and k is not None)
    return _counts(j, kk, U), kk, U


_CLS = dict(cutoff="required", params={"universe": "all"}, optional=_NEEDS, family="classification",
            perfect=None)
_SIGNED = dict(_CLS, params={"universe": "all", "unit": False}, bounds=(-1.0, 1.0))


@register("fallout", aliases=("fpr", "fall-out", "false_positive_rate"), **_CLS, better="lower",
          description="Fallout@k (false positive rate): fp / (fp + tn) over the universe; 0 without irrelevant items")
def fallout(j, k, universe="all", train=None, catalog=None):
    return fallout_of(_conf(j, k, universe, train, catalog)[0])


@register("missrate", aliases=("fnr", "miss_rate", "false_negative_rate"), **_CLS, better="lower",
          description="Miss rate@k (false negative rate): fn / (tp + fn); 0 without relevant items")
def miss_rate(j, k, universe="all", train=None, catalog=None):
    return miss_rate_of(_conf(j, k, universe, train, catalog)[0])


@register("inverse_precision", aliases=("invp", "tna", "inverseprecision", "npv"), **_CLS,
          description="Inverse precision@k (true negative accuracy): tn / (fn + tn); 0 when all is recommended")
def inverse_precision(j, k, universe="all", train=None, catalog=None):
    return inverse_precision_of(_conf(j, k, universe, train, catalog)[0])


@register("inverse_recall", aliases=("invrecall", "tnr", "specificity", "inverserecall"), **_CLS,
          description="Inverse recall@k (true negative rate, specificity): tn / (fp + tn); 0 without irrelevant items")
def inverse_recall(j, k, universe="all", train=None, catalog=None):
    return inverse_recall_of(_conf(j, k, universe, train, catalog)[0])


@register("Fbeta", aliases=("f_beta", "fmeasure_beta"), cutoff="required", params={"beta": 1.0},
          family="classification", perfect=None,
          description="F-beta@k: (1+b²)·P·R / (b²·P + R) of P@k and Recall@k; 0 when both are 0")
def fbeta(j, k, beta=1.0):
    return f_beta(_ranking.precision(j, k), _ranking.recall(j, k), beta)


@register("markedness", aliases=("mk", "deltap"), **_SIGNED,
          description="Markedness@k: precision + inverse precision - 1 (Powers); 0 if nothing/everything recommended")
def markedness(j, k, universe="all", unit=False, train=None, catalog=None):
    return _unit(markedness_of(_conf(j, k, universe, train, catalog)[0]), unit)


@register("informedness", aliases=("bm", "bookmaker", "youden", "youdenj"), **_SIGNED,
          description="Informedness@k: recall + inverse recall - 1 (Powers); 0 without relevant/irrelevant items")
def informedness(j, k, universe="all", unit=False, train=None, catalog=None):
    return _unit(informedness_of(_conf(j, k, universe, train, catalog)[0]), unit)


@register("MCC", aliases=("matthews", "phi", "matthews_correlation"), **_SIGNED,
          description="Matthews correlation@k = ±sqrt(informedness · markedness); 0 if a marginal is 0")
def mcc(j, k, universe="all", unit=False, train=None, catalog=None):
    return _unit(mcc_of(_conf(j, k, universe, train, catalog)[0]), unit)


@register("AUC", aliases=("roc_auc", "auroc"), cutoff="none", params={"universe": "all"}, optional=_NEEDS,
          family="classification", perfect=1.0,
          description="Area under the ROC curve of the whole list, unranked universe items tied behind it; 0.5 if undefined")
def auc(j, k, universe="all", train=None, catalog=None):
    c, kk, U = _conf(j, None, universe, train, catalog)
    return auc_of(c, _discordant_in_list(j, kk, U))


@register("LAUC", aliases=("limited_auc", "lauc"), cutoff="required", params={"universe": "all"}, optional=_NEEDS,
          family="classification", perfect=None,
          description="Limited AUC@k (§5.2): ROC of the top k, then a straight line to (1, 1); 0.5 if undefined")
def lauc(j, k, universe="all", train=None, catalog=None):
    c, kk, U = _conf(j, k, universe, train, catalog)
    return auc_of(c, _discordant_in_list(j, kk, U))


@register("BKTau", aliases=("boolean_kendall_tau", "bkt", "kendall_boolean"), cutoff="optional",
          params={"universe": "all", "ordered": True, "unit": False}, optional=_NEEDS, family="classification",
          bounds=(-1.0, 1.0), perfect=None,
          description="Boolean Kendall's tau-b of the (top-k) list's partial ranking vs relevant/irrelevant (§4.3)")
def bktau(j, k, universe="all", ordered=True, unit=False, train=None, catalog=None):
    c, kk, U = _conf(j, k, universe, train, catalog)
    return _unit(bktau_of(c, _discordant_in_list(j, kk, U) if ordered else None), unit)


#: the metrics of this module whose per-user values can be negative (and their ``unit`` switch)
SIGNED = ("markedness", "informedness", "MCC", "BKTau")

__all__ = ["Confusion", "Universe", "UNIVERSES", "SIGNED", "item_universe", "confusion", "roc_curve", "rates",
           "precision_of", "recall_of", "fallout_of", "miss_rate_of", "inverse_precision_of",
           "inverse_recall_of", "f_beta", "markedness_of", "informedness_of", "mcc_of", "auc_of", "bktau_of"]
