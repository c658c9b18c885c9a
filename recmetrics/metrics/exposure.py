r"""Beyond accuracy: how a run spreads its recommendations over the catalogue.

**Per-run metrics** (one value for the whole run: no per-user column, no user aggregation;
``rm.metrics.table()`` says ``scope == "run"``): item coverage, Gini index and Shannon entropy of
the recommendation counts, and user coverage. ARP, APLT, ACLT, PopREO, PopRSP, EPC and EFD
(:mod:`recmetrics.metrics.popularity`) read the same arrays.

Notation: the evaluated users :math:`U` (``evaluate(users=...)``), the top-:math:`k` list
:math:`L_u` of user :math:`u` (shorter when the list is; empty for a user the run has no list
for), the catalogue :math:`I`, and :math:`c_i = |\{u \in U : i \in L_u\}|` how often item
:math:`i` is recommended.

**Catalogue.** ``catalog=`` (every item id that can be recommended) when given; a ranked item
outside it is an error. Otherwise the items of ``train=`` (the training ratings) plus the items the
run ranks: Elliot's catalogue is the training items (``dataset.py``: ``num_items`` over
``train_dict``), RankSys' examples use every item with a training or test rating
(``MetricExample.java``: ``totalData.numItemsWithPreferences()``) and RecBole every item id of the
data set plus its padding id (``data.num_items``), so coverage and Gini differ between them by the
catalogue alone.

**One scatter.** The evaluated lists are located in the catalogue once per judged run and
context (:func:`exposure`: the run's item vocabulary is looked up, never its cells one by one);
the counts :math:`c_i` at each cut-off are one ``bincount`` of those positions, shared by item
coverage, Gini, entropy and (:mod:`~recmetrics.metrics.popularity`) ARP and the long-tail metrics.

Example::

    >>> import pandas as pd, recmetrics as rm
    >>> train = pd.DataFrame({"user": [1, 1, 2, 3], "item": ["a", "b", "a", "c"], "rating": 5.0})
    >>> test = pd.DataFrame({"user": [1, 2], "item": ["c", "b"], "rating": 5.0})
    >>> run = rm.Run.from_lists({1: ["c", "d"], 2: ["c", "b"]})
    >>> res = rm.evaluate(run, rm.Qrels(test), ["ItemCoverage@2", "Gini@2", "Entropy@2"], train=train)
    >>> res.run_values    # catalogue a, b, c (train) + d (ranked); counts a 0, b 1, c 2, d 1
    {'ItemCoverage@2': 0.75, 'Gini@2': 0.5, 'Entropy@2': 1.5}
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..data.ids import Ids, id_kind
from ..errors import InputError, require_columns, show
from .registry import register

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Training", "training", "Exposure", "exposure", "lookup", "item_counts"]


# ------------------------------------------------------------------------------------------
# ids, training data, the shared scatter
# ------------------------------------------------------------------------------------------
def _aligned(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One id rule for both sides (as :func:`recmetrics.judged.common_ids`): when the id types
    differ (integers on one side, strings on the other) both are compared as strings."""
    ka, kb = id_kind(a), id_kind(b)
    if "empty" not in (ka, kb) and ka != kb:
        if any(np.issubdtype(x.dtype, np.floating) for x in (a, b)):  # "10.0" would never equal 10 as a string
            raise InputError(f"item/user ids of the run and of the training data have different types ({a.dtype} vs "
                             f"{b.dtype}): float ids cannot be matched as strings; use int or str ids on both sides")
        return a.astype(str), b.astype(str)
    return a, b


def lookup(ids, targets) -> np.ndarray:
    """Position of each of ``targets`` in ``ids`` (-1 when absent), ids compared by one rule."""
    a, b = _aligned(np.asarray(ids), np.asarray(targets))
    if not len(a) or not len(b):
        return np.full(len(b), -1, dtype=np.int64)
    return np.asarray(Ids(a).get_indexer(b), dtype=np.int64)


