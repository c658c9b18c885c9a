"""Ratings from a file you supply: any CSV/TSV/parquet file (``ratings-file``,
:func:`load_ratings_file`), LibraryThing (``librarything``) and BeerAdvocate (``beeradvocate``).

The format comes from the extension (``.csv`` comma, ``.tsv``/``.tab`` tab, ``.dat`` ``::``,
``.parquet``/``.pq``/``.parq``; ``.gz``/``.bz2``/``.xz``/``.zip``/``.zst`` compression is undone)
or from ``sep=``. Columns are found by name after a header, or taken in the order user, item,
rating[, timestamp] without one. Error messages give 1-based physical lines (parquet: rows).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import FormatError, InputError
from .reading import _guess_encoding, _line_where, _need_file, _read_csv
from .record import Dataset
from .registry import _REGISTRY, register
from .validate import _canonical, _finish, _select_columns

__all__ = ["load_ratings_file", "librarything", "beeradvocate"]


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
    ``name`` defaults to the file's stem; ``aspects`` (item id -> labels) are attached as given.

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "stars.tsv"
    >>> _ = f.write_text("who\\twhat\\tstars\\nann\\t007\\t8\\nbob\\t7\\tten\\n")
    >>> load_ratings_file(f, user_col="who", item_col="what", rating_col="stars")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recmetrics.errors.FormatError: ...stars.tsv, line 3: rating 'ten' is not a number (user bob item 7; expected a numeric rating; 1 such row(s))
    >>> _ = f.write_text("who\\twhat\\tstars\\nann\\t007\\t8\\nbob\\t7\\t10\\n")
    >>> ds = load_ratings_file(f, user_col="who", item_col="what", rating_col="stars",
    ...                        rating_factor=0.5, rating_scale=(0.5, 5))
    >>> ds.ratings
      user item  rating
    0  ann  007     4.0
    1  bob    7     5.0
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
    1-10 values, pass ``rating_factor=0.5``. Other keywords go to :func:`load_ratings_file`.

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "lt.csv"
    >>> _ = f.write_text("user,item,rating\\nu1,b1,9\\nu2,b1,7\\n")
    >>> librarything(f, rating_factor=0.5).ratings["rating"].tolist()
    [4.5, 3.5]
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
    Other keywords go to :func:`load_ratings_file`.

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "beer.csv"
    >>> _ = f.write_text("review/profileName,beer/beerId,review/overall\\nstcules,47986,1.5\\n")
    >>> beeradvocate(f, user_col="review/profileName", item_col="beer/beerId",
    ...              rating_col="review/overall")
    Dataset('beeradvocate': 1 users, 1 items, 1 ratings, scale 1-5, no aspects)
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
