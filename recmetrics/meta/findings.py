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

The rule (:func:`order`, :func:`holds`, :func:`best_of`; the statistics in
:mod:`recmetrics.meta.comparisons`) decides a comparison only beyond ``NOISE_SE`` = 2 standard
errors of the difference (two-sided level 4.55 %): the Monte Carlo se (an :class:`SE` estimated
from few samples widens to Student's t; an se of 0 from samples is unknown, only closed-form
values are exact) and, when given, the data split's replicates (a paired test that must agree,
:mod:`recmetrics.meta.replicates`). A claim that makes several comparisons decides them as one
family (:func:`family`): ``agrees`` when every one holds, ``disagrees`` only when Holm's step-down
finds one reversed, so its error rate does not grow with the number of pairs. A threshold the
project chose is read one step either side (:func:`threshold_reading`). Bad rule inputs (a NaN
threshold, ``z`` <= 0, an empty group or one given as a string, a negative se) raise InputError.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from ..errors import InputError
from .comparisons import MIN_SE_SAMPLES, NOISE_SE, REL_TOL, SE, Comparison, compare, family
from .firmness import DRAWS, keep_for_replay, replay_session, row_firmness, sharing_summaries

__all__ = ["Claim", "Evidence", "VERDICTS", "NOISE_SE", "REL_TOL", "MIN_SE_SAMPLES", "SE", "Comparison", "compare",
           "family", "Verdict", "decide", "jointly", "undecidable", "weakest", "group_comparisons", "row_firmness",
           "keep_for_replay",
           "combine_comparisons", "threshold_reading", "holds_all", "holds_comparison", "order", "holds", "best_of",
           "not_testable", "assess", "save", "collect", "findings_dir", "to_markdown", "split_deviations", "claim_anchor",
           "row_anchors"]

#: the verdicts a check may return. ``not testable``: the project's set-up cannot produce the
#: effect the claim is about (the detail says why); ``inconclusive``: it could, but the evidence
#: does not clear its uncertainty (or a result was not computed).
VERDICTS = ("agrees", "disagrees", "inconclusive", "not testable")


class Verdict(str):
    """A verdict (one of :data:`VERDICTS`) that keeps the comparisons it was decided from, so a claim
    made of several parts decides all of them as one family (:func:`jointly`).

    >>> v = holds(0.95, ">", 0.9, 0.01); v, len(v.comparisons)
    ('agrees', 1)
    """

    comparisons: tuple

    def __new__(cls, verdict: str, comparisons: Iterable[Comparison] = ()):
        if verdict not in VERDICTS:
            raise InputError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
        out = super().__new__(cls, verdict)
        out.comparisons = tuple(comparisons)
        return out

    def __reduce__(self):
        return Verdict, (str(self), self.comparisons)


def decide(comparisons: Iterable[Comparison], *, z: float = NOISE_SE) -> Verdict:
    """:func:`family`'s verdict, keeping the comparisons (a :class:`Verdict`)."""
    comps = list(comparisons)
    return Verdict(family(comps, z=z)[0], comps)


def undecidable(comparisons: Iterable[Comparison]) -> tuple[Comparison, ...]:
    """The same comparisons with their uncertainty unknown: they decide nothing in a family (a part
    whose reading flips with a project-chosen threshold or an open choice)."""
    return tuple(dataclasses.replace(c, se=math.nan, votes=None, tie_holds=False) for c in comparisons)


def jointly(parts: Iterable[str], *, z: float = NOISE_SE) -> Verdict:
    """One verdict for a claim made of several parts ("A above B *and* C below D"): every part's
    comparisons as one family (:func:`family`: ``agrees`` when each holds, ``disagrees`` when Holm
    over all of them finds one against the claim), never the parts' separate verdicts joined.

    Each part is a :class:`Verdict` (from :func:`holds`, :func:`best_of`, :func:`decide`, ...); an
    ``inconclusive`` part without comparisons (nothing to compare) keeps the claim from agreeing; any
    other bare verdict is an InputError (its comparisons are needed to correct for their number).

    >>> jointly([holds(0.95, ">", 0.9, 0.01), holds(0.2, "<", 0.3, 0.01)])
    'agrees'
    >>> jointly([holds(0.95, ">", 0.9, 0.01), Verdict("inconclusive")])
    'inconclusive'
    """
    comps: list[Comparison] = []
    blocked = False
    for p in parts:
        pc = getattr(p, "comparisons", None)
        if pc is None or (not pc and p != "inconclusive"):
            raise InputError(f"jointly: a part read {str(p)!r} without the comparisons it was decided from "
                             "(make it with holds, best_of, decide or Verdict(verdict, comparisons))")
        comps += pc
        blocked |= not pc
    v = decide(comps, z=z) if comps else Verdict("inconclusive")
    return Verdict("inconclusive", v.comparisons) if blocked and v == "agrees" else v


