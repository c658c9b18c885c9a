r"""Beyond accuracy: popularity bias and novelty of the recommended lists.

Every metric here needs the training ratings (``train=``, a DataFrame ``user, item[, rating]``):
an item's popularity :math:`\phi(i)` is its number of distinct training users
(:class:`~recmetrics.metrics.exposure.Training`), 0 for an item without a training rating. Pass
them to :func:`recmetrics.evaluate`: ``rm.evaluate(run, qrels, ["ARP@10", "APLT@10"], train=train)``.
The lists are read through the same scatter as item coverage and Gini
(:func:`~recmetrics.metrics.exposure.exposure`), so ``catalog=``, when given, must hold every
ranked item here too.

**Short head and long tail** (APLT, ACLT, PopREO, PopRSP; ``head=0.8``): the training items sorted
by popularity (descending; ties by item id ascending) are taken into the short head until they hold
``head`` of the training interactions, the item that crosses the share included; the other training
items are the long tail — Elliot's ``Popularity.get_short_head``/``get_long_tail``
(``evaluation/popularity_utils/popularity.py``, ``pop_ratio=0.8``; its tie order is a Python
set's, so at a tie on the boundary the two may put different items in the head). As there, an item
without a training rating (a cold item, ranked or relevant) is in neither group. RecBole's
``TailPercentage`` defines the tail differently (the ``tail_ratio`` least popular items, default
10 %, or the items with at most that many interactions); it is not offered here.

Per-user metrics. ARP, APLT and ACLT describe a list: for a user without one (absent from the run,
or an empty list) they are undefined (NaN), and their mean is over the users with a list, as
Elliot, RecBole and rectools average them — so every user policy and every output format gives the
same mean. EPC and EFD are accuracy-like (relevance-weighted): a user without a list scores 0, the
package's convention for coverage shortfall.

* **ARP** :math:`= \frac{1}{|L_u|}\sum_{i\in L_u}\phi(i)` (Yin et al. 2012; Elliot ``bias/arp``,
  RecBole ``AveragePopularity``, who agree).
* **APLT** :math:`= |L_u \cap \Gamma| / |L_u|` with :math:`\Gamma` the long tail (Abdollahpouri et
  al. 2017; Elliot ``bias/aplt``).
* **ACLT** :math:`= |L_u \cap \Gamma|` (Abdollahpouri et al. 2019; Elliot ``bias/aclt``), a count.
* **EPC**, **EFD** (Vargas & Castells 2011) :math:`= \sum_{r} d(r)\,\mathrm{rel}(u, i_r)\,
  \mathrm{nov}(i_r) \,/\, \sum_r d(r)` over the ranks :math:`r = 1..|L_u|` with
  EPC's :math:`\mathrm{nov}(i) = 1 - \phi(i)/|U_{train}|` and EFD's
  :math:`\mathrm{nov}(i) = -\log_2(\phi(i)/\sum_j \phi(j))` (RankSys ``PCItemNovelty`` /
  ``FDItemNovelty``; an item without a training rating gets 1, resp. the largest novelty of a
  training item, as there). The frameworks differ in the two open choices: Elliot
  (``novelty/EPC``, ``novelty/EFD``) uses binary relevance (:math:`\mathrm{rel} = [r_{u,i} \ge`
  threshold]) and the discount :math:`d(r) = 1/\log_2(r+1)`; the RankSys example
  (``MetricExample.java``) uses no relevance (:math:`\mathrm{rel} = 1`) and no discount. Defaults
  follow Elliot (``relevant=True, discount='log'``); ``EPC@10(relevant=false,discount=none)`` is
  the RankSys example's.

Per-run metrics (ranking-based equal opportunity and statistical parity, Zhu, Wang & Caverlee,
SIGIR 2020, with the head and the tail as the two groups; Elliot ``bias/pop_reo``, ``bias/pop_rsp``), with
:math:`p_g` the rate of group :math:`g` and the value :math:`\mathrm{std}(p_h, p_t) /
\mathrm{mean}(p_h, p_t) = |p_h - p_t| / (p_h + p_t)` (population standard deviation, as
``numpy.std``): 0 when both groups are treated alike.

* **PopRSP**: :math:`p_g = \sum_u |L_u \cap g| \,/\, \sum_u |g \setminus I_u|` over the
  evaluated users with a list, :math:`g` restricted to the catalogue and :math:`I_u` the user's
  training items.
* **PopREO**: :math:`p_g = \sum_u |L_u \cap g \cap R_u| \,/\, \sum_u |(g \cap R_u) \setminus
  I_u|` over the evaluated users with a list and a relevant test item (:math:`R_u`).

NaN, with a warning, when a group's denominator or both rates are 0.

Example::

    >>> import pandas as pd, recmetrics as rm
    >>> train = pd.DataFrame({"user": [1, 2, 3, 3, 4], "item": ["a", "a", "a", "b", "d"], "rating": 4.0})
    >>> test = pd.DataFrame({"user": [1, 2], "item": ["b", "c"], "rating": 5.0})
    >>> run = rm.Run.from_lists({1: ["b", "d"], 2: ["a", "c"]})  # head a, b (4 of 5); tail d; c cold
    >>> rm.evaluate(run, rm.Qrels(test), ["ARP@2", "APLT@2", "EPC@2"], train=train).per_user
          ARP@2  APLT@2     EPC@2
    user
    1       1.0     0.5  0.459860
    2       1.5     0.0  0.386853
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..data.ids import Ids
from ..errors import InputError
from .exposure import Exposure, _need_train, exposure, lookup
from .ranking import safe_div
from .registry import register

__all__ = ["short_head", "DISCOUNTS"]

DISCOUNTS = ("log", "none")
_CONTEXT = dict(needs=("train",), optional=("catalog",))


def _check_head(head: float, metric: str) -> float:
    h = float(head)
    if not (math.isfinite(h) and 0.0 < h < 1.0):
        raise InputError(f"{metric}: parameter head={head!r} must lie in (0, 1) (the share of training "
                         f"interactions the short head holds, e.g. 0.8)")
    return h


def short_head(tr, head: float = 0.8) -> np.ndarray:
    """Boolean mask over ``tr.items``: the short head holding ``head`` of the training interactions."""
    order = Ids(tr.items).order()                               # ids ascending: the tie order
    order = order[np.argsort(-tr.pop[order], kind="stable")]    # popularity descending
    cum = np.cumsum(tr.pop[order])
    m = min(int(np.searchsorted(cum, tr.n_pairs * head, side="left")) + 1, len(order))
    mask = np.zeros(len(tr.items), dtype=bool)
    mask[order[:m]] = True
    return mask


def _groups(e: Exposure, head: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(short-head mask over the training items, short-head and long-tail masks over the catalogue);
    memoised per share. A catalogue item without a training rating is in neither group."""
    memo = e.__dict__.setdefault("_head", {})
    if head not in memo:
        tp = e.train_positions()
        in_head = short_head(e.train, head)
        h = np.zeros(e.n_items, dtype=bool)
        t = np.zeros(e.n_items, dtype=bool)
        h[tp[in_head & (tp >= 0)]] = True
        t[tp[~in_head & (tp >= 0)]] = True
        memo[head] = (in_head, h, t)
    return memo[head]


