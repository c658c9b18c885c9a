"""The run cache: where cached runs live, their keys, and the parquet files that hold them.

A run of ``system`` on fold ``f`` is stored as ``<key>.parquet`` where ``key`` is
:func:`cache_key` of (the split's parameters incl. :func:`ratings_hash` of the data, the fold,
:func:`system_spec` of the system — its class, hyper-parameters and a hash of its source code —,
the list length ``n``, ``exclude_seen`` and the package version). Editing an algorithm therefore
invalidates its cached runs; moving recmetrics' own modules around does not (the key hashes the
recommender sources and :mod:`recmetrics.data.run`, never this module).

:func:`save_run` writes every cell of a run's ``(n_users, depth)`` matrices, so :func:`load_run`
returns an identical :class:`~recmetrics.data.run.Run` (ids keep their dtype). Files are written
atomically (temporary file + rename), so concurrent notebooks may share a cache.

**Verified loads.** Each file carries the key it was written under and a content checksum
(:func:`run_checksum` of the run, with the extra metadata and the key). :func:`load_run` recomputes
the checksum of what it read and raises :class:`CacheError` when it differs, when the file is not
the one the expected key names (a valid run of another system or fold copied over it) or when it
cannot be read at all; :func:`~recmetrics.runs.run_systems` then refits the run and overwrites the
file. Files of format 1 (written before checksums existed) load when read directly but are never
trusted by the cache: it recomputes them.

Location (:func:`default_cache_dir`): the ``cache_dir`` argument of
:func:`~recmetrics.runs.run_systems`, else ``$RECMETRICS_CACHE``, else
``$XDG_CACHE_HOME/recmetrics/runs``, else ``~/.cache/recmetrics/runs``; the Study score cubes go
to its ``studies`` sub-directory (:mod:`recmetrics.study`). Delete the directory to clear it.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..cache import cache_dir, write_atomic
from ..data.run import Run
from ..errors import InputError

__all__ = ["default_cache_dir", "ratings_hash", "system_spec", "cache_key", "save_run", "load_run", "run_checksum",
           "array_checksum", "CacheError"]

#: format of the cached run files: 2 = content checksum and key in the metadata (1: neither)
_FORMAT = 2
_READABLE = (1, 2)


class CacheError(InputError):
    """A cached artefact cannot be trusted: unreadable, of an unknown format, not the artefact its
    key names, or its content does not match its checksum. The caches recompute on this error."""


def default_cache_dir() -> Path:
    """Where runs are cached when no ``cache_dir`` is given.

    ``$RECMETRICS_CACHE`` if set, else ``$XDG_CACHE_HOME/recmetrics/runs``, else
    ``~/.cache/recmetrics/runs`` (read at each call, so setting the variable takes effect at once).

    Examples
    --------
    >>> import os
    >>> from recmetrics.runs import default_cache_dir
    >>> os.environ["RECMETRICS_CACHE"] = "/tmp/my-runs"
    >>> default_cache_dir()
    PosixPath('/tmp/my-runs')
    >>> del os.environ["RECMETRICS_CACHE"]
    """
    return cache_dir("runs", "RECMETRICS_CACHE")


def ratings_hash(ratings: pd.DataFrame) -> str:
    """Content hash of a ratings table: 32 hex digits identifying the data of a split.

    SHA-256 of the names of the columns present among ``user, item, rating, timestamp`` and of
    pandas' per-row hashes of those columns (``pd.util.hash_pandas_object``, index ignored), with
    the rows sorted by ``(user, item)`` first, so row order does not change the hash but any
    changed value, added or removed row does. Other columns are ignored.

    Examples
    --------
    >>> import pandas as pd
    >>> from recmetrics.runs import ratings_hash
    >>> r = pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5.0, 3.0, 4.0]})
    >>> ratings_hash(r) == ratings_hash(r.iloc[::-1])
    True
    >>> ratings_hash(r) == ratings_hash(r.assign(rating=[5.0, 3.0, 2.0]))
    False
    >>> len(ratings_hash(r))
    32
    """
    cols = [c for c in ("user", "item", "rating", "timestamp") if c in ratings.columns]
    frame = ratings[cols]
    if len(frame):
        frame = frame.sort_values(cols[:2], kind="stable")
    h = hashlib.sha256(",".join(cols).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


_CODE_HASHES: dict[str, str] = {}


def _code_hash(cls) -> str:
    """Hash of the source files a system's runs depend on (its module, the recommender base and
    helpers, and the Run construction), so editing an algorithm invalidates its cached runs."""
    import inspect
    import sys

    files = {inspect.getsourcefile(c) for c in cls.__mro__ if c is not object}
    files |= {inspect.getsourcefile(sys.modules[m]) for m in
              ("recmetrics.recommenders.base", "recmetrics.recommenders._util", "recmetrics.data.run")}
    h = hashlib.sha256()
    for f in sorted(x for x in files if x):
        if f not in _CODE_HASHES:
            _CODE_HASHES[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
        h.update(_CODE_HASHES[f].encode())
    return h.hexdigest()[:16]


def system_spec(rec) -> dict:
    """What identifies a recommender's runs in a cache key.

    ``{"class": "module.Class", "name": rec.name, "params": {hyper-parameter: value},
    "code": hash}``: every hyper-parameter of the class (its defaults filled in from the
    instance), and a 16-hex-digit hash of the source files of the class and its bases, of
    ``recommenders.base``, ``recommenders._util`` and ``data.run`` (memoised per file for the
    session), so editing an algorithm's code changes the key.

    Examples
    --------
    >>> from recmetrics import recommenders
    >>> from recmetrics.runs.cache import system_spec
    >>> spec = system_spec(recommenders.create("UserKNN(k=10)"))
    >>> spec["name"], spec["params"]["k"], len(spec["code"])
    ('UserKNN(k=10)', 10, 16)
    """
    from ..recommenders.registry import defaults

    cls = type(rec)
    params = {k: getattr(rec, k, v) for k, v in defaults(cls).items()}
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "name": rec.name, "params": params,
            "code": _code_hash(cls)}


def cache_key(payload: dict) -> str:
    """File name stem of a cached artefact: 40 hex digits of the SHA-256 of ``payload`` as JSON
    (keys sorted; values JSON cannot hold are written with ``str``), so equal payloads give equal
    keys whatever their key order.

    Examples
    --------
    >>> from recmetrics.runs.cache import cache_key
    >>> cache_key({"fold": 0, "n": 100}) == cache_key({"n": 100, "fold": 0})
    True
    >>> len(cache_key({"fold": 0}))
    40
    """
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _array_bytes(values) -> bytes:
    """Canonical bytes of an array for checksums: its dtype, shape and values. Text and object
    arrays are hashed as their strings (length-prefixed UTF-8), numbers as their machine bytes
    with every NaN written as the same NaN."""
    a = np.asarray(values)
    head = f"{a.dtype.str}|{a.shape}|".encode()
    if a.dtype.kind in "USO":
        text = a.astype(str).ravel()
        lengths = np.char.str_len(text).astype(np.int64) if text.size else np.zeros(0, np.int64)
        return head + lengths.tobytes() + "".join(text.tolist()).encode("utf-8", "surrogatepass")
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.nan, a)
    return head + np.ascontiguousarray(a).tobytes()


def array_checksum(*parts) -> str:
    """SHA-256 (32 hex digits) of arrays and strings, in order, each length-prefixed: the content
    checksum of cached artefacts (strings as UTF-8, arrays by :func:`_array_bytes`).

    >>> import numpy as np
    >>> from recmetrics.runs.cache import array_checksum
    >>> array_checksum(np.array([1.0, np.nan]), "key") == array_checksum(np.array([1.0, np.nan]), "key")
    True
    >>> array_checksum(np.array([1, 2])) == array_checksum(np.array([2, 1]))
    False
    """
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else _array_bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:32]


def run_checksum(run: Run) -> str:
    """Content checksum of a run (32 hex digits): its name, metadata (as JSON), users, items,
    lengths and scores (``None`` and all-NaN scores differ). Equal runs give equal checksums
    whatever the file they came from; any changed id, score, length or name changes it.

    Examples
    --------
    >>> import numpy as np
    >>> import recmetrics as rm
    >>> from recmetrics.runs.cache import run_checksum
    >>> a = rm.Run(np.array([1, 2]), np.array([[10, 11], [12, 10]]), np.array([2, 2]), None, "pop")
    >>> b = rm.Run(np.array([1, 2]), np.array([[10, 11], [12, 11]]), np.array([2, 2]), None, "pop")
    >>> run_checksum(a) == run_checksum(a), run_checksum(a) == run_checksum(b)
    (True, False)
    """
    meta = json.dumps(run.metadata, sort_keys=True, default=str)
    scores = "none" if run.scores is None else np.asarray(run.scores, dtype=np.float64)
    return array_checksum(str(run.name), meta, run.users, run.items,
                          np.asarray(run.lengths, dtype=np.int64), scores)


def _file_checksum(run: Run, extra: dict, key) -> str:
    return array_checksum(run_checksum(run), json.dumps(extra, sort_keys=True, default=str), str(key))


def save_run(run: Run, path, metadata: dict | None = None, *, key: str | None = None) -> Path:
    """Write a run as parquet, atomically, so that :func:`load_run` gives it back identical.

    One row per user: ``user``, ``length`` and the full ``items`` / ``scores`` rows of the
    ``(n_users, depth)`` matrices (padding included; NaN scores when the run has none). The
    schema metadata (key ``recmetrics``) holds the format version, the run's name, depth, id
    dtypes and metadata, ``metadata`` (e.g. fit times) as the ``extra`` that :func:`load_run`
    returns, the cache ``key`` the file is written under (``None`` outside a cache) and the
    content checksum that :func:`load_run` verifies. The parent directory is created; the file
    appears only once complete, with the mode the umask gives new files (a group cache stays shared).

    Returns the path written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import recmetrics as rm
    >>> from recmetrics.runs import save_run, load_run
    >>> run = rm.Run(np.array(["u1", "u2"]), np.array([["a", "b"], ["c", ""]]), np.array([2, 1]),
    ...              None, "mine")
    >>> path = save_run(run, Path(tempfile.mkdtemp()) / "mine.parquet", metadata={"fit_s": 1.5})
    >>> back, extra = load_run(path)
    >>> back.items.tolist(), back.lengths.tolist(), extra
    ([['a', 'b'], ['c', '']], [2, 1], {'fit_s': 1.5})
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    n_users, depth = run.items.shape
    offsets = pa.array(np.arange(n_users + 1, dtype=np.int32) * depth)
    scores = run.scores if run.scores is not None else np.full((n_users, depth), np.nan)
    table = pa.table({
        "user": pa.array(run.users),
        "length": pa.array(run.lengths.astype(np.int64)),
        "items": pa.ListArray.from_arrays(offsets, pa.array(run.items.ravel())),
        "scores": pa.ListArray.from_arrays(offsets, pa.array(np.asarray(scores, dtype=np.float64).ravel())),
    })
    extra = json.loads(json.dumps(metadata or {}, default=str))        # as load_run will read it back
    meta = {"format": _FORMAT, "name": run.name, "depth": depth, "has_scores": run.scores is not None,
            "user_dtype": run.users.dtype.str, "item_dtype": run.items.dtype.str,
            "run_metadata": run.metadata, "extra": extra, "key": key,
            "checksum": _file_checksum(run, extra, key)}
    table = table.replace_schema_metadata({b"recmetrics": json.dumps(meta, default=str).encode()})
    return write_atomic(path, lambda tmp: pq.write_table(table, tmp), ".parquet")  # mode: the umask's