def combine_comparisons(comparisons: Iterable[Comparison], *, z: float = NOISE_SE) -> tuple[str, str]:
    """:func:`family` with a one-line detail: ``(verdict, detail)``; every comparison named with its
    effect, se and distance from the line (the weakest one when all hold)."""
    comps = list(comparisons)
    verdict, held, rev, und = family(comps, z=z)
    if rev:
        return Verdict(verdict, comps), ("against the claim beyond the noise (Holm over the comparisons): "
                                         + "; ".join(c.text() for c in rev))
    if und:
        return Verdict(verdict, comps), "within the noise: " + "; ".join(c.text() for c in und)
    return Verdict(verdict, comps), f"all {len(held)} comparison(s) hold beyond {z:g} standard errors{weakest(held)}"


def weakest(comparisons: Iterable[Comparison]) -> str:
    """``"; weakest: <comparison with its margin>"`` — the held comparison nearest the line, or ``""``."""
    finite = [c for c in comparisons if math.isfinite(abs(c.z))]
    if not finite:
        return ""
    c = min(finite, key=lambda c: abs(c.z))
    return f"; weakest: {c.text()}"


def order(a: float, b: float, se_a: float | None = 0.0, se_b: float | None = 0.0, *, z: float = NOISE_SE,
          reps_a=None, reps_b=None) -> int:
    """The one comparison rule: ``+1`` if ``a > b`` beyond the noise, ``-1`` if ``a < b``, ``0`` if not decided.

    The noise band is ``q · sqrt(se_a² + se_b²)`` (the standard error of the difference of two
    independent estimates; ``se = 0`` or ``None`` for exact numbers, NaN for an unknown uncertainty,
    which decides nothing; an :class:`SE` estimated from few samples widens ``q`` from ``z`` to
    Student's t) plus a relative floating-point tolerance :data:`REL_TOL`, so an exact tie or a
    1e-16 difference never decides anything. ``reps_a``/``reps_b``: paired per-replicate values
    (data splits), whose spread enters the se (:func:`compare`). A negative se, or a ``z`` that is
    not a finite number > 0, is an :class:`~recmetrics.errors.InputError`.

    >>> order(0.5, 0.4), order(0.5, 0.5 + 2e-16), order(0.50, 0.49, 0.01, 0.01)
    (1, 0, 0)
    """
    return compare(a, b, se_a, se_b, reps_a=reps_a, reps_b=reps_b).sign(z)


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(threshold)):
        raise InputError(f"threshold must be a finite number, got {threshold!r}")
    return float(threshold)


def holds_comparison(value: float, relation: str, threshold: float, se: float | None = 0.0, *,
                     replicates=None, label: str = "") -> Comparison:
    """The comparison behind :func:`holds`, oriented so that ``gap > 0`` is what the relation says
    (``value − threshold`` for ``>``/``>=``, ``threshold − value`` for ``<``/``<=``); a non-strict
    relation on exact values holds at a tie."""
    if relation not in (">", ">=", "<", "<="):
        raise InputError(f"relation must be one of '>', '>=', '<', '<=', got {relation!r}")
    threshold = _check_threshold(threshold)
    reps_t = None if replicates is None else np.full(np.shape(np.ravel(replicates)), threshold)
    sym = {">": ">", ">=": "≥", "<": "<", "<=": "≤"}[relation]
    text = label or f"{float(value):.4g} {sym} {threshold:g}"
    if relation.startswith(">"):
        c = compare(value, threshold, se, 0.0, reps_a=replicates, reps_b=reps_t, label=text)
    else:
        c = compare(threshold, value, 0.0, se, reps_a=reps_t, reps_b=replicates, label=text)
    return dataclasses.replace(c, tie_holds=relation.endswith("=")) if math.isfinite(float(value)) else c


