"""The dataset registry: :func:`register` a loader under a name, then :func:`list`, :func:`load`
and :func:`describe` by name.

Names are case-insensitive, ``_`` reads as ``-`` and aliases resolve (``ML_1M`` ->
``movielens-1m``); an unknown name raises :class:`~recmetrics.errors.UnknownNameError` suggesting
the closest. Registering a name again replaces its loader. The loaders themselves live in
:mod:`.embedded`, :mod:`.movielens`, :mod:`.files` and :mod:`.simulated`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pandas as pd

from ...errors import InputError
from ...names import Registry, slug
from .record import Dataset

__all__ = ["DEFAULT", "register", "list", "load", "describe"]

DEFAULT = "movielens-small"


@dataclass(frozen=True)
class _Entry:
    name: str
    loader: Callable[..., Dataset]
    description: str
    source: str
    aliases: tuple[str, ...]


_DATASETS = Registry("dataset", normalise=slug, replace=True)
_REGISTRY: dict[str, _Entry] = _DATASETS.entries  # normalised name -> _Entry


def register(name: str, description: str = "", source: str = "",
             aliases: Iterable[str] = ()) -> Callable[[Callable[..., Dataset]], Callable[..., Dataset]]:
    """Decorator registering a loader function under ``name`` (case-insensitive; ``_`` == ``-``).

    The loader is called as ``loader(**kw)`` by :func:`load` and must return a :class:`Dataset`.
    Registering an existing name replaces it. ``description`` defaults to the first paragraph
    of the loader's docstring; ``source`` says where the data come from; ``aliases`` are other
    names for it.

    >>> import pandas as pd
    >>> import recmetrics as rm
    >>> @rm.datasets.register("toy-example", source="three ratings typed in")
    ... def toy():
    ...     return rm.datasets.from_frame(pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1],
    ...                                                 "rating": [5.0, 3.0, 4.0]}), "toy-example")
    >>> rm.datasets.load("Toy_Example")
    Dataset('toy-example': 2 users, 2 items, 3 ratings, scale 3-5, no aspects)
    >>> _ = _REGISTRY.pop("toy-example")  # (keep the registry as it was)
    """
    key = _DATASETS.new_key(name)

    def deco(fn: Callable[..., Dataset]) -> Callable[..., Dataset]:
        doc = description or (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
        entry = _Entry(key, fn, doc, source, tuple(_DATASETS.key(a) for a in aliases))
        _DATASETS.add(key, entry, entry.aliases)
        return fn

    return deco


def _entry(name: str) -> _Entry:
    return _DATASETS.get(name)


def list() -> pd.DataFrame:  # noqa: A001 - the public name asked for by the API (rm.datasets.list())
    """Registered datasets as a DataFrame with columns ``name, description, source``.

    One row per dataset in registration order: the default (``movielens-small``) first, then the
    other embedded set, the MovieLens releases, the file loaders and the simulated set.

    >>> import recmetrics as rm
    >>> rm.datasets.list()["name"].tolist()[:3]
    ['movielens-small', 'insteval', 'movielens-100k']
    """
    return _DATASETS.table(lambda e: {"name": e.name, "description": e.description, "source": e.source},
                           columns=["name", "description", "source"])


def load(name: str = DEFAULT, **kw: Any) -> Dataset:
    """Load the registered dataset ``name``; keyword arguments go to its loader.

    Unknown names raise :class:`~recmetrics.errors.UnknownNameError` suggesting the closest.
    File-based datasets need ``path=``. A keyword the loader does not take raises
    :class:`~recmetrics.errors.InputError` listing the ones it takes. The default is
    ``movielens-small`` (embedded, nothing is downloaded).

    >>> import recmetrics as rm
    >>> rm.datasets.load()
    Dataset('movielens-small': 671 users, 9,066 items, 100,004 ratings, scale 0.5-5, 19 aspect labels, timestamps)
    >>> rm.datasets.load("InstEval").n_users
    2972
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
    """Short human-readable description of a registered dataset and how to load it.

    Lines: ``name: description``, ``source:``, ``aliases:`` (when there are any) and ``usage:``
    (the :func:`load` call with the loader's arguments).

    >>> import recmetrics as rm
    >>> print(rm.datasets.describe("ml_1m").splitlines()[-1])
    usage: recmetrics.datasets.load('movielens-1m', path=..., duplicates=..., encoding=...)
    """
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
