"""Paper claims as data, verdicts computed: the findings mechanism of every chapter.

A chapter never types "agrees with the paper". It declares each claim of the paper it tests
once, as a :class:`Claim` (the claim's words, the paper, the paper's own evidence) with a
``check`` function; the check receives the chapter's computed results and returns a
:class:`Evidence` (our number, the verdict, one line saying what was compared). :func:`assess`
runs the checks for the dataset and profile at hand and returns one table; :func:`save`
writes it as JSON where the report gathers every chapter's findings (:func:`collect`).

Example::

    CLAIMS = [Claim("dp-ndcg-top", "000", "nDCG has the highest discriminative power",
                    "Table 3: nDCG@100 DP lowest on 3 of 4 datasets",
                    check=lambda r: ...)]
    table = assess(CLAIMS, results={"dp": dp_table}, context={"dataset": "movielens-small"})
    save(table, "05_cutoffs")
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import InputError

__all__ = ["Claim", "Evidence", "VERDICTS", "agrees_if", "assess", "save", "collect", "findings_dir",
           "to_markdown"]

#: the three verdicts a check may return
VERDICTS = ("agrees", "disagrees", "inconclusive")


@dataclass(frozen=True)
class Evidence:
    """What a check computed: the verdict, the number it rests on and a one-line explanation."""

    verdict: str
    value: float | None
    detail: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise InputError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    """A claim of a paper: its id, paper, words, the paper's own evidence, and how we test it.

    ``check(results)`` receives the mapping given to :func:`assess` and returns an
    :class:`Evidence`; it raises ``KeyError`` when a result it needs was not computed (the claim
    is then reported ``inconclusive``, naming the missing result).
    """

    id: str
    paper: str
    claim: str
    paper_evidence: str
    check: Callable[[Mapping[str, Any]], Evidence]


def agrees_if(condition: bool, value: float | None, detail: str, *, inconclusive: bool = False) -> Evidence:
    """Shorthand for checks: ``agrees`` when ``condition``, else ``disagrees`` (or ``inconclusive``)."""
    if inconclusive:
        return Evidence("inconclusive", value, detail)
    return Evidence("agrees" if condition else "disagrees", value, detail)


def assess(claims: Iterable[Claim], results: Mapping[str, Any], context: Mapping[str, Any] | None = None):
    """Run every claim's check on ``results``; one row per claim (a pandas DataFrame).

    Columns: ``id, paper, claim, paper_evidence, verdict, value, our_evidence`` plus one column per
    ``context`` entry (dataset, profile, ...), so a gathered table says where each verdict came from.
    """
    import pandas as pd

    rows = []
    seen = set()
    for claim in claims:
        if claim.id in seen:
            raise InputError(f"claim id {claim.id!r} appears twice")
        seen.add(claim.id)
        try:
            ev = claim.check(results)
        except KeyError as exc:
            ev = Evidence("inconclusive", None, f"not computed here: {exc.args[0]!r}")
        if not isinstance(ev, Evidence):
            raise InputError(f"the check of claim {claim.id!r} returned {type(ev).__name__}, expected Evidence")
        value = None if ev.value is None or not math.isfinite(float(ev.value)) else float(ev.value)
        rows.append({"id": claim.id, "paper": claim.paper, "claim": claim.claim,
                     "paper_evidence": claim.paper_evidence, "verdict": ev.verdict, "value": value,
                     "our_evidence": ev.detail, **dict(context or {})})
    return pd.DataFrame(rows, columns=["id", "paper", "claim", "paper_evidence", "verdict", "value",
                                       "our_evidence", *dict(context or {})])


def findings_dir() -> Path:
    """``$RECMETRICS_FINDINGS_DIR`` (set by the report build), else ``./findings``."""
    return Path(os.environ.get("RECMETRICS_FINDINGS_DIR") or "findings")


def save(table, chapter: str, directory: str | os.PathLike | None = None) -> Path:
    """Write ``table`` (from :func:`assess`) as ``<directory>/<chapter>.json``; returns the path."""
    path = Path(directory) if directory is not None else findings_dir()
    path.mkdir(parents=True, exist_ok=True)
    out = path / f"{chapter}.json"
    records = json.loads(table.to_json(orient="records", force_ascii=False))
    out.write_text(json.dumps({"chapter": chapter, "findings": records}, indent=1, ensure_ascii=False),
                   encoding="utf-8")
    return out


def collect(directory: str | os.PathLike | None = None):
    """Every chapter's saved findings in one DataFrame (column ``chapter`` added)."""
    import pandas as pd

    path = Path(directory) if directory is not None else findings_dir()
    frames = []
    for file in sorted(path.glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        frame = pd.DataFrame(data.get("findings", []))
        frame.insert(0, "chapter", data.get("chapter", file.stem))
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["chapter", "id", "paper", "claim", "paper_evidence", "verdict", "value",
                                     "our_evidence"])
    return pd.concat(frames, ignore_index=True)


def to_markdown(table) -> str:
    """A Markdown table of :func:`assess`'s result for a chapter (claim, paper's evidence, ours, verdict)."""
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| claim | paper | paper's evidence | our evidence | verdict |", "|---|---|---|---|---|"]
    for row in table.itertuples(index=False):
        lines.append(f"| {cell(row.claim)} | {cell(row.paper)} | {cell(row.paper_evidence)} | "
                     f"{cell(row.our_evidence)} | **{row.verdict}** |")
    return "\n".join(lines)
