r"""The items' aspects: item id -> aspect labels, parsed once into a boolean membership matrix.

``aspects=`` (a ``pd.Series`` or mapping item id -> tuple of aspect labels, e.g. MovieLens genres)
becomes an :class:`AspectIndex`: ``matrix[i, c]`` says whether item ``items[i]`` shows aspect
``labels[c]`` (:math:`a_\phi \in i` in Parapar & Radlinski 2021). Items absent from the mapping,
or mapped to an empty tuple, show no aspect. Parsed indexes are cached by object identity.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ...errors import InputError
from .cache import _LRU

if TYPE_CHECKING:
    import pandas as pd

_ASPECT_CACHE = _LRU()


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

    Examples
    --------
    >>> idx = aspect_index({"a": ("x",), "b": ("x", "y"), "c": ()})
    >>> idx.labels.tolist(), idx.n_aspects
    (['x', 'y'], 2)
    >>> idx.lookup(["b", "zz"]).tolist()          # "zz" is not in the mapping: no aspect
    [[True, True], [False, False]]
    >>> idx.covered(["c", "zz"]).tolist()         # "c" is in it (with no aspect)
    [True, False]
    """

    items: pd.Index
    labels: np.ndarray
    matrix: np.ndarray

    @property
    def n_aspects(self) -> int:
        """The number of aspect labels."""
        return len(self.labels)

    def positions(self, items) -> np.ndarray:
        """Row of ``matrix`` of each of ``items`` (any shape); ``len(self.items)`` (the all-False
        row) for items absent from the mapping.

        >>> aspect_index({"a": ("x",), "b": ("y",)}).positions([["b", "a", "q"]]).tolist()
        [[1, 0, 2]]
        """
        from ...data.ids import id_kind

        arr = np.asarray(items)
        flat = arr.ravel()
        known = self.items
        ka, kb = id_kind(np.asarray(known)), id_kind(flat)
        if "empty" not in (ka, kb) and "other" not in (ka, kb) and ka != kb:
            known, flat = known.astype(str), flat.astype(str)  # one id rule: int vs str ids compared as strings
        pos = known.get_indexer(flat) if len(flat) else np.zeros(0, dtype=np.int64)
        pos = np.where(pos < 0, len(self.items), pos)
        return pos.reshape(arr.shape)

    def lookup(self, items) -> np.ndarray:
        """Membership of ``items`` (any shape): boolean array of shape ``items.shape + (c,)``."""
        return self.matrix[self.positions(items)]

    def covered(self, items) -> np.ndarray:
        """Whether each item is in the mapping (with or without aspects)."""
        return self.positions(items) < len(self.items)

    def pairs(self, items, valid=None, positions=None) -> tuple[np.ndarray, np.ndarray]:
        """Sparse membership of a (rows, k) item matrix: (flat position, aspect) of every pair.

        ``flat position`` is ``row * k + rank``; positions where ``valid`` is False are skipped.
        Pairs come ordered by flat position, then aspect. ``positions``: :meth:`positions` of
        ``items``, when the caller has them already.

        >>> idx = aspect_index({"a": ("x",), "b": ("x", "y")})
        >>> flat, aspect = idx.pairs([["b", "a"], ["a", "q"]])
        >>> flat.tolist(), aspect.tolist()
        ([0, 0, 1, 2], [0, 1, 0, 0])
        """
        pos = (self.positions(items) if positions is None else np.asarray(positions)).ravel()
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
    between calls). An :class:`AspectIndex` is returned unchanged. Raises
    :class:`~recmetrics.errors.InputError` for a missing mapping, a duplicated item or a value
    that is not a collection of labels.

    Examples
    --------
    >>> idx = aspect_index({"a": "x", "b": None, "c": ["y", "x"]})   # str = one label, None = none
    >>> idx.labels.tolist()
    ['x', 'y']
    >>> idx.matrix.tolist()                       # rows a, b, c and the row of unknown items
    [[True, False], [False, False], [True, True], [False, False]]
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
