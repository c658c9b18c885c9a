"""Open choices a paper leaves to the reader, and verdicts that must survive every reading.

Where a paper does not say how it did something that moves the result — how k-fold users are
pooled for the tests (``concat`` vs ``mean``, paper 000 is silent) — a chapter computes its
results under every reading and :func:`assess_choices` assesses the claims under each: a claim
keeps its verdict when every reading gives the same one, and is ``inconclusive`` when the verdict
flips with the choice (the detail says which reading gave what).

Example::

    >>> from recmetrics.meta.findings import Claim, Evidence
    >>> c = Claim("x", "000", "A beats B", "Table 3",
    ...           check=lambda r: Evidence("agrees" if r["gap"] > 0 else "disagrees", r["gap"], f"gap {r['gap']}"))
    >>> t = assess_choices([c], {"concat": {"gap": 0.2}, "mean": {"gap": -0.1}})
    >>> t.verdict.iloc[0], t.our_evidence.iloc[0]
    ('inconclusive', 'flips with pool: concat → agrees (gap 0.2); mean → disagrees (gap -0.1)')
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Iterator, Mapping

from ..errors import InputError

__all__ = ["assess_choices", "joint_check", "same_inputs"]


class _Watched(Mapping):
    """A read-only view of a results mapping that records every key a check reads."""

    def __init__(self, data: Mapping[str, Any], seen: set):
        self._data, self._seen = data, seen

    def __getitem__(self, key):
        self._seen.add(key)
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key) -> bool:
        self._seen.add(key)
        return key in self._data


def _watching(claim, seen: set):
    return dataclasses.replace(claim, check=lambda results, _c=claim.check: _c(_Watched(results, seen)))


def _same(a: Any, b: Any) -> bool:
    """The same result: one object, equal plain values, or equal pandas/numpy objects."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if a is None or isinstance(a, (bool, int, float, str, tuple)):
        return a == b or (isinstance(a, float) and a != a and b != b)
    equals = getattr(a, "equals", None)
    if callable(equals):
        try:
            return bool(equals(b))
        except Exception:
            return False
    return False


def same_inputs(keys: Iterable[str], results_by_choice: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether the results ``keys`` are the same under every reading (present or absent alike)."""
    tables = list(results_by_choice.values())
    for key in keys:
        present = [key in t for t in tables]
        if any(present) and not all(present):
            return False
        if all(present) and not all(_same(tables[0][key], t[key]) for t in tables[1:]):
            return False
    return True


def joint_check(claim, results_by_choice: Mapping[str, Mapping[str, Any]]):
    """The rule of :func:`assess_choices` for one claim as a check: its verdict under every reading,
    ``inconclusive`` when they differ (a reading whose result is missing reads ``inconclusive``)."""
    from ..meta.comparisons import REDRAW
    from ..meta.findings import Evidence

    def check(_):
        vs = set()
        redraw = REDRAW.get()
        for r in results_by_choice:
            if hasattr(redraw, "restart"):    # a null replay: every reading reads the same draws
                redraw.restart()
            try:
                vs.add(str(claim.check(results_by_choice[r]).verdict))
            except KeyError:
                vs.add("inconclusive")
        return Evidence(vs.pop() if len(vs) == 1 else "inconclusive", None, "")
    return check


def assess_choices(claims: Iterable, results_by_choice: Mapping[str, Mapping[str, Any]],
                   context: Mapping[str, Any] | None = None, deviations: Iterable[str] | None = None,
                   *, choice: str = "pool", draws: int | None = None):
    """:func:`~recmetrics.meta.findings.assess` under every reading of one open ``choice``.

    ``results_by_choice``: ``{reading: results}`` (e.g. ``{"concat": {...}, "mean": {...}}``).
    One row per claim, as :func:`~recmetrics.meta.findings.assess`: the shared verdict when every
    reading agrees (the detail and value of the first reading, with "(same verdict with <choice> =
    <others>)" when the results the check read differ between the readings, or "(<choice> does not
    enter these results)" when they are the same under all of them), else ``inconclusive`` with each
    reading's verdict and detail; a column ``<choice>_verdicts`` keeps every reading's verdict
    (``"concat: agrees; mean: agrees"``, or ``"any: agrees"`` when the choice does not enter). The
    row's firmness is that of this rule: every reading's check replayed under one redraw of the
    estimates (``draws`` as :func:`~recmetrics.meta.findings.assess`).
    """
    from ..meta.findings import DRAWS, assess, keep_for_replay, row_firmness
    from ..meta.firmness import replay_session

    draws = DRAWS if draws is None else draws
    claims = list(claims)
    readings = list(results_by_choice)
    if not readings:
        raise InputError(f"give the results of at least one reading of {choice!r}")
    read: list[set] = [set() for _ in claims]
    keep_for_replay(claims, results_by_choice, context, choice=choice)
    tables = {r: assess([_watching(c, seen) for c, seen in zip(claims, read)], results_by_choice[r], context,
                        deviations, draws=0, keep=False) for r in readings}
    first = tables[readings[0]].copy()
    per_row = []
    for i in range(len(first)):
        verdicts = {r: tables[r].verdict.iloc[i] for r in readings}
        if len(readings) == 1:
            per_row.append(f"{readings[0]}: {verdicts[readings[0]]}")
            continue
        if len(set(verdicts.values())) == 1 and same_inputs(read[i], results_by_choice):
            per_row.append(f"any: {verdicts[readings[0]]}")
            first.loc[first.index[i], "our_evidence"] = (
                f"{first.our_evidence.iloc[i]} ({choice} does not enter these results)")
            continue
        per_row.append("; ".join(f"{r}: {v}" for r, v in verdicts.items()))
        if len(set(verdicts.values())) == 1:
            first.loc[first.index[i], "our_evidence"] = (
                f"{first.our_evidence.iloc[i]} (same verdict with {choice} = {', '.join(readings[1:])})")
        else:
            first.loc[first.index[i], "verdict"] = "inconclusive"
            first.loc[first.index[i], "our_evidence"] = f"flips with {choice}: " + "; ".join(
                f"{r} → {verdicts[r]} ({tables[r].our_evidence.iloc[i]})" for r in readings)
    first[f"{choice}_verdicts"] = per_row
    # the firmness of the row's own rule: every reading replayed under one redraw, a flip is inconclusive
    with replay_session():   # the rows' replays share the summaries of the results they read
        for i, claim in enumerate(claims):
            joint = joint_check(claim, results_by_choice)
            computed = not str(first.our_evidence.iloc[i]).startswith("not computed here")
            firm, basis = row_firmness(joint, {}, first.verdict.iloc[i] if computed else None, key=claim.id,
                                       context=context, draws=draws)
            first.loc[first.index[i], "firmness"], first.loc[first.index[i], "firmness_basis"] = firm, basis
    return first
