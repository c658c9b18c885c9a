"""One registry of recommenders: ``create("PureSVD(k=50)")`` builds a configured instance."""
from __future__ import annotations

import inspect
import re

from ..errors import InputError, unknown_name
from ..names import format_value, parse_params

_REGISTRY: dict[str, type] = {}
_ALIASES: dict[str, str] = {}
_SPEC_RE = re.compile(r"^\s*(?P<name>[A-Za-z][\w\-\.]*)\s*(?:\((?P<params>.*)\))?\s*$")


def register(name: str, aliases: tuple[str, ...] = ()):
    """Class decorator: register a recommender under ``name`` (its ``__init__`` defaults are the
    default hyper-parameters)."""

    def deco(cls):
        key = name.lower()
        if key in _REGISTRY or key in _ALIASES:
            raise ValueError(f"recommender {name!r} is already registered")
        cls.name = name
        _REGISTRY[key] = cls
        for a in aliases:
            _ALIASES[a.lower()] = key
        return cls

    return deco


def defaults(cls) -> dict:
    sig = inspect.signature(cls.__init__)
    return {p.name: p.default for p in list(sig.parameters.values())[1:]
            if p.default is not inspect.Parameter.empty}


def get(name: str) -> type:
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in _REGISTRY:
        raise unknown_name("recommender", name, names())
    return _REGISTRY[key]


def names() -> list[str]:
    return [c.name for c in _REGISTRY.values()]


def create(spec: str, **overrides):
    """Build a recommender from ``'Name'`` or ``'Name(param=value, ...)'`` plus keyword overrides."""
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
    """The registered recommenders with their default hyper-parameters."""
    import pandas as pd

    return pd.DataFrame([{"name": c.name, "defaults": defaults(c), "description": (c.__doc__ or "").split("\n")[0]}
                         for c in _REGISTRY.values()])
