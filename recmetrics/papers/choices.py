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

from typing import Any, Iterable, Mapping

from ..errors import InputError

__all__ = ["assess_choices"]


def assess_choices(claims: Iterable, results_by_choice: Mapping[str, Mapping[str, Any]],
                   context: Mapping[str, Any] | None = None, deviations: Iterable[str] | None = None,
                   *, choice: str = "pool"):
    """:func:`~recmetrics.meta.findings.assess` under every reading of one open ``choice``.

    ``results_by_choice``: ``{reading: results}`` (e.g. ``{"concat": {...}, "mean": {...}}``).
    One row per claim, as :func:`~recmetrics.meta.findings.assess`: the shared verdict when every
    reading agrees (the detail and value of the first reading, with "same under <others>"), else
    ``inconclusive`` with each reading's verdict and detail; a column ``<choice>_verdicts`` keeps
    every reading's verdict (``"concat: agrees; mean: agrees"``).
    """
    from ..meta.findings import assess

    claims = list(claims)
    readings = list(results_by_choice)
    if not readings:
        raise InputError(f"give the results of at least one reading of {choice!r}")
    tables = {r: assess(claims, results_by_choice[r], context, deviations) for r in readings}
    first = tables[readings[0]].copy()
    per_row = []
    for i in range(len(first)):
        verdicts = {r: tables[r].verdict.iloc[i] for r in readings}
        per_row.append("; ".join(f"{r}: {v}" for r, v in verdicts.items()))
        if len(readings) == 1:
            continue
        if len(set(verdicts.values())) == 1:
            first.loc[first.index[i], "our_evidence"] = (
                f"{first.our_evidence.iloc[i]} (same verdict with {choice} = {', '.join(readings[1:])})")
        else:
            first.loc[first.index[i], "verdict"] = "inconclusive"
            first.loc[first.index[i], "our_evidence"] = f"flips with {choice}: " + "; ".join(
                f"{r} → {verdicts[r]} ({tables[r].our_evidence.iloc[i]})" for r in readings)
    first[f"{choice}_verdicts"] = per_row
    return first