def _lists(j, k, train, catalog, metric):
    _need_train(train, metric)
    e = exposure(j, train, catalog)
    top = e.top(j.cut(k))
    return e, top, top >= 0


# ------------------------------------------------------------------------------------------
# per-user
# ------------------------------------------------------------------------------------------
@register("ARP", list_only=True, aliases=("averagepopularity", "average-popularity", "avgpop"), **_CONTEXT, better=None,
          family="popularity", bounds=(0.0, math.inf), perfect=None,
          description="Average recommendation popularity: mean number of training users of the listed items")
def arp(j, k, *, train, catalog=None):
    e, top, valid = _lists(j, k, train, catalog, "ARP")
    pop = np.where(valid, e.popularity()[np.maximum(top, 0)], 0.0)
    return safe_div(pop.sum(axis=1), valid.sum(axis=1))


def _tail(j, k, head, train, catalog, metric):
    head = _check_head(head, metric)
    e, top, valid = _lists(j, k, train, catalog, metric)
    tail = valid & _groups(e, head)[2][np.maximum(top, 0)]
    return tail.sum(axis=1).astype(np.float64), valid.sum(axis=1)


@register("APLT", list_only=True, check=lambda params: _check_head(params["head"], "APLT"), aliases=("aplt",), params={"head": 0.8}, **_CONTEXT, family="popularity", bounds=(0.0, 1.0),
          perfect=None, description="Average percentage of long-tail items in the list (tail: outside the "
                                    "short head holding 80% of training interactions)")
