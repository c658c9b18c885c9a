"""Content hashes that decide whether a chapter is executed again: package, notebook, data, versions.

A chapter's key (:func:`chapter_key`) is the SHA-256 of everything its executed copy depends on:

* the bytes of its source notebook (:func:`file_hash`);
* the parameters injected into it, the report profile and the user's ``-p`` overrides;
* the fingerprint of every dataset its parameters name (:func:`dataset_fingerprint`: a hash of
  the loaded ratings and aspects, so a changed file behind ``path=`` counts, not its name);
* the package: every ``*.py`` file under ``recmetrics/`` (:func:`package_hash`);
* the Python version and the versions of the installed dependencies (:func:`dependency_versions`);
* the keys of the chapters it reads results from (``DEPENDS``), so a changed chapter 5 re-runs
  chapter 4, which reads it.

The key is stored in the executed notebook's metadata (``metadata.recmetrics.key``); the report
executes a chapter again only when the key it would run under differs (or with ``force``).

>>> from recmetrics.report.cache import chapter_key
>>> a = chapter_key({"source": "x", "parameters": {"seed": 0}})
>>> a == chapter_key({"parameters": {"seed": 0}, "source": "x"}), a == chapter_key({"source": "x", "parameters": {"seed": 1}})
(True, False)
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from pathlib import Path
from typing import Any, Mapping

#: The package folder whose sources are hashed (``recmetrics/``).
PACKAGE_DIR = Path(__file__).resolve().parent.parent

#: Extras of ``pyproject.toml`` whose packages can change a chapter's output (not ``dev``: the test
#: tools do not run in the notebooks).
RUNTIME_EXTRAS = (None, "data", "models", "notebooks", "book", "dask")


def file_hash(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def package_hash(package_dir: str | os.PathLike | None = None) -> str:
    """SHA-256 of every ``*.py`` file under ``package_dir`` (default ``recmetrics/``): relative
    paths and bytes, in path order, so any edit, added or removed module changes it.

    >>> len(package_hash())
    64
    """
    root = Path(package_dir) if package_dir else PACKAGE_DIR
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _requirement_names(extras=RUNTIME_EXTRAS) -> list[str]:
    """Distribution names recmetrics declares for ``extras`` (read from its installed metadata:
    the distribution ``recmetrics-eval``, or ``recmetrics`` in an environment installed before the
    distribution took its name)."""
    from importlib import metadata

    from .paths import DISTRIBUTION

    for dist in (DISTRIBUTION, "recmetrics"):
        try:
            requires = metadata.requires(dist) or []
            break
        except metadata.PackageNotFoundError:
            continue
    else:  # running from a checkout that is not installed
        return []
    names = []
    for req in requires:
        spec, _, marker = req.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if (extra.group(1) if extra else None) not in extras:
            continue
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if name and name.group(1).lower() not in ("recmetrics", DISTRIBUTION):
            names.append(name.group(1))
    return sorted(set(names), key=str.lower)


def dependency_versions(extras=RUNTIME_EXTRAS) -> dict[str, str]:
    """``{"python": ..., distribution: version}`` for every dependency of ``extras`` (installed
    metadata only: nothing is imported). A declared but missing package shows ``"not installed"``.

    >>> "numpy" in dependency_versions() and "python" in dependency_versions()
    True
    """
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in _requirement_names(extras):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def dataset_fingerprint(name: str, args: Mapping[str, Any] | None = None, dataset=None) -> dict[str, Any]:
    """What identifies the data a chapter ran on: ``name``, ``args``, the size and a 32-hex-digit
    ``hash`` of the ratings (:func:`recmetrics.runs.cache.ratings_hash`, row order ignored) and of
    the item aspects. Loads the dataset (``rm.datasets.load(name, **args)``) unless ``dataset`` is
    given, so an unknown name or a bad argument raises here, before any notebook runs.

    >>> fp = dataset_fingerprint("movielens-small")
    >>> fp["users"], fp["ratings"], len(fp["hash"])
    (671, 100004, 32)
    """
    from ..data import datasets
    from ..runs.cache import ratings_hash

    args = dict(args or {})
    ds = dataset if dataset is not None else datasets.load(name, **args)
    h = hashlib.sha256(ratings_hash(ds.ratings).encode())
    if ds.aspects is not None:
        h.update(json.dumps(sorted((str(i), sorted(map(str, a))) for i, a in ds.aspects.items())).encode())
    return {"name": ds.name, "args": {k: args[k] for k in sorted(args)}, "users": int(ds.n_users),
            "items": int(ds.n_items), "ratings": int(len(ds.ratings)), "hash": h.hexdigest()[:32]}


def _default(obj):
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    return str(obj)


def canonical(value: Any) -> str:
    """The text a value is keyed by: JSON with sorted keys (values JSON cannot hold as ``str``).
    The content key and the stale-chapter check compare parameter values by it, so they agree on
    what a value is (``-p seed=0`` is the default ``seed = 0``; ``0.5`` and ``0.50`` are one value)."""
    return json.dumps(value, sort_keys=True, default=_default, separators=(",", ":"))


#: Parameters that change how a chapter computes, never what it computes: a Dask cluster and the
#: number of threads or processes give identical values (tested where each is used), so they stay
#: out of the content key (a build on another machine or cluster reuses the chapters).
EXECUTION_ONLY = ("scheduler", "n_jobs")


def keyed(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a chapter that enter its content key: all but :data:`EXECUTION_ONLY`."""
    return {k: v for k, v in parameters.items() if k not in EXECUTION_ONLY}


def chapter_key(inputs: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of ``inputs`` as JSON with sorted keys (values JSON cannot hold as ``str``)."""
    return hashlib.sha256(canonical(inputs).encode()).hexdigest()
