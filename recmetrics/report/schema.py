"""What a chapter parameter accepts: one :class:`Rule` per parameter, one schema (``{name: Rule}``)
per chapter.

Each chapter's schema is written once, beside the values the report gives it: the main book's in
:data:`recmetrics.report.profiles.SCHEMAS`, the own-runs book's in
:data:`recmetrics.report.own_runs.SCHEMAS`; the defaults stay in the notebook's ``parameters`` cell.
A rule holds the type, the range or the allowed values, and says in words what it accepts. Where a
library function already defines what is valid (metric names, recommender specs, robustness grids,
``n_jobs``), the rule calls it instead of restating it, so the planning check and the library never
disagree.

At planning (:func:`recmetrics.report.plan.make_plan`, :func:`recmetrics.report.own_runs.plan`)
every value a chapter receives is checked against its schema: a ``-p`` value the schema refuses is
one line naming the parameter and what it accepts (``recmetrics report`` exits 2 before any kernel
starts or any file is written). A notebook whose chapter has no written schema (one added to
``notebooks/``) gets one inferred from its defaults (:func:`inferred`): each value must have its
default's type, ``None`` only where the default is ``None``.

>>> check({"folds": integer(1)}, "folds", 0)
Traceback (most recent call last):
...
recmetrics.errors.InputError: -p folds=0: expected an integer >= 1
>>> check({"alpha": share()}, "alpha", 1)
Traceback (most recent call last):
...
recmetrics.errors.InputError: -p alpha=1: expected a number between 0 and 1 (exclusive)
>>> check({"pool": choice("concat", "mean")}, "pool", "mean")
'mean'
"""
from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..errors import InputError

__all__ = ["Rule", "check", "integer", "number", "share", "text", "choice", "subset", "list_of", "by",
           "arguments", "n_jobs", "inferred", "loaded", "refuse", "as_text"]


@dataclass(frozen=True)
class Rule:
    """What one parameter accepts: ``accepts`` in words (or a function giving them, for allowed
    values read from the library when first needed), ``convert`` the value as the chapter receives
    it (``1`` -> ``1.0`` for a number) or :class:`~recmetrics.errors.InputError`, and whether ``None``
    is accepted too (``none``)."""

    accepts: str | Callable[[], str]
    convert: Callable[[Any], Any]
    none: bool = False

    def words(self) -> str:
        text = self.accepts() if callable(self.accepts) else self.accepts
        return f"{text}, or None" if self.none else text

    def __or__(self, other):
        """``rule | None``: the same rule, ``None`` accepted too."""
        if other is not None:
            return NotImplemented
        return Rule(self.accepts, self.convert, True)


class _Refused(Exception):
    """A value a rule does not accept (the detail, if any, says why)."""


def check(schema: Mapping[str, Rule], key: str, value: Any, what: str = "-p") -> Any:
    """``value`` as chapter parameter ``key`` receives it, or one-line
    :class:`~recmetrics.errors.InputError` naming ``what key=value`` and what the rule accepts."""
    rule = schema[key]
    if value is None and rule.none:
        return None
    try:
        return rule.convert(value)
    except (_Refused, InputError) as exc:
        detail = " ".join(str(exc).split())
    raise InputError(f"{what} {key}={value!r}: expected {rule.words()}" + (f" ({detail})" if detail else ""))


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def integer(low: int | None = None, high: int | None = None) -> Rule:
    """An integer in ``[low, high]`` (``bool`` is no integer here)."""
    words = "an integer" + (f" >= {low}" if low is not None else "") + (f" <= {high}" if high is not None else "")

    def convert(v):
        if not _is_int(v) or (low is not None and v < low) or (high is not None and v > high):
            raise _Refused()
        return int(v)
    return Rule(words, convert)


def number(low: float | None = None, high: float | None = None, *, open_low: bool = False,
           open_high: bool = False, words: str | None = None) -> Rule:
    """A finite number in the interval from ``low`` to ``high`` (ends open when asked), as a float."""
    if words is None:
        parts = ([f"{'>' if open_low else '>='} {low:g}"] if low is not None else []) + \
                ([f"{'<' if open_high else '<='} {high:g}"] if high is not None else [])
        words = "a finite number" + (" " + " and ".join(parts) if parts else "")

    def convert(v):
        if not _is_number(v) or not math.isfinite(v):
            raise _Refused()
        if low is not None and (v <= low if open_low else v < low):
            raise _Refused()
        if high is not None and (v >= high if open_high else v > high):
            raise _Refused()
        return float(v)
    return Rule(words, convert)


def share() -> Rule:
    """A number strictly between 0 and 1 (a significance level, a test share, a confidence)."""
    return number(0, 1, open_low=True, open_high=True, words="a number between 0 and 1 (exclusive)")


def as_text(v) -> str:
    """A bare word ``-p focus=5`` is read as the literal 5: a scalar becomes its text."""
    if isinstance(v, str):
        return v
    if _is_number(v):
        return str(v)
    raise _Refused()


