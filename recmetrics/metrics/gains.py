"""Gains and ideal rankings shared by the ranking and trec_eval kernels (below both).

trec_eval's ``rel_level=gain`` maps (``-m ndcg.1=3.5,2=9``), the gain of each judged label, the ideal
ranking of every evaluated user built from *all* its judgments (never from the truncated list),
segment-wise cumulative sums added from each user's top (trec_eval's order of addition) and the
zero-denominator division every metric uses.
"""
from __future__ import annotations

import math

import numpy as np

from ..arrays import stable_argsort
from ..errors import InputError


def safe_div(num, den) -> np.ndarray:
    """``num / den`` elementwise, 0 where ``den`` is not positive (the metrics' zero-denominator value)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    if num.ndim and num.shape == den.shape:   # per-user vectors: divide all, then zero (cheaper than where=)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = num / den
        out[~(den > 0)] = 0.0
        return out
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def _columns(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The elements of contiguous segments (``pos``: each one's 0-based position in its segment) laid
    out position by position: ``(perm, counts)``, ``perm`` listing the segments' first elements, then
    their second elements, ...; the segments are ordered by length, longest first, so that the
    ``counts[p]`` segments longer than ``p`` are a prefix of every block: element ``i`` of block ``p``
    follows element ``i`` of block ``p - 1`` in its segment."""
    starts = np.flatnonzero(np.asarray(pos) == 0)
    lengths = np.diff(np.r_[starts, len(pos)])
    by_length = stable_argsort(-lengths)
    starts, lengths = starts[by_length], lengths[by_length]
    counts = np.searchsorted(-lengths, -np.arange(int(lengths[0])), side="left")  # segments longer than p
    return np.concatenate([starts[:n] + p for p, n in enumerate(counts)]), counts


def _running(y: np.ndarray, counts: np.ndarray, exclusive: np.ndarray | None = None) -> None:
    """In place, the inclusive running sums of ``y`` laid out by :func:`_columns` along its last
    axis (several rows of values share one layout): block ``p`` adds block ``p - 1`` (contiguous
    slices, no gathering); ``exclusive`` (optional): the sum before each element (0 in block 0)."""
    if exclusive is not None:
        exclusive[..., :counts[0]] = 0.0
    end = 0
    for p in range(1, len(counts)):
        n, prev = int(counts[p]), end
        end += int(counts[p - 1])
        y[..., end:end + n] += y[..., prev:prev + n]
        if exclusive is not None:
            exclusive[..., end:end + n] = y[..., prev:prev + n]


