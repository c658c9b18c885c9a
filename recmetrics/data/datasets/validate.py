"""Validation shared by every loader: ratings checked and brought into canonical form.

:func:`from_frame` builds a :class:`Dataset` from an in-memory DataFrame; the file loaders go
through the same checks (``_select_columns`` -> ``_canonical`` -> ``_finish``):

* ids (``_ids``): ``int64`` when every id is an integer (``"007"`` keeps its leading zero and
  stays a string), else stripped strings;
* ratings: numbers (text that is not a number is a :class:`~recmetrics.errors.FormatError`),
  finite and non-negative, optionally scaled by ``rating_factor`` and checked against the rating
  scale (:class:`~recmetrics.errors.InputError` naming the user and item);
* timestamps (``_timestamps``): numbers are Unix seconds (``int64``; ``float64`` when some are
  fractional); dates (ISO or other forms pandas reads; naive dates are taken as UTC) are
  converted to Unix seconds;
* repeated (user, item) pairs: an error unless ``duplicates="last"`` or ``"mean"``
  (:data:`DUPLICATE_POLICIES`);
* aspects: every value becomes a tuple of labels (``None``/NaN -> ``()``).

Error messages name the row by the ``where`` of the source (``"f.csv, line 7"``, ``"row 3"``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ...errors import FormatError, InputError, unknown_name
from .record import Dataset

__all__ = ["DUPLICATE_POLICIES", "from_frame"]

DUPLICATE_POLICIES = ("error", "last", "mean")


def _fmt_id(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _ids(col: pd.Series) -> pd.Series:
    """int64 when every id is integral, else strings (stripped)."""
    if pd.api.types.is_bool_dtype(col):
        return col.astype(np.int64)
    if pd.api.types.is_integer_dtype(col):
        return col.astype(np.int64)
    if pd.api.types.is_float_dtype(col):
        vals = col.to_numpy(dtype=float)
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)) and np.all(np.abs(vals) < 2**62):
            return col.astype(np.int64)
        return col.map(_fmt_id).astype(str)
    s = col.astype(str).str.strip()
    if s.str.match(r"0\d").any():  # leading zeros are part of the id ("007" != "7")
        return s
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all():
        vals = num.to_numpy(dtype=float)
        if np.all(vals == np.round(vals)) and np.all(np.abs(vals) < 2**53) and \
                not s.str.contains(r"[.eE]", regex=True).any():
            return num.astype(np.int64)
    return s


def _where_frame(pos: int) -> str:
    return f"row {pos}"


def _canonical(frame: pd.DataFrame, *, where: Callable[[int], str] = _where_frame,
               duplicates: str = "error", rating_scale: tuple[float, float] | None = None,
               rating_factor: float = 1.0, scale_hint: str = "",
               drop_blank: bool = False, int_ids: bool = False) -> pd.DataFrame:
    """Validate ``frame`` (columns user, item, rating[, timestamp], raw dtypes) and return it in
    canonical form. ``where(i)`` describes positional row ``i`` of ``frame`` ("f.csv, line 7")."""
    if duplicates not in DUPLICATE_POLICIES:
        raise unknown_name("duplicates policy", str(duplicates), DUPLICATE_POLICIES)
    if not (isinstance(rating_factor, (int, float, np.number)) and np.isfinite(rating_factor)
            and rating_factor > 0):
        raise InputError(f"rating_factor must be a positive number, got {rating_factor!r}")
    cols = [c for c in ("user", "item", "rating", "timestamp") if c in frame.columns]
    frame = frame[cols].reset_index(drop=True)
    pos = np.arange(len(frame))
    if drop_blank and len(frame):
        blank = frame.isna().all(axis=1).to_numpy()
        if blank.any():
            frame = frame.loc[~blank].reset_index(drop=True)
            pos = pos[~blank]

    def loc(j: int) -> str:
        return where(int(pos[j]))

    fields = ", ".join(cols)
    for c in ("user", "item"):
        miss = frame[c].isna().to_numpy()
        if pd.api.types.is_string_dtype(frame[c]) or frame[c].dtype == object:
            miss = miss | (frame[c].astype(str).str.strip() == "").to_numpy()
        if miss.any():
            j = int(np.flatnonzero(miss)[0])
            raise FormatError(f"{loc(j)}: missing {c} id (expected {fields}; "
                              f"{int(miss.sum())} such row(s))")
    user = _ids(frame["user"])
    item = _ids(frame["item"])
    if int_ids:
        for c, col in (("user", user), ("item", item)):
            if col.dtype != np.int64:
                num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
                bad = ~(np.isfinite(num) & (num == np.round(num)))
                j = int(np.flatnonzero(bad)[0]) if bad.any() else 0
                raise FormatError(f"{loc(j)}: {c} id {frame[c].iat[j]!r} is not an integer "
                                  f"(expected integer ids)")

    def who(j: int) -> str:
        return f"{loc(j)}: user {_fmt_id(user.iat[j])} item {_fmt_id(item.iat[j])}"

    raw = frame["rating"]
    if pd.api.types.is_bool_dtype(raw):
        raise FormatError(f"{loc(0)}: rating column holds booleans (expected numbers)")
    if pd.api.types.is_numeric_dtype(raw):
        rating = raw.astype(float)
    else:
        text = raw.astype(str).str.strip()
        rating = pd.to_numeric(text, errors="coerce").astype(float)
        nan_words = text.str.lower().isin(["nan", "", "na", "n/a", "none", "null"])
        bad = (rating.isna() & raw.notna() & ~nan_words).to_numpy()
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise FormatError(f"{loc(j)}: rating {raw.iat[j]!r} is not a number "
                              f"(user {_fmt_id(user.iat[j])} item {_fmt_id(item.iat[j])}; "
                              f"expected a numeric rating; {int(bad.sum())} such row(s))")
    r = rating.to_numpy(dtype=float)
    bad = ~np.isfinite(r)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        what = "missing (NaN)" if np.isnan(r[j]) else f"infinite ({r[j]})"
        raise InputError(f"{who(j)}: rating is {what} (expected a finite non-negative number; "
                         f"{int(bad.sum())} such row(s))")
    bad = r < 0
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InputError(f"{who(j)}: negative rating {r[j]:g} (expected a non-negative rating; "
                         f"{int(bad.sum())} such row(s))")
    if rating_factor != 1:
        r = r * float(rating_factor)
    if rating_scale is not None:
        lo, hi = rating_scale
        bad = (r < lo - 1e-9) | (r > hi + 1e-9)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InputError(f"{who(j)}: rating {r[j]:g} outside the rating scale {lo:g}-{hi:g} "
                             f"({int(bad.sum())} such row(s)){scale_hint}")

    out = pd.DataFrame({"user": user, "item": item, "rating": r})
    if "timestamp" in frame.columns:
        out["timestamp"] = _timestamps(frame["timestamp"], loc)

    dup = out.duplicated(["user", "item"], keep=False).to_numpy()
    if dup.any():
        if duplicates == "error":
            sub = out.loc[dup, ["user", "item"]]
            groups = sub.groupby(["user", "item"], sort=False).indices
            examples = []
            for (u, i), idx in list(groups.items())[:3]:
                places = _join_places([loc(int(k)) for k in sub.index.to_numpy()[idx][:3]])
                examples.append(f"user {_fmt_id(u)} item {_fmt_id(i)} ({places})")
            raise InputError(
                f"{len(groups)} (user, item) pair(s) rated more than once, e.g. "
                f"{'; '.join(examples)}; expected one rating per pair "
                f"(pass duplicates='last' to keep the last one or 'mean' to average them)")
        if duplicates == "last":
            out = out.drop_duplicates(["user", "item"], keep="last")
        else:  # mean rating; latest timestamp; position of the first occurrence
            agg = {"rating": "mean"}
            if "timestamp" in out.columns:
                agg["timestamp"] = "max"
            out = out.groupby(["user", "item"], sort=False, as_index=False).agg(agg)
    return out.reset_index(drop=True)


def _join_places(places: list[str]) -> str:
    """'f.csv, line 2' + 'f.csv, line 4' -> 'f.csv, line 2 and line 4'."""
    parts = [p.rsplit(", ", 1) for p in places]
    if all(len(x) == 2 for x in parts) and len({x[0] for x in parts}) == 1:
        return f"{parts[0][0]}, " + " and ".join(x[1] for x in parts)
    return " and ".join(places)


def _timestamps(col: pd.Series, loc: Callable[[int], str]) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(col):
        dt = col
    elif pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        v = col.to_numpy(dtype=float)
        bad = ~np.isfinite(v)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise FormatError(f"{loc(j)}: missing timestamp (expected a number or a date)")
        if np.all(v == np.round(v)):
            return col.astype(np.int64)
        return col.astype(float)
    else:
        miss = col.isna().to_numpy()
        if miss.any():
            j = int(np.flatnonzero(miss)[0])
            raise FormatError(f"{loc(j)}: missing timestamp (expected a number or a date)")
        text = col.astype(str).str.strip()
        num = pd.to_numeric(text, errors="coerce")
        if num.notna().all():
            return _timestamps(num, loc)
        dt = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
        if dt.isna().any():
            dt = pd.to_datetime(text, errors="coerce", utc=True, format="mixed")
        bad = dt.isna().to_numpy()
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise FormatError(f"{loc(j)}: timestamp {col.iat[j]!r} is neither a number nor a "
                              f"date (expected Unix seconds or an ISO date)")
    if getattr(dt.dt, "tz", None) is not None:
        dt = dt.dt.tz_convert("UTC").dt.tz_localize(None)
    if dt.isna().any():
        j = int(np.flatnonzero(dt.isna().to_numpy())[0])
        raise FormatError(f"{loc(j)}: missing timestamp (expected a number or a date)")
    secs = (dt - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
    return secs.astype(np.int64)


def from_frame(frame: pd.DataFrame, name: str = "custom", *, user_col: str = "user",
               item_col: str = "item", rating_col: str = "rating",
               timestamp_col: str | None = None, duplicates: str = "error",
               rating_scale: tuple[float, float] | None = None, rating_factor: float = 1.0,
               aspects: pd.Series | None = None, description: str = "") -> Dataset:
    """Build a validated :class:`Dataset` from an in-memory DataFrame.

    ``timestamp_col=None`` uses a column named ``timestamp`` when there is one (``False``
    ignores it). ``rating_scale`` defaults to the observed (min, max); ``rating_factor``
    (default 1) multiplies every rating before the scale is checked. ``duplicates`` is
    ``"error"`` (default), ``"last"`` or ``"mean"`` (mean rating, latest timestamp). ``aspects``
    maps item id -> labels. Error messages name rows by their 0-based position.

    >>> frame = pd.DataFrame({"u": ["a", "a", "b"], "i": [1, 1, 2], "stars": [8, 6, 10]})
    >>> ds = from_frame(frame, "toy", user_col="u", item_col="i", rating_col="stars",
    ...                 rating_factor=0.5, duplicates="mean")
    >>> ds.ratings
      user  item  rating
    0    a     1     3.5
    1    b     2     5.0
    >>> from_frame(frame, user_col="u", item_col="i", rating_col="stars")
    Traceback (most recent call last):
    ...
    recmetrics.errors.InputError: 1 (user, item) pair(s) rated more than once, e.g. user a item 1 (row 0 and row 1); expected one rating per pair (pass duplicates='last' to keep the last one or 'mean' to average them)
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame of ratings, got {type(frame).__name__}")
    raw = _select_columns(frame, user_col, item_col, rating_col, timestamp_col,
                          where="the DataFrame")
    ratings = _canonical(raw, duplicates=duplicates, rating_scale=rating_scale,
                         rating_factor=rating_factor)
    return _finish(name, ratings, aspects, rating_scale, description)