def holds(value: float, relation: str, threshold: float, se: float | None = 0.0, *, z: float = NOISE_SE,
          replicates=None, label: str = "") -> Verdict:
    """Verdict of ``value <relation> threshold`` (relation one of ``> >= < <=``) against its uncertainty.

    Beyond the noise band the claim ``agrees`` or ``disagrees``. Inside it a strict relation is
    ``inconclusive``; a non-strict one (``>=``, ``<=``) ``agrees`` when the value is exact
    (``se = 0``: 0.7999999999999998 ≥ 0.8 holds) and is ``inconclusive`` when it is an estimate.
    ``replicates``: the value on each data split (their spread enters the se, :func:`compare`).
    The :class:`Verdict` keeps its comparison (:func:`holds_comparison`), for :func:`jointly`.

    >>> holds(0.7999999999999998, ">=", 0.8), holds(0.8 + 2e-16, ">", 0.8), holds(0.75, ">=", 0.8, se=0.04)
    ('agrees', 'inconclusive', 'inconclusive')
    """
    return decide([holds_comparison(value, relation, threshold, se, replicates=replicates, label=label)], z=z)


def holds_all(values: Iterable[float], relation: str, threshold: float, se: Iterable | None = None, *,
              z: float = NOISE_SE) -> Verdict:
    """:func:`holds` for several values at once ("each τ ≥ 0.8"), as one family: ``agrees`` when every
    value holds, ``disagrees`` only when Holm's step-down over the values finds one against the
    relation (so the chance of a false ``disagrees`` does not grow with their number), else
    ``inconclusive``; ``se``: one per value (default exact).

    >>> holds_all([0.93, 0.95], ">=", 0.9), holds_all([0.95, 0.85], ">=", 0.9, [0.03, 0.03])
    ('agrees', 'inconclusive')
    """
    values = [float(v) for v in values]
    ses = [0.0] * len(values) if se is None else list(se)
    if len(ses) != len(values):
        raise InputError(f"holds_all: {len(values)} values but {len(ses)} standard errors")
    return decide([holds_comparison(v, relation, threshold, s) for v, s in zip(values, ses)], z=z)


def threshold_reading(value: float, relation: str, threshold: float, step: float, se: float | None = 0.0, *,
                      name: str = "threshold", z: float = NOISE_SE, replicates=None) -> tuple[str, str]:
    """A claim decided at a threshold *the project chose* (the paper gives none): ``(verdict, detail)``.

    The verdict is :func:`holds` (:func:`holds_all` for several values) at ``threshold``, reported
    with the verdicts one ``step`` either
    side ("agrees at 0.9 (the project's reading of 'high'); at 0.85 / 0.95: agrees / inconclusive").
    When a neighbour gives the opposite decided verdict the claim flips within one step of a
    project-chosen number, and it is ``inconclusive`` (DESIGN.md), the detail saying so.

    >>> threshold_reading(0.93, ">=", 0.9, 0.05, name="'high' τ")
    ('inconclusive', "0.93 ≥ 0.9 (the project's reading of 'high' τ): agrees; at 0.85 / 0.95: agrees / disagrees — flips within one step of the project's threshold")
    """
    threshold, step = _check_threshold(threshold), _check_threshold(step)
    if step <= 0:
        raise InputError(f"step must be > 0, got {step!r}")
    several = np.ndim(value) > 0   # "each value ≥ threshold": one family (holds_all)
    at, lo, hi = (holds_all(value, relation, t, se, z=z) if several else
                  holds(value, relation, t, se, z=z, replicates=replicates)
                  for t in (threshold, threshold - step, threshold + step))
    sym = {">": ">", ">=": "≥", "<": "<", "<=": "≤"}[relation]
    shown = f"each of {len(value)} values" if several else f"{float(value):.4g}"
    detail = (f"{shown} {sym} {threshold:g} (the project's reading of {name}): {at}; "
              f"at {threshold - step:g} / {threshold + step:g}: {lo} / {hi}")
    opposite = {"agrees": "disagrees", "disagrees": "agrees"}.get(at)
    if opposite in (lo, hi):
        return (Verdict("inconclusive", undecidable(at.comparisons)),
                detail + " — flips within one step of the project's threshold")
    margin = "; ".join(c.margin() for c in at.comparisons[:1]) if not several else weakest(at.comparisons)[2:]
    return at, detail + (f" ({margin})" if margin else "")