@dataclass(frozen=True)
class Training:
    """The training interactions as distinct (user, item) pairs, and each item's popularity.

    ``pop[i]`` is the number of distinct training users of ``items[i]`` (Elliot's
    ``Popularity.get_pop_items``: the binarised training matrix summed over users; RankSys'
    ``PreferenceData.numUsers(i)``; RecBole's ``item_counter`` counts interactions, the same number
    when no (user, item) pair repeats). Every training interaction counts, whatever its rating."""

    users: np.ndarray        # distinct training user ids
    items: np.ndarray        # distinct training item ids
    pair_user: np.ndarray    # (n_pairs,) code into users
    pair_item: np.ndarray    # (n_pairs,) code into items
    pop: np.ndarray          # (n_items,) distinct users per item

    @property
    def n_users(self) -> int:
        return len(self.users)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_item)


def training(train) -> Training:
    """Parse ``train`` (a DataFrame with ``user`` and ``item`` columns, e.g. the training ratings)."""
    import pandas as pd

    if not isinstance(train, pd.DataFrame):
        raise InputError(f"train must be the training ratings as a DataFrame (user, item[, rating]), "
                         f"got {type(train).__name__}")
    require_columns(train, ("user", "item"), "train")
    if not len(train):
        raise InputError("train is empty: the popularity metrics need the training ratings (user, item[, rating])")
    for col in ("user", "item"):
        null = train[col].isna().to_numpy()
        if null.any():
            raise InputError(f"train: row {int(np.flatnonzero(null)[0])} has no {col} id (expected an id in every row)")
    ucodes, users = pd.factorize(train["user"].to_numpy())
    icodes, items = pd.factorize(train["item"].to_numpy())
    pairs = np.sort(ucodes.astype(np.int64) * len(items) + icodes)  # sort + diff: numpy's hash unique is slower
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]]
    pair_user, pair_item = pairs // len(items), pairs % len(items)
    pop = np.bincount(pair_item, minlength=len(items)).astype(np.float64)
    return Training(np.asarray(users), np.asarray(items), pair_user, pair_item, pop)


@dataclass
class Exposure:
    """The evaluated users' lists located in the catalogue.

    ``pos[u, r]`` is the catalogue position of the item at rank ``r + 1`` of user ``u``'s list
    (-1 past the end of the list, or for a user the run has no list for)."""

    catalogue: np.ndarray          # item ids
    pos: np.ndarray                # (n_users, depth) int64
    given: bool                    # the catalogue came from catalog=
    train: Training | None
    _counts: dict = field(default_factory=dict, repr=False)

    @property
    def n_items(self) -> int:
        return len(self.catalogue)

    def top(self, k: int) -> np.ndarray:
        """Positions of the top ``k`` (-1 where there is no item)."""
        return self.pos[:, :k]

    def counts(self, k: int) -> np.ndarray:
        """:math:`c_i` at cut-off ``k``: how many evaluated lists hold each catalogue item in their top k."""
        if k not in self._counts:
            top = self.top(k)
            self._counts[k] = np.bincount(top[top >= 0], minlength=self.n_items).astype(np.float64)
        return self._counts[k]

    def train_positions(self) -> np.ndarray:
        """Catalogue position of each training item (-1 outside a given catalogue)."""
        memo = self.__dict__.setdefault("_train_pos", [])
        if not memo:
            memo.append(lookup(self.catalogue, self.train.items))
        return memo[0]

    def popularity(self) -> np.ndarray:
        """Training popularity of each catalogue item (0 for an item without a training rating)."""
        memo = self.__dict__.setdefault("_pop", [])
        if not memo:
            pop = np.zeros(self.n_items)
            tp = self.train_positions()
            pop[tp[tp >= 0]] = self.train.pop[tp >= 0]
            memo.append(pop)
        return memo[0]


def _need_train(train, metric: str) -> None:
    if train is None:
        raise InputError(f"metric {metric} needs train= (the training ratings user, item[, rating]: item "
                         f"popularity comes from them)")