def _aspect_ids(index: pd.Index, items: pd.Series) -> pd.Index:
    """The aspects' item ids under the ratings' id rule (:func:`_ids`), so that ``"10"`` in an
    aspects table names item ``10`` of integer-id ratings (else every aspect metric scores 0)."""
    ids = _ids(pd.Series(index, dtype=object if index.dtype == object else index.dtype))
    if pd.api.types.is_integer_dtype(items.dtype) and not pd.api.types.is_integer_dtype(ids.dtype):
        return index  # ids that are not integers cannot name integer items: left as given
    if not pd.api.types.is_integer_dtype(items.dtype):
        ids = pd.Series(index).map(_fmt_id).astype(str)
    out = pd.Index(ids.to_numpy())
    if out.has_duplicates:
        dup = out[out.duplicated()].unique()[:5].tolist()
        raise InputError(f"aspects: item ids {dup} appear more than once when read as the ratings' ids")
    return out


def _finish(name: str, ratings: pd.DataFrame, aspects: pd.Series | None,
            rating_scale: tuple[float, float] | None, description: str,
            item_info: pd.DataFrame | None = None) -> Dataset:
    if rating_scale is None:
        if len(ratings):
            rating_scale = (float(ratings["rating"].min()), float(ratings["rating"].max()))
        else:
            rating_scale = (float("nan"), float("nan"))
    rating_scale = (float(rating_scale[0]), float(rating_scale[1]))
    if aspects is not None:
        if not isinstance(aspects, pd.Series):
            raise InputError(f"aspects must be a pandas Series (item id -> tuple of labels), "
                             f"got {type(aspects).__name__}")
        aspects = aspects.map(lambda v: tuple(v) if isinstance(v, (tuple, list, set,
                                                                  frozenset, np.ndarray))
                              else (() if v is None or (isinstance(v, float) and np.isnan(v))
                                    else (str(v),)))
        aspects = aspects.copy()
        aspects.index = _aspect_ids(aspects.index, ratings["item"])
        aspects.name = "aspects"
        aspects.index.name = "item"
    return Dataset(name=name, ratings=ratings, aspects=aspects, rating_scale=rating_scale,
                   description=description, item_info=item_info)


def _select_columns(frame: pd.DataFrame, user_col: Any, item_col: Any, rating_col: Any,
                    timestamp_col: Any, where: str) -> pd.DataFrame:
    if timestamp_col is None and "timestamp" in frame.columns:
        timestamp_col = "timestamp"
    wanted = {"user": user_col, "item": item_col, "rating": rating_col}
    if timestamp_col not in (None, False):
        wanted["timestamp"] = timestamp_col
    missing = [f"{k}_col={v!r}" for k, v in wanted.items() if v not in frame.columns]
    if missing:
        found = ", ".join(map(str, frame.columns))
        raise InputError(f"{where}: missing column(s) {', '.join(missing)} (found columns: "
                         f"{found}); pass user_col=, item_col=, rating_col=, timestamp_col= "
                         f"to map your column names")
    return pd.DataFrame({k: frame[v].reset_index(drop=True) for k, v in wanted.items()})
