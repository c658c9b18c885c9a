"""`Ids`: a vocabulary of user or item ids with the lookups judging needs, without pandas.

The command line reads TREC files (string ids) and must not pay pandas' import (a third of a
second); a sorted numpy copy answers ``get_indexer`` by binary search. Ids that are all strings or
all integers take that path; anything else (mixed types, floats, tuples) is handed to
``pandas.Index``, so the answer is always pandas' answer.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np


def id_kind(values: np.ndarray) -> str:
    """``"int"``, ``"str"``, ``"other"`` or ``"empty"`` for an id array (object arrays are inspected).
    Strings holding a NUL character are ``"other"``: numpy's fixed-width strings drop trailing NULs,
    so ``"a\\0"`` would equal ``"a"`` there."""
    if values.dtype.kind in "iu":
        return "int"
    if values.dtype.kind == "U":
        return "str"
    if values.dtype.kind == "O":
        items = values.tolist()
        types = set(map(type, items))
        if types and all(issubclass(t, str) for t in types):
            return "other" if "\0" in "".join(items) else "str"  # one scan in C, not one per id
        if types and all(issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_)) for t in types):
            return "int"
    return "other" if len(values) else "empty"


def _plain(values: np.ndarray, kind: str) -> np.ndarray:
    return values.astype(np.int64) if kind == "int" else values.astype(str)


class Ids:
    """Ids in a fixed order (position = code), with ``get_indexer`` (position or -1) as pandas has it."""

    def __init__(self, values, *, is_sorted: bool = False):
        """``is_sorted``: the caller guarantees ``values`` are unique and in :meth:`order` already."""
        self.values = np.asarray(values)
        if self.values.ndim != 1:
            raise ValueError("ids must be one-dimensional")
        if is_sorted and self.kind in ("int", "str"):
            self.__dict__["_sorted"] = (_plain(self.values, self.kind), np.arange(len(self.values)))

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key):
        return self.values[key]

    def __iter__(self):
        return iter(self.values.tolist())

    def __repr__(self) -> str:
        return f"Ids({self.values.tolist()[:5]}{'...' if len(self) > 5 else ''}, n={len(self)})"

    def to_numpy(self) -> np.ndarray:
        return self.values

    def tolist(self) -> list:
        return self.values.tolist()

    @cached_property
    def kind(self) -> str:
        return id_kind(self.values)

    @cached_property
    def _sorted(self):
        """(sorted plain values, their positions) for binary search."""
        plain = _plain(self.values, self.kind)
        order = np.argsort(plain, kind="stable")
        return plain[order], order

    def order(self) -> np.ndarray:
        """Positions that sort the ids (by value for int or str ids; pandas' order otherwise)."""
        if self.kind in ("int", "str"):
            return self._sorted[1]
        return np.argsort(self.values, kind="stable")

    @cached_property
    def _pandas(self):
        import pandas as pd

        return pd.Index(self.values)

    def get_indexer(self, targets) -> np.ndarray:
        """Position of each target in the ids (the first one if repeated), -1 where absent."""
        targets = np.asarray(targets)
        if targets.ndim != 1:
            targets = targets.ravel()
        tkind = id_kind(targets)
        if tkind == "empty" or not len(self):
            return np.full(len(targets), -1, dtype=np.int64)
        if self.kind not in ("int", "str") or tkind not in ("int", "str"):
            return self._pandas.get_indexer(targets).astype(np.int64)
        if tkind != self.kind:  # 7 never equals "7" (pandas agrees)
            return np.full(len(targets), -1, dtype=np.int64)
        keys, order = self._sorted
        plain = _plain(targets, tkind)
        pos = np.searchsorted(keys, plain).clip(max=len(keys) - 1)
        return np.where(keys[pos] == plain, order[pos], -1).astype(np.int64)

    def duplicated(self) -> np.ndarray:
        """True for every repetition of an earlier id (pandas' ``keep="first"``)."""
        if self.kind not in ("int", "str"):
            return np.asarray(self._pandas.duplicated())
        keys, order = self._sorted
        out = np.zeros(len(self), dtype=bool)
        out[order[1:][keys[1:] == keys[:-1]]] = True  # stable order: the first stays unmarked
        return out

    @property
    def has_duplicates(self) -> bool:
        return bool(self.duplicated().any())
