"""Means over users of many groups of units at once, each bit-identical to the group's mean alone.

A robustness sample ranks every system by the mean of its units' scores, under several means
(arithmetic, geometric under each reading of its zeros), pooled and per data-split replicate. Each
of those means averages the values on its own scale (:func:`~recmetrics.metrics.aggregate.transformed`,
elementwise), so an array of scores is put on every mean's scale once (:func:`transform_columns`),
whichever groups of its rows are then averaged, instead of once per group.

numpy sums the rows of a ``(units, columns)`` array with two or more columns one after the other,
each column on its own (the units are not the inner axis): the sum of a group's rows does not
depend on the other columns laid beside them, nor on the other groups' rows around them. So the
groups' rows, sorted by group, are summed slice by slice (:func:`group_means`) with the additions
of averaging each group alone. (``numpy.add.reduceat`` does not add rows in that order; one column
alone is summed pairwise: callers keep those cases to the per-group computation.)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def column_plan(aggs: Sequence[str], specs) -> tuple[list, np.ndarray]:
    """``(columns, where)``: the distinct transforms the means of ``aggs`` apply to the specs, as
    ``(mean, spec)`` pairs (the first pair of each), and for every pair ``a * n_specs + s`` its
    column among them. Two means transform a spec alike when they are the same mean with the same
    reading of a zero of that spec (the geometric mean under trec_eval's and rec_eval's readings
    differ only on the hit-only metrics, :func:`~recmetrics.metrics.aggregate.zero_counts_as`), so
    their columns, hence their sums, are the same numbers: each is computed once."""
    from ..metrics.aggregate import parse_aggregate, zero_counts_as

    columns, where, index = [], [], {}
    for a_i, a in enumerate(aggs):
        m, reading = parse_aggregate(a)
        for s_i, spec in enumerate(specs):
            key = (m, s_i, zero_counts_as(reading, spec) if m == "geometric" else None)
            if key not in index:
                index[key] = len(columns)
                columns.append((a_i, s_i))
            where.append(index[key])
    return columns, np.array(where, dtype=np.intp)


def transform_columns(values: np.ndarray, aggs: Sequence[str], specs, columns: list) -> np.ndarray:
    """``values`` (units × specs) on the scales of :func:`column_plan`'s ``columns``, one column
    each: column ``(a, s)`` equals row ``s`` of ``transformed(x.T, aggs[a], axis=1, metric=specs)``
    elementwise for any subset ``x`` of the rows (it checks the values as that does: NaN, and
    negative values for a mean other than the arithmetic one, are refused). When every column is a
    spec's own values in order (the arithmetic mean alone), ``values`` itself is returned (C-ordered
    float64, checked for NaN): the same numbers, without a copy; it is read, never written."""
    from ..metrics.aggregate import parse_aggregate, transformed

    as_is = (len(columns) == len(specs) and all(s == i and parse_aggregate(aggs[a])[0] == "arithmetic"
                                                for i, (a, s) in enumerate(columns)))
    if as_is and isinstance(values, np.ndarray) and values.dtype == np.float64 and values.flags.c_contiguous:
        transformed(values, "arithmetic")   # the check: no NaN
        return values

    out = np.empty((len(values), len(columns)))
    at = 0
    while at < len(columns):   # each mean's columns are consecutive: one call per mean
        a = columns[at][0]
        end = at
        while end < len(columns) and columns[end][0] == a:
            end += 1
        rows = [s for _, s in columns[at:end]]
        x = values.T if rows == list(range(len(specs))) else values.T[rows]
        out[:, at:end] = transformed(x, aggs[a], axis=1, metric=[specs[s] for s in rows])[1].T
        at = end
    return out


def group_means(t: np.ndarray, groups: np.ndarray, n_groups: int, means: Sequence[str], where: np.ndarray,
                layout: str | None = None, grouped: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(have, values)``: the groups that have rows and, per mean (canonical names, as
    :func:`~recmetrics.metrics.aggregate.transformed` gives them), their ``(len(have), n_specs)``
    means, from the rows of ``t`` (at least two columns laid out by :func:`column_plan`, whose
    ``where`` says the column of each (mean, spec)) and their ``groups`` (0..n_groups-1). Group
    ``g``'s row of mean ``k`` equals ``untransformed(means[k], x.T.mean(axis=1))`` bit for bit, ``x``
    being the group's rows in their order in ``t``, on mean ``k``'s scale: the same sums, row after
    row from 0, divided by the same count (tested).

    A few long groups are summed one slice each (``layout="loop"``); many short ones position by
    position (``"running"``): the groups' first rows, then their second rows added, ... (:func:`_running_sums`),
    as many vector additions as the longest group has rows. Default: whichever takes fewer steps.
    ``grouped``: the rows are already sorted by group (``groups`` non-decreasing), as a stable sort
    would leave them, so they are summed where they lie (no sorted copy of ``t``)."""
    from ..metrics.aggregate import untransformed
    from ..arrays import stable_argsort

    if t.shape[1] < 2:
        raise ValueError("group_means sums rows of two or more columns (one column numpy sums pairwise)")
    groups = np.asarray(groups)
    order = np.arange(len(groups)) if grouped else stable_argsort(groups)
    counts = np.bincount(groups, minlength=n_groups)
    have = np.flatnonzero(counts)
    lengths = counts[have]
    if layout is None:
        layout = "running" if len(have) and int(lengths.max()) < len(have) else "loop"
    if layout == "running" and len(have):
        sums = _running_sums(t, order, lengths)
    else:
        t = t if grouped else t.take(order, axis=0)
        ends = np.cumsum(lengths)
        sums = np.empty((len(have), t.shape[1]))
        for i, (a, b) in enumerate(zip((ends - lengths).tolist(), ends.tolist())):
            sums[i] = np.add.reduce(t[a:b], axis=0)
    c = lengths[:, None]
    n_specs = len(where) // len(means)
    return have, [untransformed(m, sums[:, where[k * n_specs:(k + 1) * n_specs]] / c) for k, m in enumerate(means)]


def _running_sums(t: np.ndarray, order: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per group (rows ``t[order]``, consecutive groups of ``lengths`` rows, none empty), the sum of its
    rows from 0 in their order: the rows laid out position by position (every group's first row, the
    groups longest first, then every group's second row, ...), block ``p`` adds block ``p - 1``'s
    running sums (a contiguous slice), and each group's sum is its last row's running sum. Each group
    adds its rows one after the other starting from 0, as ``numpy.add.reduce`` does."""
    n = len(lengths)
    by_length = np.argsort(-lengths, kind="stable")
    rank = np.empty(n, dtype=np.intp)
    rank[by_length] = np.arange(n)
    longest = lengths[by_length]
    block = np.searchsorted(-longest, -np.arange(int(longest[0])), side="left")   # groups longer than p
    block_start = np.concatenate([[0], np.cumsum(block)[:-1]])
    starts = np.cumsum(lengths) - lengths
    pos = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)   # each row's position in its group
    dest = block_start[pos] + np.repeat(rank, lengths)
    source = np.empty(len(dest), dtype=np.intp)
    source[dest] = order
    y = t.take(source, axis=0)
    y[:block[0]] += 0.0   # the sum from 0: 0 + x0 (-0.0 becomes 0.0, as numpy's sum of -0.0 alone)
    end = 0
    for p in range(1, len(block)):
        prev, end = end, end + int(block[p - 1])
        y[end:end + int(block[p])] += y[prev:prev + int(block[p])]
    sums = np.empty((n, t.shape[1]))
    sums[by_length] = y[block_start[longest - 1] + np.arange(n)]
    return sums