def aplt(j, k, head=0.8, *, train, catalog=None):
    tail, n = _tail(j, k, head, train, catalog, "APLT")
    return safe_div(tail, n)


@register("ACLT", list_only=True, check=lambda params: _check_head(params["head"], "ACLT"), params={"head": 0.8}, **_CONTEXT, family="popularity", bounds=(0.0, math.inf), perfect=None,
          description="Average coverage of long-tail items: how many long-tail items the list holds")
def aclt(j, k, head=0.8, *, train, catalog=None):
    return _tail(j, k, head, train, catalog, "ACLT")[0]


def _novelty(j, k, nov_of, relevant, discount, train, catalog, metric):
    if str(discount).lower() not in DISCOUNTS:
        raise InputError(f"{metric}: discount={discount!r} must be one of {DISCOUNTS}")
    e, top, valid = _lists(j, k, train, catalog, metric)
    k = top.shape[1]
    disc = 1.0 / np.log2(np.arange(k) + 2.0) if str(discount).lower() == "log" else np.ones(k)
    nov = nov_of(e)
    norm = (valid * disc).sum(axis=1)
    if relevant:
        m = np.flatnonzero(j.rel_top(k))
        rows, cols = j.hits.rows[m], j.hits.cols[m]
        num = np.bincount(rows, weights=disc[cols] * nov[e.pos[rows, cols]], minlength=len(j))
    else:
        num = (np.where(valid, nov[np.maximum(top, 0)], 0.0) * disc).sum(axis=1)
    return safe_div(num, norm)


def _pc_novelty(e: Exposure) -> np.ndarray:
    return 1.0 - e.popularity() / e.train.n_users


def _fd_novelty(e: Exposure) -> np.ndarray:
    pop, total = e.popularity(), e.train.n_pairs
    top = -math.log2(e.train.pop.min() / total)
    with np.errstate(divide="ignore"):
        return np.where(pop > 0, -np.log2(np.maximum(pop, 1e-300) / total), top)


@register("EPC", aliases=("expected-popularity-complement",), params={"relevant": True, "discount": "log"},
          **_CONTEXT, family="novelty", bounds=(0.0, 1.0), perfect=None,
          description="Expected popularity complement (Vargas & Castells 2011): discounted 1 - share of users "
                      "who rated the item")
def epc(j, k, relevant=True, discount="log", *, train, catalog=None):
    return _novelty(j, k, _pc_novelty, relevant, discount, train, catalog, "EPC")


@register("EFD", aliases=("expected-free-discovery",), params={"relevant": True, "discount": "log"},
          **_CONTEXT, family="novelty", bounds=(0.0, math.inf), perfect=None,
          description="Expected free discovery (Vargas & Castells 2011): discounted -log2 of the item's share "
                      "of training interactions")
def efd(j, k, relevant=True, discount="log", *, train, catalog=None):
    return _novelty(j, k, _fd_novelty, relevant, discount, train, catalog, "EFD")