def text(words: str = "a non-empty text") -> Rule:
    def convert(v):
        v = as_text(v)
        if not v.strip():
            raise _Refused()
        return v
    return Rule(words, convert)


def loaded(module: str, attribute: str) -> Callable[[], Any]:
    """A function returning ``module.attribute`` (imported when first called: ``recmetrics report
    --help`` and planning import no more than they need)."""
    return lambda: getattr(importlib.import_module(module), attribute)


def _values(values) -> tuple:
    return tuple(values() if callable(values) else values)


def _listed(values) -> str:
    return ", ".join(repr(v) for v in _values(values))


def choice(*values, of: Callable[[], Any] | None = None) -> Rule:
    """One of ``values`` (or of the library's tuple ``of()`` returns, read when first checked)."""
    allowed = of if of is not None else values

    def convert(v):
        if not isinstance(v, str) and v is not None and _is_number(v):
            v = str(v)
        if v not in _values(allowed):
            raise _Refused()
        return v
    return Rule(lambda: f"one of {_listed(allowed)}", convert)


def list_of(item: Rule, words: str | None = None, *, empty: bool = False) -> Rule:
    """A list (or tuple) of values each accepted by ``item``; non-empty unless ``empty``."""
    def convert(v):
        if not isinstance(v, (list, tuple)) or (not v and not empty):
            raise _Refused()
        out = []
        for i, x in enumerate(v):
            try:
                out.append(item.convert(x))
            except (_Refused, InputError) as exc:
                raise _Refused(f"item {i}, {x!r}" + (f": {exc}" if str(exc) else "")) from None
        return out
    lead = "a list" if empty else "a non-empty list"
    return Rule(words or (lambda: f"{lead}, each {item.words()}"), convert)


def subset(*values, of: Callable[[], Any] | None = None) -> Rule:
    """A non-empty list of distinct values, each one of ``values`` (or of ``of()``)."""
    allowed = of if of is not None else values
    one = choice(*values, of=of)

    def convert(v):
        out = list_of(one).convert(v)
        if len(set(out)) != len(out):
            raise _Refused("a value given twice")
        return out
    return Rule(lambda: f"a non-empty list of distinct values among {_listed(allowed)}", convert)


def by(validate: Callable[[Any], Any], words: str, *, keep: bool = True) -> Rule:
    """A value the library function ``validate`` accepts (it raises
    :class:`~recmetrics.errors.InputError` saying why not); ``keep``: the chapter receives the value
    as given, not what ``validate`` returns."""
    def convert(v):
        try:
            out = validate(v)
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, InputError):
                raise
            raise _Refused() from None
        return v if keep else out
    return Rule(words, convert)


def arguments() -> Rule:
    """A dict of keyword arguments (``--dataset-arg``: each key a Python name)."""
    def convert(v):
        if not isinstance(v, dict) or not all(isinstance(k, str) and k.isidentifier() for k in v):
            raise _Refused()
        return v
    return Rule("a dict of argument names to values", convert)


def n_jobs() -> Rule:
    """Workers of a chapter's parallel loops: :func:`recmetrics.checks.n_jobs` decides."""
    def validate(v):
        from ..checks import n_jobs as check_n_jobs

        if v is None:
            raise _Refused()
        try:
            return check_n_jobs(v)
        except InputError:
            raise _Refused() from None   # the rule's words say what it accepts
    return by(validate, "an integer >= 1, or -1 for every core", keep=False)


# ------------------------------------------------------------------ a schema inferred from defaults
def _type_name(value) -> str:
    if isinstance(value, (list, tuple)):
        inner = sorted({type(v).__name__ for v in value})
        return f"a list of {'/'.join(inner)}" if inner else "a list"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def inferred(default: Any) -> Rule:
    """The rule of a parameter whose chapter has no written schema: a value of its default's type
    (a number where a float is declared; a list of the default's item type; anything where the
    default is ``None``, an expression or a mixed list)."""
    if default is None:
        return Rule("any value", lambda v: v, none=True)
    if isinstance(default, bool):
        return Rule("True or False", lambda v: v if isinstance(v, bool) else refuse())
    if isinstance(default, int):
        return integer()
    if isinstance(default, float):
        return Rule("a number", lambda v: float(v) if _is_number(v) else refuse())
    if isinstance(default, str):
        return Rule("a text", as_text)
    if isinstance(default, (list, tuple)):
        kinds = {type(d) for d in default}
        if len(kinds) != 1:
            return Rule("a list", lambda v: v if isinstance(v, (list, tuple)) else refuse())
        item = Rule("a text", lambda v: v if isinstance(v, str) else refuse()) if isinstance(default[0], str) \
            else inferred(default[0])   # a bare word becomes a text; an item of a list does not
        return list_of(item, f"{_type_name(default)}", empty=True)
    if isinstance(default, dict):
        return Rule("a dict", lambda v: v if isinstance(v, dict) else refuse())
    return Rule("any value", lambda v: v)


def refuse():
    """Refuse the value being checked (inside a rule's ``convert`` or a :func:`by` validator)."""
    raise _Refused()
