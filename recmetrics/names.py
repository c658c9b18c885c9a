"""Parsing of ``Name(param=value, ...)`` strings shared by the registries (metrics, recommenders)."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import InputError, unknown_name


def parse_params(text: str | None, defaults: Mapping[str, Any], context: str, owner: str) -> dict:
    """Parse ``'a=1,b=x'`` into a dict typed after ``defaults`` (unknown names get a suggestion)."""
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
    """Convert ``value`` to the type of ``default`` (bool, int, float or str; None accepts any)."""
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
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)
