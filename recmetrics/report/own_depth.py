"""The cut-offs of the own-runs book follow its runs' depth.

A run of top-100 lists is meant to be read down to 100, so the book's default cut-offs are the
usual ladder of cut-offs (5, 10, 20, 50, 100, 200, 500, 1000, ...: 1, 2 and 5 times a power of ten,
from 5) up to the depth of the runs, and that depth itself when it is not on the ladder: 5, 10, 20,
50, 100 for top-100 lists, 5, 10 for top-10 lists, 5, 10, 20, 30 for top-30 lists. When the runs
have different depths the ladder stops at the shallowest run's depth, so every run is scored on
lists it made whole (a top-10 run at cut-off 100 would count 90 missing positions as non-relevant);
``-p cutoffs=[...]`` chooses others. :func:`depth_note` says, on the book's front page, which
cut-offs were taken and why, and names the runs shorter than the deepest cut-off when the user chose
deeper ones.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ..errors import InputError

__all__ = ["depth_cutoffs", "depth_note"]


def _ladder(limit: int) -> list[int]:
    """5, 10, 20, 50, 100, 200, 500, ... up to ``limit`` (inclusive)."""
    out, scale = [], 1
    while 5 * scale <= limit:
        out += [c for c in (5 * scale, 10 * scale, 20 * scale) if c <= limit]
        scale *= 10
    return out


def depth_cutoffs(depths: Iterable[int]) -> list[int]:
    """The default cut-offs for runs of these list ``depths``: the ladder 5, 10, 20, 50, 100, ... up
    to the shallowest depth, and that depth when it is not on the ladder.

    >>> depth_cutoffs([100, 100])
    [5, 10, 20, 50, 100]
    >>> depth_cutoffs([10, 100]), depth_cutoffs([30]), depth_cutoffs([3]), depth_cutoffs([1000])
    ([5, 10], [5, 10, 20, 30], [3], [5, 10, 20, 50, 100, 200, 500, 1000])
    """
    depths = [int(d) for d in depths]
    if not depths:
        raise InputError("no run to take the cut-offs from")
    shallowest = min(depths)
    if shallowest < 1:
        raise InputError(f"a run has no ranked item (depth {shallowest}): nothing to cut off")
    cuts = _ladder(shallowest)
    return cuts if cuts and cuts[-1] == shallowest else cuts + [shallowest]


def depth_note(depth: Mapping[str, int], cutoffs: Iterable[int], chosen: bool) -> str:
    """One sentence for the book's front page: how the cut-offs relate to the runs' depth.

    ``depth``: ``{run: depth of its lists}``; ``cutoffs``: the book's; ``chosen``: whether they were
    given (``-p cutoffs=...``, or a Study's own) rather than taken from the depth.

    >>> depth_note({"a": 100, "b": 100}, [5, 10, 20, 50, 100], chosen=False)
    'The cut-offs follow the depth of the runs (every run ranks 100 items per user): the ladder 5, 10, 20, 50, ... up to it.'
    >>> print(depth_note({"a": 100, "b": 20}, [5, 10, 20], chosen=False))  # doctest: +NORMALIZE_WHITESPACE
    The cut-offs follow the depth of the runs (from 20 to 100 items per user): the ladder 5, 10, 20, 50, ...
    up to the shallowest run's depth, so every run is scored on lists it made whole.
    >>> print(depth_note({"a": 100, "b": 20}, [10, 100], chosen=True))  # doctest: +NORMALIZE_WHITESPACE
    Runs shorter than the deepest cut-off (100): `b` (20). Their missing positions count as non-relevant,
    as in trec_eval, so their scores at deeper cut-offs measure the shorter list.
    """
    cutoffs = [int(c) for c in cutoffs]
    deepest = max(cutoffs or [0])
    values = sorted(set(int(d) for d in depth.values()))
    if chosen:
        short = [f"`{n}` ({d})" for n, d in depth.items() if d < deepest]
        if not short:
            return ""
        return (f"Runs shorter than the deepest cut-off ({deepest}): {', '.join(short)}. Their missing positions "
                "count as non-relevant, as in trec_eval, so their scores at deeper cut-offs measure the shorter list.")
    if not values:
        return ""
    if len(values) == 1:
        return (f"The cut-offs follow the depth of the runs (every run ranks {values[0]:,} items per user): the "
                "ladder 5, 10, 20, 50, ... up to it.")
    return (f"The cut-offs follow the depth of the runs (from {values[0]:,} to {values[-1]:,} items per user): the "
            "ladder 5, 10, 20, 50, ... up to the shallowest run's depth, so every run is scored on lists it made "
            "whole.")
