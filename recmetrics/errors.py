"""Exception types. Every validation error names the offending user/item/line and what was expected."""
from __future__ import annotations

import difflib
from typing import Iterable


class RecmetricsError(Exception):
    """Base class of every error raised by recmetrics."""


class InputError(RecmetricsError, ValueError):
    """Input data (ratings, runs, qrels, parameters) violates the documented contract."""


class FormatError(InputError):
    """A file line does not follow the expected format (the message carries path and line number)."""


class UnknownNameError(InputError, KeyError):
    """A name (metric, dataset, recommender, ...) is not registered; the message suggests the closest."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else ""


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """Build an :class:`UnknownNameError` that suggests the closest registered names."""
    known = sorted(set(known))
    lowered = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(repr(lowered[c]) for c in close)}?" if close else ""
    return UnknownNameError(f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})")


def show(value) -> str:
    """repr() of a user/item id for messages, without numpy's ``np.int64(...)`` wrapping."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    return repr(value)


def require_columns(frame, columns, what: str, verb: str = "lacks") -> None:
    """Raise :class:`InputError` naming the ``columns`` that ``frame`` lacks (``what`` names the table;
    ``verb="lack"`` for a plural name such as "predictions")."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{what} {verb} column(s) {missing}; has {list(frame.columns)} "
                         f"(expected {', '.join(map(str, columns))})")


def where(frame, i: int) -> str:
    """Location of row ``i`` (0-based position) of a table: ``file:line`` (1-based, header = line 1)
    when the table was read from a file (``frame.attrs['source']``), else ``row i``."""
    src = getattr(frame, "attrs", {}).get("source")
    return f"{src}:{i + 2}" if src else f"row {i}"


def require_ids(frame, columns, what: str) -> None:
    """Raise :class:`InputError` at the first row of ``frame`` whose id in one of ``columns`` is
    missing (NaN, None, ``pd.NA``) or blank text, naming the table (``what``), the column and the
    row (:func:`where`). Without it a missing id is matched, grouped or sorted by whatever numpy or
    pandas make of it: silently dropped, or a message about something else."""
    import numpy as np
    import pandas as pd

    for c in columns:
        col = frame[c]
        miss = pd.isna(col).to_numpy()
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            miss = miss | np.array([isinstance(v, str) and not v.strip() for v in col.tolist()], dtype=bool)
        if miss.any():
            i = int(np.flatnonzero(miss)[0])
            raise InputError(f"{what}: column {c!r} has no id at {where(frame, i)} ({show(col.iloc[i])}); every "
                             f"row needs one ({int(miss.sum())} such row(s))")