def _restore(values: np.ndarray, dtype_str: str) -> np.ndarray:
    dt = np.dtype(dtype_str)
    if dt.kind in "USO":
        return np.asarray(values.astype(str), dtype=dt) if dt.kind == "U" else values.astype(object)
    return values.astype(dt)


def load_run(path, *, key: str | None = None) -> tuple[Run, dict]:
    """Read a run written by :func:`save_run`; returns ``(run, extra metadata)``.

    The run is identical to the one saved (ids restored to their saved dtype, scores ``None`` when
    the saved run had none): its content checksum is recomputed and compared with the stored one.
    With ``key`` (what the cache expects) the file must also have been written under that key.
    Raises :class:`CacheError` (naming the file and the reason) for an unreadable or damaged file,
    an unknown format version, a checksum or key mismatch, and for a format-1 file (no checksum)
    when a ``key`` is expected. Example: see :func:`save_run`.
    """
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        meta = json.loads(table.schema.metadata[b"recmetrics"])
        fmt = meta.get("format")
    except Exception as exc:  # any damage: not a parquet file, no/garbled metadata, ...
        raise CacheError(f"{path}: not a readable cached run ({type(exc).__name__}: {exc})") from exc
    if fmt not in _READABLE:
        raise CacheError(f"{path}: unsupported cached run format {fmt!r}")
    if key is not None and fmt == 1:
        raise CacheError(f"{path}: cached run of format 1 carries no checksum; it cannot be verified")
    if key is not None and meta.get("key") != key:
        raise CacheError(f"{path}: cached run written under key {meta.get('key')!r}, expected {key!r}")
    try:
        depth = int(meta["depth"])
        n_users = table.num_rows
        users = _restore(table.column("user").to_numpy(zero_copy_only=False), meta["user_dtype"])
        items = table.column("items").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        items = _restore(items, meta["item_dtype"]).reshape(n_users, depth)
        scores = None
        if meta["has_scores"]:
            scores = table.column("scores").combine_chunks().flatten().to_numpy().reshape(n_users, depth)
        run = Run(users, items, table.column("length").to_numpy(), scores, meta["name"], dict(meta["run_metadata"]))
        extra = meta.get("extra", {})
    except Exception as exc:
        raise CacheError(f"{path}: damaged cached run ({type(exc).__name__}: {exc})") from exc
    if fmt != 1 and meta.get("checksum") != _file_checksum(run, extra, meta.get("key")):
        raise CacheError(f"{path}: cached run does not match its checksum (damaged file)")
    return run, extra
