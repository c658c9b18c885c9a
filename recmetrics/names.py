"""Names in the registries: one :class:`Registry` shape and the ``Name(param=value, ...)`` syntax.

The four registries — metrics (:mod:`recmetrics.metrics.registry`), recommenders
(:mod:`recmetrics.recommenders.registry`), datasets (:mod:`recmetrics.data.datasets.registry`) and
the named evaluation designs (:mod:`recmetrics.protocols.designs`) — hold their entries in a
:class:`Registry`: names are normalised to a key (:func:`fold`: case-insensitive; datasets use
:func:`slug`, which also treats ``_`` as ``-``), aliases resolve to a key, an unknown name raises
:class:`~recmetrics.errors.UnknownNameError` suggesting the closest registered names, and
:meth:`Registry.table` lists the entries as a DataFrame. :func:`parse_params` reads the
``param=value`` part of a spec string (``"PureSVD(k=50)"``, ``"ERR@10(max_rating=5)"``) typed
after the defaults.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from .errors import InputError, unknown_name


def fold(name: str) -> str:
    """Registry key of a case-insensitive name (metrics, recommenders, designs): ``name.lower()``.

    >>> fold("nDCG")
    'ndcg'
    """
    return name.lower()


def slug(name: str) -> str:
    """Registry key of a dataset name: surrounding spaces dropped, case folded, ``_`` read as ``-``.

    >>> slug(" MovieLens_Small ")
    'movielens-small'
    """
    return name.strip().lower().replace("_", "-")


class Registry:
    """Named entries of one kind, registered once, looked up by normalised name or alias.

    ``kind`` is the word used in messages ("metric", "dataset", ...). ``normalise`` maps a name to
    its key (default :func:`fold`, case-insensitive). Registering a name (or alias) that is
    already taken raises ``ValueError`` unless ``replace=True`` (the datasets registry, where
    registering again replaces the loader). Entries keep their registration order, which is the
    order of :meth:`names` and :meth:`table`.

    ``entries`` (key -> entry) and ``aliases`` (alias key -> key) are plain dicts.

    >>> reg = Registry("colour")
    >>> reg.add("Red", "#f00", aliases=("rouge",))
    '#f00'
    >>> reg.get("ROUGE"), reg.find("red"), reg.names()
    ('#f00', 'Red', ['Red'])
    >>> reg.get("redd")
    Traceback (most recent call last):
    ...
    recmetrics.errors.UnknownNameError: unknown colour 'redd'; did you mean 'Red'? (known: Red)
    """

    def __init__(self, kind: str, normalise: Callable[[str], str] = fold, replace: bool = False):
        self.kind = kind
        self.normalise = normalise
        self.replace = replace
        self.entries: dict[str, Any] = {}
        self.aliases: dict[str, str] = {}
        self._names: dict[str, str] = {}  # key -> the name as registered

    def key(self, name: str) -> str:
        """The normalised key of ``name``; a non-string name raises :class:`InputError`.

        >>> Registry("dataset").key(3)
        Traceback (most recent call last):
        ...
        recmetrics.errors.InputError: dataset name must be a string, got int 3
        """
        if not isinstance(name, str):
            raise InputError(f"{self.kind} name must be a string, got {type(name).__name__} {name!r}")
        return self.normalise(name)

    def new_key(self, name: str) -> str:
        """The key under which ``name`` can be registered (what :meth:`add` checks first).

        An empty name raises :class:`InputError`; a taken name or alias raises ``ValueError``
        (``"metric 'P' is already registered"``) unless the registry was built with ``replace=True``.

        >>> Registry("dataset", normalise=slug).new_key(" ")
        Traceback (most recent call last):
        ...
        recmetrics.errors.InputError: dataset name must be a non-empty string
        """
        key = self.key(name)
        if not key:
            raise InputError(f"{self.kind} name must be a non-empty string")
        if not self.replace and (key in self.entries or key in self.aliases):
            raise ValueError(f"{self.kind} {name!r} is already registered")
        return key

    def add(self, name: str, entry: Any, aliases: Iterable[str] = ()) -> Any:
        """Register ``entry`` under ``name`` and its ``aliases`` (checked by :meth:`new_key`);
        returns ``entry``.

        >>> reg = Registry("metric")
        >>> reg.add("P", 1, aliases=("precision",))
        1
        >>> reg.add("precision", 2)
        Traceback (most recent call last):
        ...
        ValueError: metric 'precision' is already registered
        """
        key = self.new_key(name)
        self.entries[key] = entry
        self._names[key] = name
        for a in aliases:
            self.aliases[self.key(a)] = key
        return entry

    def _lookup(self, name: str, known: Iterable[str] | None) -> str:
        key = self.key(name)
        key = self.aliases.get(key, key)
        if key not in self.entries:
            raise unknown_name(self.kind, name, self.names() if known is None else known)
        return key

    def find(self, name: str, known: Iterable[str] | None = None) -> str:
        """The registered spelling of ``name`` (case and aliases resolved).

        An unknown name raises :class:`~recmetrics.errors.UnknownNameError` suggesting the closest
        of ``known`` (default: the registered names).

        >>> reg = Registry("design")
        >>> reg.add("P1R", {"m": 10})
        {'m': 10}
        >>> reg.find("p1r")
        'P1R'
        """
        return self._names[self._lookup(name, known)]

    def get(self, name: str, known: Iterable[str] | None = None) -> Any:
        """The entry registered under ``name`` or one of its aliases (case per ``normalise``).

        An unknown name raises :class:`~recmetrics.errors.UnknownNameError` suggesting the closest
        of ``known`` (default: the registered names).

        >>> reg = Registry("recommender")
        >>> reg.add("PureSVD", "the class")
        'the class'
        >>> reg.get("puresvd")
        'the class'
        """
        return self.entries[self._lookup(name, known)]

    def names(self) -> list[str]:
        """The registered names (not the aliases), in registration order.

        >>> reg = Registry("metric")
        >>> _ = reg.add("P", 1), reg.add("nDCG", 2)
        >>> reg.names()
        ['P', 'nDCG']
        """
        return [self._names[k] for k in self.entries]

    def table(self, row: Callable[[Any], Mapping[str, Any]], columns: Iterable[str] | None = None):
        """The entries as a DataFrame with one row ``row(entry)`` (a dict: column -> value) per entry.

        ``columns`` fixes the columns (and keeps them for an empty registry); by default they are
        the keys of the rows. pandas is imported here, not at package import.

        >>> reg = Registry("metric")
        >>> _ = reg.add("P", (0.0, 1.0))
        >>> reg.table(lambda bounds: {"range": bounds})
                range
        0  (0.0, 1.0)
        """
        import pandas as pd

        return pd.DataFrame([row(e) for e in self.entries.values()],
                            columns=None if columns is None else list(columns))


def parse_params(text: str | None, defaults: Mapping[str, Any], context: str, owner: str) -> dict:
    """Parse ``'a=1,b=x'`` into a dict typed after ``defaults`` (unknown names get a suggestion).

    ``context`` (the whole spec string) and ``owner`` (the metric, recommender or design) name the
    place in error messages. Values are converted by :func:`coerce`; parameters not written are
    absent from the result (the caller fills in the defaults).

    >>> parse_params("k=50", {"k": 10, "seed": 0}, "PureSVD(k=50)", "PureSVD")
    {'k': 50}
    >>> parse_params("q=1", {"k": 10, "seed": 0}, "PureSVD(q=1)", "PureSVD")
    Traceback (most recent call last):
    ...
    recmetrics.errors.UnknownNameError: unknown parameter of PureSVD 'q' (known: k, seed)
    """
    params: dict = {}
    if text is None or not text.strip():
        return params
    for part in text.split(","):
        if "=" not in part:
            raise InputError(f"parameter {part.strip()!r} in {context!r} must be written name=value")
        name, value = (s.strip() for s in part.split("=", 1))
        if name not in defaults:
            raise unknown_name(f"parameter of {owner}", name, defaults)
        params[name] = coerce(defaults[name], value, context, name)
    return params


def coerce(default: Any, value: str, context: str, name: str) -> Any:
    """Convert ``value`` to the type of ``default`` (bool, int, float or str; None accepts any).

    Booleans are written ``true``/``false``/``1``/``0``; a ``None`` default tries int, then
    float, then keeps the text; strings lose surrounding quotes.

    >>> coerce(0.0, "5", "ERR(max_rating=5)", "max_rating"), coerce(True, "false", "x", "b")
    (5.0, False)
    >>> coerce(None, "3", "x", "n"), coerce("1R", "'AR'", "x", "relevant")
    (3, 'AR')
    """
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        if default is None:
            for cast in (int, float):
                try:
                    return cast(value)
                except ValueError:
                    pass
        return value.strip("'\"")
    except ValueError:
        raise InputError(f"parameter {name}={value!r} in {context!r} must be a {type(default).__name__}") from None


def format_value(v: Any) -> str:
    """A parameter value as written in a spec string, so that it parses back.

    >>> format_value(0.5), format_value(10), format_value("1R")
    ('0.5', '10', "'1R'")
    """
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)