def exposure(j, train=None, catalog=None) -> Exposure:
    """The shared scatter of a judged run (cached on ``j`` per ``train``/``catalog`` object)."""
    cache = j.__dict__.setdefault("_exposure_cache", {})
    key = (id(train), id(catalog))
    hit = cache.get(key)
    if hit is not None and hit[0] is train and hit[1] is catalog:
        return hit[2]
    run = j.run
    if run is None:
        raise InputError("this Judged stacks several runs (judged.stack): the coverage and popularity metrics "
                         "need one run's item ids; judge each run apart")
    tr = training(train) if train is not None else None
    codes, vocab = run.codes
    used = np.zeros(len(vocab), dtype=bool)
    used[codes[codes >= 0]] = True
    if catalog is not None:
        import pandas as pd

        cat = np.asarray(pd.unique(np.asarray(catalog).ravel()))
        if not len(cat):
            raise InputError("catalog is empty: pass the ids of every item that can be recommended")
        vpos = lookup(cat, vocab)
        outside = used & (vpos < 0)
        if outside.any():
            v = int(np.flatnonzero(outside)[0])
            row = int(np.argwhere(codes == v)[0][0])
            raise InputError(f"item {show(vocab[v])} ranked for user {show(run.users[row])} in run {run.name!r} "
                             f"is not in the catalog ({len(cat)} items, {int(outside.sum())} ranked item(s) "
                             f"outside it); pass a catalog= holding every item that can be recommended")
    else:
        ranked = vocab[used]
        if tr is not None:
            base, ranked = _aligned(tr.items, ranked)
            cat = np.concatenate([base, ranked[lookup(base, ranked) < 0]])
        else:  # no catalogue size needed (entropy): the ranked items
            cat = ranked
        vpos = lookup(cat, vocab)
    pos = np.full((len(j), j.depth), -1, dtype=np.int64)
    ok = np.flatnonzero(j.in_run)
    take = min(j.depth, run.depth)
    if take and len(ok):
        sub = codes[j.run_rows[ok], :take]
        sub = np.where(np.arange(take)[None, :] < j.lengths[ok][:, None], sub, -1)
        pos[ok, :take] = np.where(sub >= 0, vpos[np.maximum(sub, 0)], -1)
    out = Exposure(cat, pos, catalog is not None, tr)
    cache[key] = (train, catalog, out)
    return out


def item_counts(j, k: int | None = None, *, train=None, catalog=None) -> "pd.Series":
    """How often each catalogue item is in the evaluated users' top-``k`` lists (:math:`c_i`), as a
    Series indexed by item id (the input of Gini, entropy and item coverage)."""
    import pandas as pd

    e = exposure(j, train, catalog)
    return pd.Series(e.counts(j.cut(k)), index=pd.Index(e.catalogue, name="item"), name="count")


def _empty(j, metric: str) -> bool:
    if (j.lengths > 0).any():
        return False
    warnings.warn(f"{metric}: none of the {len(j)} evaluated users has a list in run "
                  f"{j.metadata.get('run')!r}; the value is undefined (NaN)", stacklevel=4)
    return True


# ------------------------------------------------------------------------------------------
# per-run metrics
# ------------------------------------------------------------------------------------------
@register("ItemCoverage", aliases=("item-coverage", "item_coverage", "coverage", "catalog-coverage"),
          optional=("train", "catalog"), needs_any=("train", "catalog"), scope="run", family="coverage",
          bounds=(0.0, 1.0), perfect=None,
          description="Per-run: share of the catalogue recommended to at least one user in the top k")
def item_coverage(j, k, *, train=None, catalog=None):
    r"""Item (catalogue) coverage: :math:`|\bigcup_{u\in U} L_u| \,/\, |I|`.

    RecBole's ``ItemCoverage`` (``recbole/evaluator/metrics.py``; its :math:`|I|` includes the
    padding id) and RankSys' aggregate diversity (``AggregateDiversityMetric``, a count) and
    Elliot's ``ItemCoverage`` (``coverage/item_coverage``, a count, no division) agree on the
    numerator; the count is ``value * |I|``. Needs ``train=`` or ``catalog=`` (the catalogue, see
    the module docstring)."""
    e = exposure(j, train, catalog)
    return float((e.counts(j.cut(k)) > 0).sum() / e.n_items)