def seg_cumsum(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of ``x`` within contiguous segments, ``pos`` being each element's
    0-based position in its segment. Each segment is summed from zero, left to right (a global
    cumsum minus the segment's start would carry rounding from every earlier segment), so an
    element's value depends on its own segment only.

    One vectorised step per position: step ``p`` adds to the ``p``-th element of every segment
    longer than ``p`` the sum before it, on the elements laid out position by position
    (:func:`_columns`), where those are contiguous slices."""
    out = np.array(x, dtype=np.float64, copy=True)
    if len(out) == 0:
        return out
    perm, counts = _columns(pos)
    y = out[perm]
    _running(y, counts)
    out[perm] = y
    return out


def seg_exclusive(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Within each segment (as :func:`seg_cumsum`), the sum of ``x`` over the earlier elements:
    0 for a segment's first element, else the inclusive sum of the element before it."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return np.zeros(0)
    perm, counts = _columns(pos)
    y, before = x[perm], np.empty(len(x))
    _running(y, counts, before)
    out = np.zeros(len(x))
    out[perm] = before
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
    flat gains grouped by user, position within the user, count per user, first index per user.

    With a gain map holding a fractional gain (and integer grades), the levels are ordered as
    trec_eval 10.0 orders them (:func:`trec_eval_level_order`), which can differ from descending."""
    def make():
        rows, _, vals = j.qrels.entries(j.users)
        if any(float(v) != int(v) for v in gains.values()) and np.array_equal(vals, np.trunc(vals)):
            rows, g = _trec_eval_ideal(rows, vals, gains)
        else:
            g = gain_of(vals, gains)
            keep = g > 0
            rows, g = rows[keep], g[keep]
            order = np.lexsort((-g, rows))
            rows, g = rows[order], g[order]
        n_pos = np.bincount(rows, minlength=len(j)).astype(np.int64)
        start = np.cumsum(n_pos) - n_pos
        pos = np.arange(len(g)) - np.repeat(start, n_pos)
        return g, pos, n_pos, start
    return _memo(j, ("ideal", tuple(gains.items())), make)


def trec_eval_level_order(gains: dict[int, float], n_levels: int) -> list[tuple[int, float]]:
    """The (level, gain) pairs of a query with grades ``0 .. n_levels - 1`` in the order trec_eval
    10.0 walks its ideal ranking (first = top): its ``setup_gains`` lists the ``-m`` pairs as given,
    then the other levels with their grade as gain, and sorts them with glibc's ``qsort`` (a stable
    top-down merge sort for such small arrays) under ``comp_rel_gain``, which returns the gains'
    difference cast to ``int``: gains less than 1 apart compare equal and keep their listed order
    (``ndcg.1=0.5`` puts grade 1 below grade 0, so its items never enter the ideal)."""
    listed = list(gains.items()) + [(lvl, float(lvl)) for lvl in range(n_levels) if lvl not in gains]

    def msort(a):
        if len(a) <= 1:
            return a
        left, right = msort(a[: len(a) // 2]), msort(a[len(a) // 2:])
        out = []
        while left and right:
            out.append(left.pop(0) if int(left[0][1] - right[0][1]) <= 0 else right.pop(0))
        return out + left + right

    return msort(listed)[::-1]


def _trec_eval_ideal(rows: np.ndarray, vals: np.ndarray, gains: dict[int, float]):
    """(rows, gains) of every user's ideal ranking walked as trec_eval walks it: the levels in
    :func:`trec_eval_level_order`, levels without a judgment skipped, stopping at the first judged
    level whose gain is not positive. ``rows`` sorted, grades integers (negative: not judged)."""
    keep = vals >= 0
    rows, levels = rows[keep], vals[keep].astype(np.int64)
    width = int(max([levels.max() + 1 if len(levels) else 0] + [lvl + 1 for lvl in gains]))
    n = int(rows.max()) + 1 if len(rows) else 0
    counts = np.bincount(rows * width + levels, minlength=n * width).reshape(n, width)
    n_levels = np.zeros(n, dtype=np.int64)
    np.maximum.at(n_levels, rows, levels + 1)
    out_rows, out_gain, out_pos = [], [], []
    for nl in np.unique(n_levels):
        users = np.flatnonzero(n_levels == nl)
        stopped = np.zeros(len(users), dtype=bool)
        for p, (lvl, gain) in enumerate(trec_eval_level_order(gains, int(nl))):
            c = counts[users, lvl]
            stopped |= (c > 0) & (gain <= 0)
            take = (c > 0) & ~stopped
            out_rows.append(np.repeat(users[take], c[take]))
            out_gain.append(np.full(int(c[take].sum()), float(gain)))
            out_pos.append(np.full(int(c[take].sum()), p))
    if not out_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    r, g, p = np.concatenate(out_rows), np.concatenate(out_gain), np.concatenate(out_pos)
    order = np.lexsort((p, r))
    return r[order], g[order]


def _ideal_dcg_prefix(j, gains):
    """Cumulative ideal DCG at each ideal position (summed from the top, as trec_eval adds it)."""
    def make():
        g, pos, _, _ = _ideal(j, gains)
        return seg_cumsum(g / np.log2(pos + 2.0), pos)
    return _memo(j, ("idcg", tuple(gains.items())), make)


def _at(cum: np.ndarray, start: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``cum`` summed over the first ``m`` elements of each segment (0 when ``m`` is 0)."""
    idx = start + m - 1
    return np.where(m > 0, cum[np.maximum(idx, 0)] if len(cum) else 0.0, 0.0)
