"""Gains and ideal rankings shared by the ranking and trec_eval kernels (below both).

trec_eval's ``rel_level=gain`` maps (``-m ndcg.1=3.5,2=9``), the gain of each judged label, the ideal
ranking of every evaluated user built from *all* its judgments (never from the truncated list),
segment-wise cumulative sums added from each user's top (trec_eval's order of addition) and the
zero-denominator division every metric uses.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError


def safe_div(num, den) -> np.ndarray:
    """``num / den`` elementwise, 0 where ``den`` is not positive (the metrics' zero-denominator value)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def seg_cumsum(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of ``x`` within contiguous segments, ``pos`` being each element's
    0-based position in its segment. Each segment is summed from zero, left to right (a global
    cumsum minus the segment's start would carry rounding from every earlier segment)."""
    out = np.array(x, dtype=np.float64, copy=True)
    if len(out) == 0:
        return out
    counts = np.bincount(pos)
    order = np.argsort(pos, kind="stable")
    ends = np.cumsum(counts)
    for p in range(1, len(counts)):
        sel = order[ends[p - 1]:ends[p]]
        out[sel] += out[sel - 1]  # the element before is the same segment's position p - 1
    return out


def _memo(j, key, make):
    memo = j.__dict__.setdefault("_trec_memo", {})
    if key not in memo:
        memo[key] = make()
    return memo[key]


def hit_pos(j) -> np.ndarray:
    """Position of each judged hit among its user's hits (0 for the first)."""
    return _memo(j, "hit_pos", lambda: np.arange(len(j.hits.rows)) - j._row_first)


def parse_gains(text: str, owner: str) -> dict[int, float]:
    """``'1=3.5;2=9'`` -> ``{1: 3.5, 2: 9.0}``: trec_eval's ``rel_level=gain`` parameters (levels
    not named keep their grade as gain). A grade named twice, a negative grade or a gain that is
    not a finite number is an error naming ``owner`` and the pair."""
    out: dict[int, float] = {}
    for part in filter(None, (p.strip() for p in str(text).split(";"))):
        level, eq, gain = part.partition("=")
        try:
            lvl, value = int(level), float(gain)
        except ValueError:
            raise InputError(f"{owner}: gains must read 'level=gain;level=gain' with integer levels, e.g. "
                             f"'1=3.5;2=9', got {text!r}") from None
        if not eq or lvl < 0:
            raise InputError(f"{owner}: gains must map non-negative integer grades to gains ('1=3.5;2=9'), "
                             f"got {part!r}")
        if not math.isfinite(value):
            raise InputError(f"{owner}: the gain of grade {lvl} must be a finite number, got {gain.strip()!r}")
        if lvl in out:
            raise InputError(f"{owner}: grade {lvl} is given a gain twice ({_num(out[lvl])} and {_num(value)}); "
                             f"give each grade once")
        out[lvl] = value
    return out


def _num(x: float) -> str:
    return f"{x:g}"


def gain_of(vals: np.ndarray, gains: dict[int, float]) -> np.ndarray:
    """The gain of each judged label: its grade, or ``gains[grade]``; 0 for negative labels (in the
    pool, unjudged) as in trec_eval's get_gain."""
    g = np.where(vals >= 0, vals, 0.0).astype(np.float64)
    for level, gain in gains.items():
        g[vals == level] = gain
    return g


def _ideal(j, gains: dict[int, float]):
    """The ideal ranking of every evaluated user: the positive gains of all its judgments, sorted
    descending (trec_eval's gain levels, highest first). Returns ``(gains, pos, n_pos, start)``:
    flat gains grouped by user, position within the user, count per user, first index per user."""
    def make():
        rows, _, vals = j.qrels.entries(j.users)
        g = gain_of(vals, gains)
        keep = g > 0
        rows, g = rows[keep], g[keep]
        order = np.lexsort((-g, rows))
        rows, g = rows[order], g[order]
        n_pos = np.bincount(rows, minlength=len(j)).astype(np.int64)
        start = np.cumsum(n_pos) - n_pos
        pos = np.arange(len(g)) - np.repeat(start, n_pos)
        return g, pos, n_pos, start
    return _memo(j, ("ideal", tuple(sorted(gains.items()))), make)


def _ideal_dcg_prefix(j, gains):
    """Cumulative ideal DCG at each ideal position (summed from the top, as trec_eval adds it)."""
    def make():
        g, pos, _, _ = _ideal(j, gains)
        return seg_cumsum(g / np.log2(pos + 2.0), pos)
    return _memo(j, ("idcg", tuple(sorted(gains.items()))), make)


def _at(cum: np.ndarray, start: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``cum`` summed over the first ``m`` elements of each segment (0 when ``m`` is 0)."""
    idx = start + m - 1
    return np.where(m > 0, cum[np.maximum(idx, 0)] if len(cum) else 0.0, 0.0)
