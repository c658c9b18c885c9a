"""Index idioms the vectorised code shares: runs of positions, places within runs, stable integer sorts."""
from __future__ import annotations

import numpy as np


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])`` without a loop (int64)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.repeat(np.asarray(starts, dtype=np.int64) - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets


def places_in_runs(sorted_keys: np.ndarray) -> np.ndarray:
    """For each element of a sorted array, its place (0, 1, ...) among the elements equal to it."""
    keys = np.asarray(sorted_keys)
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of integer keys: a stable sort has one result, which numpy
    finds by radix sort when the keys fit 16 bits (read as int16 then), else by its merge sort."""
    keys = np.asarray(keys)
    small = len(keys) and np.iinfo(np.int16).min <= keys.min() and keys.max() <= np.iinfo(np.int16).max
    return np.argsort(keys.astype(np.int16) if small else keys, kind="stable")