def _check_group(group) -> list:
    if isinstance(group, (str, bytes)):
        raise InputError(f"group must be a list of entries, got the string {group!r} (write [{group!r}])")
    group = list(group)
    if not group:
        raise InputError("group is empty: name the entries the claim is about")
    seen = set()
    for g in group:
        if g in seen:
            raise InputError(f"group names {g!r} twice: name each entry once")
        seen.add(g)
    return group


def _check_cover(values: Mapping, given: Mapping | None, what: str) -> None:
    """``se`` or ``replicates`` given for some entries must be given for all of them (a missing one
    would be read as exact, or as zeros); an se of ``None`` says "exact" explicitly."""
    if not given:
        return
    missing = [k for k in values if k not in given or (what == "replicates" and given[k] is None)]
    if missing:
        raise InputError(f"{what} covers {len(values) - len(missing)} of the {len(values)} entries: none for "
                         f"{', '.join(map(repr, missing[:5]))} (give it for every entry, or for none)")


def best_of(values: Mapping[str, float], group: Iterable[str], se: Mapping[str, float] | None = None, *,
            higher: bool = True, z: float = NOISE_SE, replicates: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """Is every member of ``group`` better than every other entry, each comparison against its noise?

    Returns ``(verdict, detail)`` from the m × k member-vs-other comparisons as one family
    (:func:`family`): ``agrees`` when each member beats each non-member beyond the noise,
    ``disagrees`` when Holm's step-down over the m × k comparisons finds a non-member ahead of a
    member (the family-wise error stays at the rule's level however many pairs there are),
    ``inconclusive`` otherwise (the detail names the undecided pairs). A claim about one metric
    ("P is the most robust") is ``group = ["P"]``; a claim worded about several ("P, F1 and nDCG
    show the best robustness") passes them all, and is tested as worded. ``replicates``: per entry,
    its values on the data-split replicates (paired by position), whose spread enters every comparison.

    >>> best_of({"P": 0.9, "AP": 0.8, "RR": 0.5}, ["P"])[0]
    'agrees'
    >>> best_of({"P": 0.9, "AP": 0.9, "RR": 0.5}, ["P"])[0]
    'inconclusive'
    """
    group = _check_group(group)
    missing = [g for g in group if g not in values]
    if missing:
        raise InputError(f"group names {missing[0]!r}, which has no value (entries: "
                         f"{', '.join(map(repr, list(values)[:12]))})")
    others = [k for k in values if k not in group]
    if not others:
        return Verdict("inconclusive"), "nothing to compare with"
    comps = group_comparisons(values, group, se, higher=higher, replicates=replicates)
    verdict, held, rev, und = family(comps, z=z)
    if rev:
        return Verdict("disagrees", comps), "; ".join(_beats(c) for c in rev) + f" (Holm over the {len(comps)} pairs)"
    if und:
        return Verdict("inconclusive", comps), "within the noise: " + "; ".join(c.text() for c in und)
    return Verdict("agrees", comps), (f"{', '.join(map(str, group))} beat(s) every other entry beyond {z:g} standard "
                                      f"errors{weakest(held)}")


def _beats(c: Comparison) -> str:
    """"o beats m (…)" for a member-vs-other comparison that went against the claim, with its margin."""
    m, o = c.pair
    return f"{o} beats {m} ({c.values[1]:.4g} vs {c.values[0]:.4g}; {c.margin()})"


def group_comparisons(values: Mapping, group: Iterable, se: Mapping | None = None, *, higher: bool = True,
                      replicates: Mapping | None = None, label: str = "",
                      pair_se: Callable[[Any, Any], Any] | None = None) -> list[Comparison]:
    """The m × k comparisons "member better than other" of :func:`best_of` (``gap > 0``: the claim
    holds), for a claim that tests several such groups as one family (:func:`family`); ``label``
    prefixes each comparison's text (e.g. the scenario). ``pair_se(m, o)``: the se of the
    difference itself when the two estimates are paired (the same Monte Carlo samples), used
    instead of ``sqrt(se_m² + se_o²)``."""
    group = _check_group(group)
    _check_cover(values, se, "se")
    _check_cover(values, replicates, "replicates")
    se, reps = dict(se or {}), dict(replicates or {})
    comps = []
    for m in group:
        for o in (k for k in values if k not in group):
            a, b, sa, sb, ra, rb = (values[m], values[o], se.get(m), se.get(o), reps.get(m), reps.get(o))
            if pair_se is not None:
                sa, sb = pair_se(m, o), None
            if not higher:
                a, b, sa, sb, ra, rb = b, a, sb, sa, rb, ra
            comps.append(compare(a, b, sa, sb, reps_a=ra, reps_b=rb, label=f"{label}{m} {values[m]:.4g} vs {o} {values[o]:.4g}",
                                 pair=(m, o), values=(values[m], values[o])))
    return comps


def not_testable(reason: str, value: float | None = None) -> "Evidence":
    """The fourth verdict: the project's definition or set-up cannot produce the paper's effect."""
    return Evidence("not testable", value, reason)


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


def assess(claims: Iterable[Claim], results: Mapping[str, Any], context: Mapping[str, Any] | None = None,
           deviations: Iterable[str] | None = None, *, draws: int = DRAWS, keep: bool = True):
    """Run every claim's check on ``results``; one row per claim (a pandas DataFrame).

    Columns: ``id, paper, claim, paper_evidence, verdict, value, our_evidence, deviations, firmness,
    firmness_basis`` plus one column per ``context`` entry (dataset, profile, ...), so a gathered
    table says where each verdict came from. ``deviations``: where this run's set-up differs from
    the paper's (one string each, e.g. from :func:`recmetrics.papers.deviations`); every row carries
    them, joined by ``"; "`` (empty when the run follows the paper). ``firmness``: the chance another
    split reads the row's verdict the same (:func:`recmetrics.meta.firmness.firmness`, at most
    ``draws`` replays of its check; 0: not computed, NaN), ``firmness_basis`` how it was found
    (``simulated``, ``exact values``, ``not testable``, ``not computed``). ``keep``: keep the claims
    and results for replays outside the chapter when asked to (:func:`keep_for_replay`).
    """
    import pandas as pd

    claims = list(claims)
    if keep:
        keep_for_replay(claims, results, context)
    if isinstance(deviations, str):
        deviations = [deviations]
    deviation_text = "; ".join(str(d) for d in (deviations or ()))

    rows = []
    seen = set()
    with replay_session():   # the rows' replays share the summaries of the results they read
        for claim in claims:
            rows.append(_assess_row(claim, seen, results, context, deviation_text, draws))
    return pd.DataFrame(rows, columns=["id", "paper", "claim", "paper_evidence", "verdict", "value",
                                       "our_evidence", "deviations", "firmness", "firmness_basis",
                                       *dict(context or {})])


def _assess_row(claim, seen: set, results, context, deviation_text: str, draws: int) -> dict:
    """One row of :func:`assess`."""
    if claim.id in seen:
        raise InputError(f"claim id {claim.id!r} appears twice")
    seen.add(claim.id)
    computed = True
    try:
        with sharing_summaries():   # the row's own verdict reads the summaries its replays will read
            ev = claim.check(results)
    except KeyError as exc:
        ev, computed = Evidence("inconclusive", None, f"not computed here: {exc.args[0]!r}"), False
    if not isinstance(ev, Evidence):
        raise InputError(f"the check of claim {claim.id!r} returned {type(ev).__name__}, expected Evidence")
    value = None if ev.value is None or not math.isfinite(float(ev.value)) else float(ev.value)
    firm, basis = row_firmness(claim.check, results, ev.verdict if computed else None, key=claim.id,
                               context=context, draws=draws)
    return {"id": claim.id, "paper": claim.paper, "claim": claim.claim,
            "paper_evidence": claim.paper_evidence, "verdict": str(ev.verdict), "value": value,
            "our_evidence": ev.detail, "deviations": deviation_text, "firmness": firm,
            "firmness_basis": basis, **dict(context or {})}


def findings_dir() -> Path:
    """``$RECMETRICS_FINDINGS_DIR`` (set by the report build), else ``./findings``."""
    return Path(os.environ.get("RECMETRICS_FINDINGS_DIR") or "findings")


def save(table, chapter: str, directory: str | os.PathLike | None = None, *,
         section: str | Mapping[str, str] | None = None) -> Path:
    """Write ``table`` (from :func:`assess`) as ``<directory>/<chapter>.json``; returns the path.

    ``section``: where in the chapter the claims are computed, as the label of a MyST target the
    chapter puts above that section's heading (``(ch05-robustness)=``; lower-case letters and
    digits joined by ``-``, so that it is also the section's HTML id): one label for every row,
    or ``{claim id: label}``. The book's Findings page links each row there; without a section
    it links to the row of the chapter's claims table (:func:`claim_anchor`).
    """
    path = Path(directory) if directory is not None else findings_dir()
    path.mkdir(parents=True, exist_ok=True)
    out = path / f"{chapter}.json"
    records = json.loads(table.to_json(orient="records", force_ascii=False))
    if section is not None:
        if isinstance(section, str):
            section = {r["id"]: section for r in records}
        unknown = sorted(set(section) - {r["id"] for r in records})
        if unknown:
            raise InputError(f"section names claim id {unknown[0]!r}, which is not in the table of {chapter!r}")
        for r in records:
            label = section.get(r["id"])
            if label is not None and not (isinstance(label, str) and _LABEL.fullmatch(label)):
                raise InputError(f"section label of claim {r['id']!r} must be a MyST target label in lower case "
                                 f"(letters and digits joined by '-', e.g. 'ch05-robustness'), got {label!r}")
            r["section"] = label
    out.write_text(json.dumps({"chapter": chapter, "findings": records}, indent=1, ensure_ascii=False),
                   encoding="utf-8")
    return out


def collect(directory: str | os.PathLike | None = None, names: Iterable[str] | None = None):
    """Every chapter's saved findings in one DataFrame (column ``chapter`` added; ``firmness`` and
    ``firmness_basis``, :func:`assess`, NaN and ``""`` for findings saved without them); ``names``: only
    these files of ``directory`` (those missing are skipped), e.g. the ones a build's chapters wrote."""
    import pandas as pd

    path = Path(directory) if directory is not None else findings_dir()
    files = sorted(path.glob("*.json")) if names is None else [path / n for n in sorted(set(names))
                                                                 if (path / n).is_file()]
    frames = []
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        frame = pd.DataFrame(data.get("findings", []))
        frame.insert(0, "chapter", data.get("chapter", file.stem))
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["chapter", "id", "paper", "claim", "paper_evidence", "verdict", "value",
                                     "our_evidence", "firmness", "firmness_basis"])
    out = pd.concat(frames, ignore_index=True)
    if "firmness" not in out:           # findings saved before firmness was computed
        out["firmness"], out["firmness_basis"] = math.nan, ""
    return out


