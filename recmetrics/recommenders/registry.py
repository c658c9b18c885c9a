"""One registry of recommenders: ``create("PureSVD(k=50)")`` builds a configured instance."""
from __future__ import annotations

import inspect
import re

from ..errors import InputError, unknown_name
from ..names import Registry, format_value, parse_params

_RECOMMENDERS = Registry("recommender")  # lower-cased name or alias -> class
_SPEC_RE = re.compile(r"^\s*(?P<name>[A-Za-z][\w\-\.]*)\s*(?:\((?P<params>.*)\))?\s*$")


def register(name: str, aliases: tuple[str, ...] = ()):
    """Class decorator: register a recommender under ``name`` (its ``__init__`` defaults are the
    default hyper-parameters).

    Names and ``aliases`` are case-insensitive and registered once (a taken name raises
    ``ValueError``); the class gets ``name`` as its ``name`` attribute.

    >>> from recmetrics.recommenders import Recommender, create
    >>> @register("Example-Pop")
    ... class ExamplePop(Recommender):
    ...     def __init__(self, shrink: int = 0):
    ...         self.shrink = shrink
    >>> create("example-pop(shrink=5)").name, ExamplePop.name
    ('Example-Pop(shrink=5)', 'Example-Pop')
    >>> _ = _RECOMMENDERS.entries.pop("example-pop")  # (keep the registry as it was)
    """

    def deco(cls):
        _RECOMMENDERS.add(name, cls, aliases)
        cls.name = name
        return cls

    return deco


def defaults(cls) -> dict:
    """The default hyper-parameters of a recommender class: its ``__init__`` keyword defaults.

    >>> from recmetrics.recommenders import get
    >>> defaults(get("PureSVD"))
    {'k': 50, 'seed': 0}
    """
    sig = inspect.signature(cls.__init__)
    return {p.name: p.default for p in list(sig.parameters.values())[1:]
            if p.default is not inspect.Parameter.empty}


def get(name: str) -> type:
    """The recommender class registered as ``name`` or one of its aliases (case-insensitive).

    An unknown name raises :class:`~recmetrics.errors.UnknownNameError` suggesting the closest.

    >>> get("puresvd").name
    'PureSVD'
    """
    return _RECOMMENDERS.get(name)


def names() -> list[str]:
    """The registered recommender names (not their aliases), in registration order.

    >>> import recmetrics as rm
    >>> rm.recommenders.names()[:2]
    ['Random', 'Pop']
    """
    return _RECOMMENDERS.names()


def create(spec: str, **overrides):
    """Build a recommender from ``'Name'`` or ``'Name(param=value, ...)'`` plus keyword overrides.

    Parameters not given keep the class defaults (:func:`defaults`); values are typed after the
    defaults. The instance's ``name`` shows the parameters that differ from the defaults, so it
    is itself a spec that :func:`create` accepts. An unknown name or parameter raises
    :class:`~recmetrics.errors.UnknownNameError` suggesting the closest.

    >>> import recmetrics as rm
    >>> rm.recommenders.create("PureSVD(k=20)", seed=3).name
    'PureSVD(k=20,seed=3)'
    >>> rm.recommenders.create("pop").name
    'Pop'
    """
    m = _SPEC_RE.match(spec) if isinstance(spec, str) else None
    if not m:
        raise InputError(f"cannot parse recommender {spec!r}; expected Name or Name(param=value,...)")
    cls = get(m.group("name"))
    d = defaults(cls)
    params = parse_params(m.group("params"), d, spec, cls.name)
    for k in overrides:
        if k not in d:
            raise unknown_name(f"parameter of {cls.name}", k, d)
    params.update(overrides)
    try:
        rec = cls(**params)
    except InputError:  # already names the system and the hyper-parameter
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(f"invalid hyper-parameters for {cls.name}: {exc}") from None
    shown = [(k, v) for k, v in params.items() if v != d.get(k)]
    rec.name = cls.name + ("(" + ",".join(f"{k}={format_value(v)}" for k, v in shown) + ")" if shown else "")
    return rec


def table():
    """The registered recommenders with their default hyper-parameters.

    Columns ``name, defaults, description`` (the first line of the class docstring), in
    registration order.

    >>> import recmetrics as rm
    >>> rm.recommenders.table().set_index("name").loc["PureSVD", "defaults"]
    {'k': 50, 'seed': 0}
    """
    return _RECOMMENDERS.table(lambda c: {"name": c.name, "defaults": defaults(c),
                                          "description": (c.__doc__ or "").split("\n")[0]})
