r"""Systems made from the ideal ordering: the perturbation families of Parapar & Radlinski (RecSys 2021).

Level 0 of every family is the ideal ordering (:mod:`.ideal`); larger levels are further from it
(Sec. 5.2, Exps. 1-2):

- ``"swap"`` (Sec. 5.2.1): level s swaps ranks (1, L), (2, L-1), ..., (s, L-s+1) of the ideal
  list of length L (the list cut at ``size``); levels beyond L/2 repeat the fully reversed list;
- ``"redundancy"`` (Sec. 5.2.2): at the first rank p where the ideal changes aspect, the next
  s ranks receive the best remaining items of the aspect of rank p-1 (each swapped in from
  further down the full ordering); users whose ordering never changes aspect stay ideal;
- ``"aspect"`` (Sec. 5.2.3): the first item is replaced by the best item of the user's
  (s+1)-th most liked aspect among those the first item does not show (not showing the most
  liked aspect), swapped in from further down; users with fewer such aspects keep their deepest
  available level.

Exp. 3 (Sec. 5.4) ranks random systems instead: :func:`shuffled_runs` shuffles the ideal lists.
"""
from __future__ import annotations

import numpy as np

from ...data.run import Run
from ...errors import InputError, unknown_name
from ._inputs import _rng
from .ideal import IdealOrdering

FAMILIES = ("swap", "redundancy", "aspect")

__all__ = ["FAMILIES", "perturb", "perturbed_runs", "shuffled_runs", "shuffled_order"]