@register("UserCoverage", aliases=("user-coverage", "user_coverage"), scope="run", family="coverage",
          bounds=(0.0, 1.0), perfect=None,
          description="Per-run: share of the evaluated users given a list (@k: of at least k items)")
def user_coverage(j, k):
    r"""User coverage: :math:`|\{u \in U : |L_u| \ge \max(1, k)\}| / |U|`.

    Elliot's ``UserCoverage`` (``coverage/user_coverage``) counts the users with a non-empty list
    and ``UserCoverageAtN`` those with at least ``k`` items; both are counts, ours the share of the
    evaluated users (``evaluate(users=...)``, by default the test users with a relevant item), so a
    user the run has no list for lowers it."""
    need = 1 if k is None else j.cut(k)
    return float(np.mean(j.lengths >= need))


@register("Gini", aliases=("gini-index", "giniindex", "gini_index"), optional=("train", "catalog"),
          needs_any=("train", "catalog"), scope="run", family="exposure", bounds=(0.0, 1.0), perfect=None,
          better="lower", description="Per-run: Gini index of how often each catalogue item is recommended (0 equal, 1 one item)")
def gini_index(j, k, *, train=None, catalog=None):
    r"""Concentration of exposure: the Gini index of the counts :math:`c_i` over the catalogue,
    never-recommended items included,

    .. math:: G = \frac{1}{|I|-1}\sum_{m=1}^{|I|} (2m - |I| - 1)\, \frac{c_{(m)}}{\sum_i c_i}

    with :math:`c_{(m)}` sorted ascending (:func:`recmetrics.data.stats.gini`, the formula of
    the data sets' Table 2): 0 when every item is recommended equally often, 1 when one item takes
    every slot. The frameworks disagree on direction and normaliser: RankSys (``GiniIndex.java``) and
    Elliot (``diversity/gini_index``, a port of it) divide by :math:`|I|-1` too but report
    :math:`1 - G` (a diversity: 1 = equal); RecBole (``GiniIndex``) reports :math:`G` but divides
    by :math:`|I|` (its maximum is :math:`(|I|-1)/|I|`; ours times :math:`(|I|-1)/|I|`). NaN,
    with a warning, when no evaluated user has a list."""
    from ..data.stats import gini

    e = exposure(j, train, catalog)
    counts = e.counts(j.cut(k))
    if _empty(j, "Gini"):
        return math.nan
    return float(gini(counts))


@register("Entropy", aliases=("shannon-entropy", "shannonentropy", "sentropy", "shannon_entropy"),
          optional=("train", "catalog"), scope="run", family="exposure", bounds=(0.0, math.inf), perfect=None,
          description="Per-run: Shannon entropy (bits) of the share of recommendations each item gets")
def shannon_entropy(j, k, *, train=None, catalog=None):
    r"""Shannon entropy of exposure, in bits: :math:`H = -\sum_i p_i \log_2 p_i` with
    :math:`p_i = c_i / \sum_{i'} c_{i'}` (each recommendation slot counts once).

    0 when every list is the same single item; :math:`\log_2 |I|` at most (divide by it for a
    value in [0, 1]). RankSys' ``Entropy`` (``EIUFD`` without discount or relevance) and Elliot's
    ``SEntropy`` give every *user* weight 1 (an item's share sums :math:`1/|L_u|` over the lists
    holding it) and use :math:`-\log_2 (c_i / \sum c)`: equal to ours when every list has the same
    length. RecBole's ``ShannonEntropy`` uses the natural log and divides the sum by the number of
    distinct recommended items (its value is ours :math:`\cdot \ln 2 / |\bigcup_u L_u|`). NaN,
    with a warning, when no evaluated user has a list. Needs no context (``train=``/``catalog=``
    are only read to share the other metrics' scatter)."""
    e = exposure(j, train, catalog)
    counts = e.counts(j.cut(k))
    if _empty(j, "Entropy"):
        return math.nan
    p = counts[counts > 0] / counts.sum()
    return float(max(0.0, -(p * np.log2(p)).sum()))
