"""Argument checks shared by the meta-evaluation entry points: no silent wrong p-value.

One definition of what a valid input is, used by :mod:`recmetrics.meta.discriminative`,
:mod:`~recmetrics.meta.significance`, :mod:`~recmetrics.meta.compare`,
:mod:`~recmetrics.meta.agreement` and :mod:`~recmetrics.meta.robustness`:

* :func:`score_table` — a systems × users table of per-user scores: 2-d, enough systems, at
  least one user, **unique system names** (a repeated name puts p-values on the wrong pairs),
  **unique user labels** (pandas selects every column of a repeated label, so a unit would be
  counted several times), numeric cells and **finite values** (NaN has no value; ±inf makes every
  pair holding it "significant" at p = 1/(B+1) or, in the t-test, p = 1). Each error names the
  offending system and user.
* :func:`finite` — the finiteness check alone, for plain arrays (rows and columns named by
  position, or by the labels given).
* :func:`seed`, :func:`positive_int`, :func:`n_jobs` — the integer parameters: a seed is a
  non-negative integer (``None`` would make a p-value unreproducible), counts such as
  ``n_permutations`` or ``chunk_size`` are ≥ 1, ``n_jobs`` is an integer >= 1, or ``-1`` for
  every core (joblib's ``-1``; its other negative values depend on the machine and are refused).

Every failure raises :class:`~recmetrics.errors.InputError`; nothing is silently repaired. A
caller who wants repeated units pooled says how, e.g. ``scores.T.groupby(level=0).mean().T``
(the mean over a user's folds: ``Study.scores(..., pool="mean")``).

Example
-------
>>> import pandas as pd
>>> from recmetrics.checks import score_table
>>> frame, x = score_table(pd.DataFrame([[0.1, 0.2], [0.3, float("inf")]], index=["A", "B"],
...                                     columns=["u1", "u2"]))
Traceback (most recent call last):
...
recmetrics.errors.InputError: scores: +inf for system 'B', user 'u2' (row 1, column 1); every user needs a finite value for every system
"""
from __future__ import annotations

import numbers as _numbers

from .errors import InputError, show

__all__ = ["score_table", "finite", "numbers", "seed", "positive_int", "n_jobs"]

_SHOWN = 5  # repeated labels listed in a message


def _is_int(value) -> bool:
    return isinstance(value, _numbers.Integral) and not isinstance(value, bool)


def seed(value, name: str = "seed") -> int:
    """``value`` as a non-negative ``int`` (numpy ints accepted); :class:`InputError` otherwise."""
    if not _is_int(value) or int(value) < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value!r} "
                         f"(results are reproducible by design: pass e.g. {name}=0)")
    return int(value)


def positive_int(value, name: str) -> int:
    """``value`` as an ``int`` ≥ 1 (numpy ints accepted); :class:`InputError` otherwise."""
    if not _is_int(value) or int(value) < 1:
        raise InputError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def n_jobs(value, name: str = "n_jobs") -> int:
    """Number of workers: ``None`` = 1; an ``int`` >= 1, or ``-1`` for every core (joblib's ``-1``).
    ``0`` names no worker; joblib's other negative values (``-2``: every core but one, ...) are
    refused too: what they mean depends on the machine, and on one with fewer cores they name none
    (joblib then quietly runs one worker)."""
    if value is None:
        return 1
    if not _is_int(value) or (int(value) < 1 and int(value) != -1):
        raise InputError(f"{name} must be an integer >= 1 (1 = no parallelism), or -1 for every core, got {value!r}")
    return int(value)


def _label(labels, i) -> str:
    return show(labels[i]) if labels is not None else str(i)


def finite(x, what: str = "scores", rows=None, cols=None, row_name: str = "system",
           col_name: str = "user") -> None:
    """Raise :class:`InputError` at the first NaN or ±inf of the float array ``x`` (1-d or 2-d),
    naming its row (``rows[i]`` when labels are given) and column."""
    import numpy as np

    bad = ~np.isfinite(x)
    if not bad.any():
        return
    pos = tuple(int(v) for v in np.argwhere(bad)[0])
    v = x[pos]
    kind = "NaN" if np.isnan(v) else ("+inf" if v > 0 else "-inf")
    if x.ndim == 1:
        where = f"{col_name} {_label(cols, pos[0])}"
        if cols is not None:
            where += f" (position {pos[0]})"
    elif x.ndim == 2:
        where = f"{row_name} {_label(rows, pos[0])}, {col_name} {_label(cols, pos[1])}"
        if rows is not None or cols is not None:
            where += f" (row {pos[0]}, column {pos[1]})"
    else:
        where = f"index {pos}"
    tail = f"every {col_name} needs a finite value" + (f" for every {row_name}" if x.ndim == 2 else "")
    raise InputError(f"{what}: {kind} for {where}; {tail}")