def _swap_rows(a: np.ndarray, rows: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
    tmp = a[rows, i].copy()
    a[rows, i] = a[rows, j]
    a[rows, j] = tmp


def _perturb_swap(ideal: IdealOrdering, level: int, size: int) -> np.ndarray:
    m = min(size, ideal.items.shape[1])
    L = np.minimum(ideal.lengths, m)
    s = np.minimum(level, L // 2)[:, None]
    j = np.arange(m)[None, :]
    src = np.where((j < s) | ((j >= L[:, None] - s) & (j < L[:, None])), L[:, None] - 1 - j, j)
    return np.take_along_axis(ideal.items[:, :m], src, axis=1)


def _redundancy_levels(ideal: IdealOrdering, levels: int):
    """Yield the item matrices of the redundancy family at levels 0, 1, ..., ``levels`` (full ordering).

    Level s + 1 is level s with one more redundant insertion, so the levels are built in one pass
    (each yielded matrix is a copy; the work per level is that of one insertion)."""
    items = ideal.items.copy()
    yield items.copy()
    if levels <= 0:
        return
    member = ideal.member.copy()
    key = ideal.key.copy()
    n, m = items.shape
    a = ideal.aspect
    change = (a[:, 1:] != a[:, :-1]) & (a[:, :-1] >= 0) & (np.arange(1, m)[None, :] < ideal.lengths[:, None])
    has = change.any(axis=1)
    p = np.where(has, change.argmax(axis=1) + 1, m)
    cur = np.where(has, a[np.arange(n), np.maximum(p - 1, 0)], -1)
    rows = np.flatnonzero(has)
    positions = np.arange(m)[None, :]
    for t in range(levels):
        if len(rows):
            q = p[rows] + t
            live = q < ideal.lengths[rows]
            rows_t, q = rows[live], q[live]
        if len(rows) == 0 or len(rows_t) == 0:   # nothing left to insert: the deeper levels saturate
            rows = rows[:0]
            yield items.copy()
            continue
        show = member[rows_t, :, cur[rows_t]] & (positions >= q[:, None])
        found = show.any(axis=1)
        k = np.where(show, key[rows_t], np.iinfo(np.int64).max).argmin(axis=1)
        rows_t, q, k = rows_t[found], q[found], k[found]
        for arr in (items, key):
            _swap_rows(arr, rows_t, q, k)
        tmp = member[rows_t, q].copy()
        member[rows_t, q] = member[rows_t, k]
        member[rows_t, k] = tmp
        rows = rows_t      # users without a remaining item of the aspect stop here (saturate)
        yield items.copy()


def _perturb_redundancy(ideal: IdealOrdering, level: int) -> np.ndarray:
    for items in _redundancy_levels(ideal, level):
        pass
    return items


def _perturb_aspect(ideal: IdealOrdering, level: int) -> np.ndarray:
    items = ideal.items.copy()
    if level <= 0:
        return items
    n, m = items.shape
    c = len(ideal.labels)
    if c == 0:
        return items
    w = ideal.weights
    most = w.argmax(axis=1)
    first = ideal.member[:, 0, :]                                   # aspects of the first item
    pos = np.arange(m)[None, :]
    # candidate items: further down, not showing the most liked aspect
    cand = (pos >= 1) & (pos < ideal.lengths[:, None]) & ~ideal.member[np.arange(n), :, most]
    has_item = (ideal.member & cand[..., None]).any(axis=1)         # (n, c)
    eligible = has_item & ~first & (w > 0)
    eligible[np.arange(n), most] = False
    order = np.argsort(-np.where(eligible, w, -np.inf), axis=1, kind="stable")
    n_el = eligible.sum(axis=1)
    rows = np.flatnonzero(n_el > 0)
    s = np.minimum(level, n_el[rows]) - 1
    target = order[rows, s]
    show = ideal.member[rows, :, target] & cand[rows]
    k = np.where(show, ideal.key[rows], np.iinfo(np.int64).max).argmin(axis=1)
    _swap_rows(items, rows, np.zeros(len(rows), dtype=np.int64), k)
    return items


def perturb(ideal: IdealOrdering, family: str, level: int, size: int | None = None) -> np.ndarray:
    """The (n_users, size) item matrix of ``family`` at ``level`` (0 = the ideal, cut at ``size``;
    None = the whole ordering).

    family: ``"swap"`` (Sec. 5.2.1: level s swaps ranks i and L-i+1 for i = 1..s, L the list
    length after the cut), ``"redundancy"`` (Sec. 5.2.2) or ``"aspect"`` (Sec. 5.2.3), see the
    module docstring (Parapar & Radlinski, RecSys 2021). Open choices, as read here: a level past
    what a user's list allows saturates (swaps beyond L/2 repeat the reversed list; redundancy and
    aspect swaps stop when the aspect has no further item or the user no further aspect); the
    redundancy and aspect families perturb the whole ordering, then cut it, so items from below
    the cut can move into it. Cells past a user's list length are padding (a Run ignores them).
    An unknown family raises ``UnknownNameError``; a negative level or a size <= 0 ``InputError``.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.meta.perturbations import ideal_ordering
    >>> test = pd.DataFrame({"user": "u", "item": ["a1", "a2", "b1", "c1", "ab", "n0"],
    ...                      "rating": [5.0, 4.0, 4.0, 3.0, 5.0, 4.0]})
    >>> aspects = {"a1": ("A",), "a2": ("A",), "b1": ("B",), "c1": ("C",), "ab": ("A", "B"), "n0": ()}
    >>> ideal = ideal_ordering(test, aspects)
    >>> ideal.items[0].tolist()
    ['ab', 'c1', 'a1', 'b1', 'a2', 'n0']
    >>> perturb(ideal, "swap", 2)[0].tolist()             # ranks (1, 6) and (2, 5) swapped
    ['n0', 'a2', 'a1', 'b1', 'c1', 'ab']
    >>> perturb(ideal, "redundancy", 2)[0].tolist()       # two more A items where the ideal turns to C
    ['ab', 'a1', 'a2', 'b1', 'c1', 'n0']
    >>> perturb(ideal, "aspect", 1)[0].tolist()           # C, the most liked aspect ab lacks, first
    ['c1', 'ab', 'a1', 'b1', 'a2', 'n0']
    >>> perturb(ideal, "swap", 1, size=3)[0].tolist()
    ['a1', 'c1', 'ab']
    """
    if family not in FAMILIES:
        raise unknown_name("perturbation family", family, FAMILIES)
    level = int(level)
    if level < 0:
        raise InputError(f"perturbation level must be >= 0, got {level}")
    size = int(ideal.items.shape[1] if size is None else size)
    if size <= 0:
        raise InputError(f"size must be a positive integer, got {size}")
    if family == "swap":
        return _perturb_swap(ideal, level, size)
    full = _perturb_redundancy(ideal, level) if family == "redundancy" else _perturb_aspect(ideal, level)
    return full[:, :size]


def perturbed_runs(ideal: IdealOrdering, family: str, levels: int, size: int | None = None) -> list[Run]:
    """Runs for levels 0 (the ideal) .. ``levels`` of ``family``, lists cut at ``size`` (None: whole).

    One :class:`~recmetrics.data.run.Run` per level, named ``"{family}-{level}"``, each list
    :func:`perturb`'s row of its user (the simulated systems of Exps. 1-2, Parapar & Radlinski,
    RecSys 2021, Sec. 5.2).

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.meta.perturbations import ideal_ordering
    >>> test = pd.DataFrame({"user": "u", "item": ["a", "b", "c", "d"], "rating": [5.0, 4.0, 3.0, 2.0]})
    >>> runs = perturbed_runs(ideal_ordering(test, {"a": ("x",), "b": ("x",), "c": ("x",), "d": ("x",)}),
    ...                       "swap", 2)
    >>> [(r.name, r.items[0].tolist()) for r in runs]
    [('swap-0', ['a', 'b', 'c', 'd']), ('swap-1', ['d', 'b', 'c', 'a']), ('swap-2', ['d', 'c', 'b', 'a'])]
    """
    levels = int(levels)
    if family == "redundancy" and levels >= 0:   # each level is the previous one plus one insertion
        size = int(ideal.items.shape[1] if size is None else size)
        perturb(ideal, family, 0, size)           # the argument checks of perturb
        return [ideal.to_run(size, name=f"{family}-{lvl}", items=items[:, :size])
                for lvl, items in enumerate(_redundancy_levels(ideal, levels))]
    return [ideal.to_run(size, name=f"{family}-{lvl}", items=perturb(ideal, family, lvl, size))
            for lvl in range(levels + 1)]


def shuffled_runs(ideal: IdealOrdering, n_systems: int, size: int = 100, seed=0, *,
                  shared: bool = True) -> np.ndarray:
    """(n_systems, n_users, size) item matrices: random shuffles of the users' ideal lists.

    ``shared=True`` (default): a system is one random permutation of the ranks 1..size applied to
    every user's ideal list (a user with a shorter list keeps the permutation's relative order of
    its ranks), so systems differ in quality consistently across users. ``shared=False``: every
    user's list is shuffled independently (all systems then have the same expected quality).
    Sec. 5.4 of Parapar & Radlinski (RecSys 2021) says only "50 systems produced by random
    shuffles of the ideal ranking"; ``shared=True`` is this package's reading. ``size`` (default
    100) is capped at the longest ordering; cells past a user's list length are padding (they stay
    after the list). ``seed``: an int or a ``numpy.random.Generator``.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.meta.perturbations import ideal_ordering
    >>> test = pd.DataFrame({"user": [1, 1, 1, 2, 2, 2], "item": ["a", "b", "c", "a", "b", "c"],
    ...                      "rating": [5.0, 4.0, 3.0, 3.0, 4.0, 5.0]})
    >>> ideal = ideal_ordering(test, {"a": ("x",), "b": ("x",), "c": ("x",)})
    >>> ideal.items.tolist()
    [['a', 'b', 'c'], ['c', 'b', 'a']]
    >>> systems = shuffled_runs(ideal, 2, size=3, seed=0)
    >>> systems.shape                                     # (n_systems, n_users, size)
    (2, 2, 3)
    >>> systems[0].tolist()                     # one permutation of the ranks (here 3, 2, 1) for both users
    [['c', 'b', 'a'], ['a', 'b', 'c']]
    """
    order = shuffled_order(ideal, n_systems, size, seed, shared=shared)
    return np.take_along_axis(np.broadcast_to(ideal.items[:, :order.shape[2]], order.shape), order, axis=2)


def shuffled_order(ideal: IdealOrdering, n_systems: int, size: int = 100, seed=0, *,
                   shared: bool = True) -> np.ndarray:
    """The shuffles of :func:`shuffled_runs` as positions in the ideal lists: ``(n_systems, n_users,
    size)``, ``shuffled_runs(...)[s, u, j] == ideal.items[u, order[s, u, j]]`` (the same draws of
    ``seed``), so anything known per position of the ideal lists (their judgments, their aspects)
    is carried to the shuffled lists by one gather.

    >>> import pandas as pd
    >>> from recmetrics.meta.perturbations import ideal_ordering
    >>> test = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": ["a", "b", "c", "a", "b"],
    ...                      "rating": [5.0, 4.0, 3.0, 3.0, 4.0]})
    >>> shuffled_order(ideal_ordering(test, {"a": ("x",), "b": ("x",), "c": ("x",)}), 1, size=3, seed=0)[0].tolist()
    [[2, 1, 0], [1, 0, 2]]
    """
    rng = _rng(seed)
    m = min(size, ideal.items.shape[1])
    L = np.minimum(ideal.lengths, m)
    if shared:
        keys = np.broadcast_to(rng.random((n_systems, 1, m)), (n_systems, len(ideal), m))
    else:
        keys = rng.random((n_systems, len(ideal), m))
    keys = np.where(np.arange(m)[None, None, :] < L[None, :, None], keys, 2.0)
    return np.argsort(keys, axis=2, kind="stable")