# ------------------------------------------------------------------------------------------
# per-run: ranking-based statistical parity / equal opportunity between head and tail
# ------------------------------------------------------------------------------------------
def _disparity(num: np.ndarray, den: np.ndarray, metric: str) -> float:
    if (den <= 0).any():
        g = "short head" if den[0] <= 0 else "long tail"
        warnings.warn(f"{metric}: the {g} has no item to count in the denominator; the value is undefined (NaN)",
                      stacklevel=4)
        return math.nan
    rate = num / den
    if rate.sum() <= 0:
        warnings.warn(f"{metric}: neither group has a recommended item to count; the value is undefined (NaN)",
                      stacklevel=4)
        return math.nan
    return float(np.std(rate) / np.mean(rate))


def _train_rows(j, e: Exposure) -> tuple[np.ndarray, np.ndarray]:
    """(evaluated row, training item code) of every distinct training pair of an evaluated user."""
    urow = lookup(j.users, e.train.users)[e.train.pair_user]
    ok = urow >= 0
    return urow[ok], e.train.pair_item[ok]


@register("PopRSP", check=lambda params: _check_head(params["head"], "PopRSP"), aliases=("pop-rsp", "pop_rsp"), params={"head": 0.8}, **_CONTEXT, scope="run", better="lower",
          family="popularity", bounds=(0.0, 1.0), perfect=None,
          description="Per-run: popularity ranking-based statistical parity, std/mean of the head's and "
                      "tail's recommendation rates")
def pop_rsp(j, k, head=0.8, *, train, catalog=None):
    head = _check_head(head, "PopRSP")
    e, top, valid = _lists(j, k, train, catalog, "PopRSP")
    _, head_cat, tail_cat = _groups(e, head)
    users = j.lengths > 0
    cells = top[users][valid[users]]
    num = np.array([head_cat[cells].sum(), tail_cat[cells].sum()], dtype=float)
    rows, items = _train_rows(j, e)
    pos = e.train_positions()[items]
    pos = pos[users[rows] & (pos >= 0)]               # the users' training items in the catalogue
    n_users = int(users.sum())
    den = np.array([n_users * head_cat.sum() - head_cat[pos].sum(),
                    n_users * tail_cat.sum() - tail_cat[pos].sum()], dtype=float)
    return _disparity(num, den, "PopRSP")


@register("PopREO", check=lambda params: _check_head(params["head"], "PopREO"), aliases=("pop-reo", "pop_reo"), params={"head": 0.8}, **_CONTEXT, scope="run", better="lower",
          family="popularity", bounds=(0.0, 1.0), perfect=None,
          description="Per-run: popularity ranking-based equal opportunity, std/mean of the head's and "
                      "tail's recall of relevant items")
def pop_reo(j, k, head=0.8, *, train, catalog=None):
    head = _check_head(head, "PopREO")
    e, top, valid = _lists(j, k, train, catalog, "PopREO")
    in_head_train, head_cat, tail_cat = _groups(e, head)
    users = (j.lengths > 0) & (j.n_rel > 0)
    m = np.flatnonzero(j.rel_top(top.shape[1]) & users[j.hits.rows])
    hit = e.pos[j.hits.rows[m], j.hits.cols[m]]
    num = np.array([head_cat[hit].sum(), tail_cat[hit].sum()], dtype=float)
    # relevant test items of those users, minus the user's training items (Elliot: - u_train)
    q = j.qrels
    rows, icodes, ratings = q.entries(j.users)
    rel = (ratings >= j.threshold) & users[rows]
    rows, ids = rows[rel], q.item_index.to_numpy()[icodes[rel]]
    tcode = lookup(e.train.items, ids)
    n_tr = len(e.train.items)
    trows, titems = _train_rows(j, e)
    known = np.sort(trows * n_tr + titems)            # sorted membership (np.isin's hashing is slower)
    key = rows * n_tr + tcode
    at = np.minimum(np.searchsorted(known, key), max(len(known) - 1, 0))
    seen = (tcode >= 0) & (known[at] == key) if len(known) else np.zeros(len(key), dtype=bool)
    is_head = np.where(tcode >= 0, in_head_train[np.maximum(tcode, 0)], False)
    is_tail = (tcode >= 0) & ~is_head
    den = np.array([(is_head & ~seen).sum(), (is_tail & ~seen).sum()], dtype=float)
    return _disparity(num, den, "PopREO")