def numbers(values, what: str = "scores"):
    """``values`` (any array-like) as a float64 array, or :class:`InputError` naming the position of
    the first entry that is not a number (numpy alone says only "could not convert")."""
    import numpy as np

    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    try:
        arr = np.asarray(values, dtype=object)
    except ValueError:  # ragged nesting
        raise InputError(f"{what}: expected a rectangular array of numbers (rows of equal length)") from None
    for pos in np.ndindex(arr.shape):
        try:
            float(arr[pos])
        except (TypeError, ValueError):
            where = pos[0] if len(pos) == 1 else pos
            raise InputError(f"{what}: value {arr[pos]!r} at position {where} is not a number") from None
    raise InputError(f"{what}: expected an array of numbers")  # pragma: no cover


def _repeated(labels, what: str, kind: str, hint: str) -> None:
    dup = labels.duplicated(keep=False)
    if not dup.any():
        return
    import numpy as np

    names = list(dict.fromkeys(labels[dup]))
    pos = {}
    for i in np.flatnonzero(dup):
        pos.setdefault(labels[i], []).append(int(i))
    shown = "; ".join(f"{show(n)} at positions {pos[n][:4]}" for n in names[:_SHOWN])
    more = f" (and {len(names) - _SHOWN} more)" if len(names) > _SHOWN else ""
    raise InputError(f"{what}: {len(names)} {kind} label(s) appear more than once: {shown}{more}; {hint}")


def _numeric(frame, what: str):
    """``frame`` as float64, or :class:`InputError` naming the first cell that is not a number."""
    import numpy as np
    import pandas as pd

    try:
        return frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        pass
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        coerced = pd.to_numeric(col, errors="coerce")
        bad = coerced.isna().to_numpy() & ~col.isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{what}: value {col.iloc[i]!r} for system {show(frame.index[i])}, user "
                             f"{show(frame.columns[j])} (row {i}, column {j}) is not a number")
    raise InputError(f"{what}: the scores are not numbers")  # pragma: no cover - to_numeric found no culprit


def score_table(scores, what: str = "scores", *, min_systems: int = 2):
    """Validate a systems × users table of per-user scores; return ``(frame, values)``.

    ``scores``: a DataFrame (index = system names, columns = user/unit labels, users paired by
    column) or anything 2-d that numpy reads as numbers (rows and columns then named by position).
    ``values`` is the float64 ``(n_systems, n_users)`` array. Raises :class:`InputError` — with
    ``what`` at the start of the message — for fewer than ``min_systems`` rows, no column, a
    repeated system name or user label, a cell that is not a number, NaN or ±inf.
    """
    import numpy as np
    import pandas as pd

    if isinstance(scores, pd.DataFrame):
        frame = scores
    else:
        arr = numbers(scores, what)
        if arr.ndim != 2:
            raise InputError(f"{what}: scores must be a systems × users DataFrame or 2-d array, got shape {arr.shape}")
        frame = pd.DataFrame(arr)
    if frame.shape[0] < min_systems:
        raise InputError(f"{what}: need at least {min_systems} systems (rows), got shape {frame.shape}")
    if frame.shape[1] < 1:
        raise InputError(f"{what}: no users (columns)")
    _repeated(frame.index, what, "system", "every system needs exactly one row (a repeated name would put "
              "p-values on the wrong pairs): rename or drop the duplicates")
    _repeated(frame.columns, what, "user", "every user (unit) must be one column, else it is counted once per "
              "copy: keep the level that tells the copies apart (e.g. the fold), or pool them by an explicit "
              "rule, e.g. scores.T.groupby(level=0).mean().T (Study.scores(..., pool='mean'))")
    values = _numeric(frame, what)
    finite(values, what, frame.index, frame.columns)
    return frame, values


def system_values(values, what: str = "values"):
    """Validate a per-run metric's ``system -> value`` Series (unique system names, finite numbers)."""
    import pandas as pd

    series = values if isinstance(values, pd.Series) else pd.Series(values)
    _repeated(series.index, what, "system", "every system needs exactly one value: rename or drop the duplicates")
    arr = numbers(series.to_numpy(), what)
    finite(arr, what, cols=series.index, col_name="system")
    return series.astype(float)


def paired(a, b, what: str = "paired scores", kind: str = "user"):
    """Align two labelled inputs by label before they are paired by position.

    Two pandas Series (or DataFrames, by their last axis) are paired by their labels, not their
    positions: ``b`` is reordered to ``a``'s labels; different label sets or a repeated label are an
    :class:`InputError` naming them. Anything else is returned unchanged (paired by position).
    """
    import pandas as pd

    if not (isinstance(a, (pd.Series, pd.DataFrame)) and isinstance(b, (pd.Series, pd.DataFrame))):
        return a, b
    la = a.index if isinstance(a, pd.Series) else a.columns
    lb = b.index if isinstance(b, pd.Series) else b.columns
    if la.equals(lb):
        return a, b
    for labels in (la, lb):
        _repeated(labels, what, kind, f"every {kind} must appear once to be paired")
    only_a, only_b = la.difference(lb), lb.difference(la)
    if len(only_a) or len(only_b):
        raise InputError(f"{what}: the two inputs label different {kind}s (only in the first: "
                         f"{', '.join(show(x) for x in only_a[:_SHOWN]) or 'none'}; only in the second: "
                         f"{', '.join(show(x) for x in only_b[:_SHOWN]) or 'none'}); pair them on the same {kind}s")
    return a, (b.reindex(la) if isinstance(b, pd.Series) else b.reindex(columns=la))