#: section labels the Findings page can link to: Sphinx turns a MyST target into an HTML id
#: through docutils' make_id (lower case, '-' for anything else), so only such labels survive it
_LABEL = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def claim_anchor(claim_id: str, occurrence: int = 0) -> str:
    """The HTML id of a claim's row in a chapter's claims table (and the Findings page's link to it).

    ``claim-`` plus the id with every character outside ``[A-Za-z0-9_-]`` replaced by ``-``; the
    ``occurrence``-th repeat of an id in one table (e.g. one row per tie-break) gets ``-2``, ``-3``, ...

    >>> claim_anchor("exp1-swap (tie)"), claim_anchor("exp1-swap", 1)
    ('claim-exp1-swap--tie-', 'claim-exp1-swap-2')
    """
    base = "claim-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(claim_id))
    return base if occurrence == 0 else f"{base}-{occurrence + 1}"


def row_anchors(ids: Iterable[str]) -> list[str]:
    """:func:`claim_anchor` of every row, numbering the repeats of an id in order of appearance."""
    seen: dict[str, int] = {}
    out = []
    for i in ids:
        out.append(claim_anchor(i, seen.get(i, 0)))
        seen[i] = seen.get(i, 0) + 1
    return out


def to_markdown(table) -> str:
    """A Markdown table of :func:`assess`'s result for a chapter (claim, paper's evidence, ours, verdict).

    Rendered as a table by the book (``nb_render_markdown_format: myst``). Each row's claim cell
    starts with an empty ``<span id="claim-...">`` (:func:`row_anchors`) that the Findings page links
    to. Where the run's set-up differs from the paper's (the ``deviations`` column) it is said once,
    above the rows that share it (a table per run of rows with the same deviations).
    Under each verdict, its firmness (:mod:`recmetrics.meta.firmness`): ``firm`` or ``borderline``
    ("another split may read this differently"). Cell text is escaped (``|``, ``$``, ``<``) so it
    prints as written.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"id": ["c1"], "claim": ["P < R costs $1"], "paper": ["000"],
    ...                   "paper_evidence": ["Fig. 4"], "our_evidence": ["`a|b` vs 0.3"], "verdict": ["agrees"],
    ...                   "firmness": [0.62], "firmness_basis": ["simulated"]})
    >>> print(to_markdown(t))
    | claim | paper | paper's evidence | our evidence | verdict |
    |---|---|---|---|---|
    | <span id="claim-c1"></span>P &lt; R costs \\$1 | 000 | Fig. 4 | `a\\|b` vs 0.3 | **agrees**<br>borderline (0.62): another split may read this differently |
    """
    from ..markdown import markdown_cell as _markdown_cell
    from .firmness import BORDERLINE, firm_reading

    n = len(table)
    deviations = [split_deviations(d) for d in (table["deviations"] if "deviations" in table else [None] * n)]
    firmness = table["firmness"] if "firmness" in table else [math.nan] * n
    bases = table["firmness_basis"] if "firmness_basis" in table else [""] * n
    head = ["| claim | paper | paper's evidence | our evidence | verdict |", "|---|---|---|---|---|"]
    rows = list(zip(row_anchors(table["id"]), deviations, firmness, bases, table.itertuples(index=False)))
    lines: list[str] = []
    for dev, group in itertools.groupby(rows, key=lambda r: r[1]):
        group = list(group)    # the set-up's deviations, once above the rows that share them
        if lines:
            lines.append("")
        if dev:
            lines += [f"*Set-up differs from the paper{' for every claim below' if len(group) == n else ''}: "
                      f"{_markdown_cell('; '.join(dev))}.*", ""]
        lines += head
        for anchor, _, firm, basis, row in group:
            label, how = firm_reading(firm, basis)
            firm_text = f"<br>{label} ({how})" + (f": {BORDERLINE}" if label == "borderline" else "") if label else ""
            lines.append(f"| <span id=\"{anchor}\"></span>{_markdown_cell(row.claim)} | {_markdown_cell(row.paper)} | "
                         f"{_markdown_cell(row.paper_evidence)} | {_markdown_cell(row.our_evidence)} | "
                         f"**{row.verdict}**{firm_text} |")
    return "\n".join(lines if lines else head)


def split_deviations(text) -> list[str]:
    """The deviations of a row, one string each: the ``"; "``-joined column split where no
    parenthesis is open (an item may itself hold ``"; "`` inside its brackets).

    >>> split_deviations("folds: 2 (the paper: 5); systems: 6 of 21 (missing: A, B; not in the paper: C)")
    ['folds: 2 (the paper: 5)', 'systems: 6 of 21 (missing: A, B; not in the paper: C)']
    """
    if not isinstance(text, str) or not text.strip():
        return []
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if depth == 0 and text.startswith("; ", i):
            items.append(text[start:i])
            start = i + 2
    items.append(text[start:])
    return [t.strip() for t in items if t.strip()]
