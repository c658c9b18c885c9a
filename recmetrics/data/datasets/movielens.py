"""MovieLens in its native file formats (100K, 1M, 10M, 20M, latest), registered as
``movielens-<version>`` (alias ``ml-<version>``); you download the files, nothing is fetched.

* ``100k``: ``u.data`` (tab-separated ``user item rating timestamp``) and ``u.item``
  (``|``-separated, 19 genre flags, latin-1; genre names from ``u.genre`` when present);
* ``1m``, ``10m``: ``ratings.dat`` (``UserID::MovieID::Rating::Timestamp``) and ``movies.dat``
  (``MovieID::Title::Genres``);
* ``20m``, ``latest``: ``ratings.csv`` (header ``userId,movieId,rating,timestamp``) and
  ``movies.csv`` (``movieId,title,genres`` with CSV quoting).

Ids must be integers; ratings must lie in the release's scale (1-5, or 0.5-5 from 10M on).
Genres are ``|``-separated; "unknown" (100K) and "(no genres listed)" give an empty aspect
tuple (``_parse_genres``, also used by the embedded ``movielens-small``).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ...errors import FormatError, InputError, unknown_name
from .reading import _guess_encoding, _line_where, _read_csv, _read_double_colon, _read_text
from .record import Dataset
from .registry import register
from .validate import _canonical, _finish

__all__ = ["MOVIELENS_VERSIONS", "load_movielens"]

_ML_NO_GENRE = {"(no genres listed)", "unknown", ""}


def _parse_genres(text: Any) -> tuple[str, ...]:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ()
    parts = [g.strip() for g in str(text).split("|")]
    return tuple(g for g in parts if g not in _ML_NO_GENRE)


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
        if sorted(names) != list(range(len(names))):
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
    idx = pd.Index(np.asarray(list(ids), dtype=np.int64), name="item")
    if idx.has_duplicates:
        dup = idx[idx.duplicated()][0]
        raise FormatError(f"{path}: movie id {dup} is listed more than once (expected one line "
                          f"per movie)")
    asp = pd.Series(list(aspects), index=idx, name="aspects", dtype=object)
    info = pd.DataFrame({"title": list(titles)}, index=idx)
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

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ratings.dat").write_text("1::10::5::978300760\\n1::20::3::978302109\\n"
    ...                                    "2::10::4::978301968\\n")
    >>> _ = (d / "movies.dat").write_text("10::Toy Story (1995)::Animation|Children's|Comedy\\n"
    ...                                   "20::Heat (1995)::Action|Crime|Thriller\\n")
    >>> ml = load_movielens(d, "1m")
    >>> ml
    Dataset('movielens-1m': 2 users, 2 items, 3 ratings, scale 1-5, 6 aspect labels, timestamps)
    >>> ml.aspects.loc[10], ml.item_info.loc[20, "title"]
    (('Animation', "Children's", 'Comedy'), 'Heat (1995)')
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


def register_versions() -> None:
    """Register ``movielens-100k`` ... ``movielens-latest`` (aliases ``ml-100k`` ...).

    Called once by the package ``__init__`` after the embedded datasets, so that
    :func:`~recmetrics.datasets.list` shows the default dataset first (registering again
    replaces the entries with equal ones).

    >>> import recmetrics as rm
    >>> rm.datasets.describe("ml-100k").splitlines()[0]
    'movielens-100k: MovieLens 100K: 100,000 ratings by 943 users on 1,682 movies, 1-5 stars; genres as aspects.'
    """
    for v in MOVIELENS_VERSIONS:
        _register_movielens(v)
