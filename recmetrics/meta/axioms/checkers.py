"""How an axiom is checked on a metric: scoring scenes, searching them, the result.

``_scores`` scores the rankings of scenes with :func:`recmetrics.metrics.diversity.score_lists`
(each ranking a separate user with the scene's judgments and profile, ``threshold=4``,
``max_rating=5``); an expected relation ``>`` / ``<`` holds when the difference exceeds
``TOLERANCE`` relative to the larger magnitude (at least 1e-12 absolute), so rounding noise is
never read as a preference.

* ``_check_universal`` ("for all ..."): where the axiom has constructions
  (``constructions._CONSTRUCTED``: MoreAsp's boundary scenes), they are scored first and a
  failing one is the counterexample — built, not searched for, so the verdict does not depend on
  the seed. Otherwise :func:`hypothesis.find` searches the axiom's generated scenes
  (:mod:`.strategies`) for a counterexample with ``max_examples`` scenes and a seeded
  ``random.Random(seed)``, shrinks it, and keeps up to ``n_counterexamples`` distinct failing
  scenes (the shrunk one first, then the smallest). None found is reported as what it is, "no
  counterexample in N scenes" (``AxiomResult.basis == "search"``), not as a proof.
* ``_check_existential`` ("there is ..."): scores the axiom's constructions (:mod:`.constructions`)
  in batches of 60, in order, for each scene variant; satisfied if every variant has a witness,
  else the closest failure (smallest margin, ``_margin``) is the counterexample. With
  ``r_quantifier="forall"`` (``_check_existential_every_r``) each variant needs a witness for
  every rating r of the constructions.

Each check returns an :class:`AxiomResult`.
"""
from __future__ import annotations

import contextlib
import contextvars
import random
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...metrics import diversity as dv
from ...metrics.registry import MetricSpec
from .constructions import _CONSTRUCTED, _variants
from .scenes import R_MAX, THRESHOLD, UNIVERSAL_LENGTH, Example, Scene, _Case, _max_length
from .strategies import _UNIVERSAL

TOLERANCE = 1e-12

__all__ = ["AxiomResult", "TOLERANCE"]


@dataclass
class AxiomResult:
    """Outcome of one axiom on one metric.

    ``satisfied`` is None when the check does not apply (e.g. a cut-off too small for the
    construction). ``example`` is the counterexample (violated) or, for an existential axiom, the
    witness (satisfied). ``counterexamples`` holds every counterexample found (a universal
    axiom: up to ``n_counterexamples`` distinct failing scenes, the shrunk one first; TopHeav /
    TopHeavComp with ``r_quantifier="forall"``: the closest failed witness of every rating r
    without a witness).
    """

    axiom: str
    metric: str
    satisfied: bool | None
    quantifier: str
    cases: int
    example: Example | None = None
    message: str = ""
    counterexamples: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.satisfied)

    @property
    def basis(self) -> str:
        """What the verdict rests on: ``"counterexample"`` (violated; one is shown), ``"witness"``
        (an existential axiom satisfied; the witness is shown), ``"search"`` (a universal axiom for
        which no counterexample was found in :attr:`cases` scenes — evidence, not a proof) or
        ``"not applicable"``."""
        if self.satisfied is None:
            return "not applicable"
        if self.satisfied is False:
            return "counterexample"
        return "search" if self.quantifier == "forall" else "witness"

    @property
    def verdict(self) -> str:
        """The result in words: ``"violated"``, ``"satisfied"`` (a witness), ``"no counterexample in
        N scenes"`` (a search that found none) or ``"not applicable"``."""
        return {"counterexample": "violated", "witness": "satisfied", "not applicable": "not applicable",
                "search": f"no counterexample in {self.cases} scenes"}[self.basis]

    def __str__(self) -> str:
        state = "VIOLATED" if self.satisfied is False else self.verdict
        head = f"{self.axiom} on {self.metric}: {state} ({self.quantifier}, {self.cases} cases). {self.message}"
        return head + ("\n" + str(self.example) if self.example is not None else "")


#: the metrics of the running :func:`~recmetrics.meta.axioms.report.evaluate` and the scores it has
#: computed (see :func:`scoring_together`); None outside it
_TOGETHER: contextvars.ContextVar = contextvars.ContextVar("axiom_metrics_together", default=None)


@contextlib.contextmanager
def scoring_together(specs: list[MetricSpec]):
    """Within the block, a scene scored for one of ``specs`` is scored for all of them at once and
    remembered, so checking the next metric on the same scene (the searches of every metric draw
    the same scenes from the same seed) reads its scores. Only metrics that judge the lists to the
    same depth are scored together, so every value is the one the metric gets alone (tested)."""
    token = _TOGETHER.set(([s for s in specs], {}, {}))
    try:
        yield
    finally:
        _TOGETHER.reset(token)


def _depth(spec: MetricSpec, lists: list[list]) -> int:
    """The depth :func:`recmetrics.metrics.diversity.score_lists` judges ``lists`` to for ``spec`` alone."""
    return max([len(x) for x in lists] + [spec.k or 0, 1])


def _score_lists(specs: list[MetricSpec], lists: list[list], scenes: list[Scene]):
    aspects = {}
    for sc in scenes:
        aspects.update(sc.aspects)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return dv.score_lists(lists, [sc.ratings for sc in scenes], aspects, specs,
                              profile=[{a: w for a, w in sc.weights.items() if w > 0} for sc in scenes],
                              threshold=THRESHOLD, max_rating=R_MAX)


def _scores(spec: MetricSpec, lists: list[list], scenes: list[Scene]) -> np.ndarray:
    """Metric values of ``lists[i]`` under ``scenes[i]``."""
    together = _TOGETHER.get()
    if together is None or not any(str(s) == str(spec) for s in together[0]):
        return _score_lists([spec], lists, scenes).iloc[:, 0].to_numpy()
    specs, memo = together[:2]
    depth = _depth(spec, lists)
    key = (depth, tuple(tuple(x) for x in lists),
           tuple((tuple(sc.aspects.items()), tuple(sc.ratings.items()), tuple(sc.weights.items())) for sc in scenes))
    try:
        hit = memo.get(key)
    except TypeError:        # an unhashable id or label: score alone
        return _score_lists([spec], lists, scenes).iloc[:, 0].to_numpy()
    if hit is None or str(spec) not in hit:
        group = list({str(s): s for s in specs if _depth(s, lists) == depth and str(s) not in (hit or {})}.values())
        try:
            frame = _score_lists(group, lists, scenes)
        except Exception:   # another metric refuses this scene: score this one alone (its own error, if any)
            frame = _score_lists([spec], lists, scenes)
        hit = {**(hit or {}), **{c: frame[c].to_numpy() for c in frame.columns}}
        memo[key] = hit
    return hit[str(spec)]


def _tol(*values) -> float:
    return TOLERANCE * max([1.0] + [abs(v) for v in values])


_RELATIONS = {
    ">": lambda a, b: a - b > _tol(a, b),
    "<": lambda a, b: b - a > _tol(a, b),
}


def _evaluate_case(spec: MetricSpec, axiom: str, case: _Case) -> Example:
    names = list(case.rankings)
    values = _scores(spec, [case.rankings[n] for n in names], [case.scene] * len(names))
    scores = dict(zip(names, map(float, values)))
    holds = _RELATIONS[case.op](scores[case.left], scores[case.right])
    return Example(axiom, str(spec), case.scene, case.rankings, scores, case.expectation, holds, case.note)


def _check_universal(axiom: str, spec: MetricSpec, *, max_examples: int, seed: int,
                     zero_weights: bool, n_counterexamples: int = 5) -> AxiomResult:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    make, min_len = _UNIVERSAL[axiom]
    max_len = min(_max_length(spec, UNIVERSAL_LENGTH), UNIVERSAL_LENGTH)
    if max_len < min_len:
        return AxiomResult(axiom, str(spec), None, "forall", 0,
                           message=f"the cut-off {spec.k} leaves no room for the construction "
                                   f"(needs lists of {min_len})")
    built = _CONSTRUCTED.get(axiom, lambda _spec: [])(spec)
    if built:
        examples = _run_grid(spec, axiom, built)
        bad = sorted((e for e in examples if not e.holds), key=_margin, reverse=True)   # clearest first
        if bad:
            return AxiomResult(axiom, str(spec), False, "forall", len(examples), bad[0],
                               message=f"constructed counterexample: {len(bad)} of {len(examples)} constructed "
                                       f"scenes violate the axiom (no search needed; the clearest is shown)",
                               counterexamples=bad[:max(int(n_counterexamples), 1)])
    generated = _searched_together(axiom, spec, max_len, max_examples=max_examples, seed=seed,
                                   zero_weights=zero_weights)
    if generated is not None:   # the search of the metrics scored together met no counterexample for it
        return _no_counterexample(axiom, spec, len(built), generated)
    count = [len(built)]
    failing: dict = {}        # distinct failing scenes met while searching (before shrinking)

    def violated(case: _Case) -> bool:
        count[0] += 1
        ex = _evaluate_case(spec, axiom, case)
        if not ex.holds and len(failing) < 4 * n_counterexamples:
            failing.setdefault(str(ex), ex)
        return not ex.holds

    try:
        case = find(make(zero_weights, max_len), violated, settings=_settings(max_examples), random=random.Random(seed))
    except NoSuchExample:
        return _no_counterexample(axiom, spec, len(built), count[0] - len(built))
    example = _evaluate_case(spec, axiom, case)
    others = [e for key, e in failing.items() if key != str(example)]
    others.sort(key=lambda e: sum(len(r) for r in e.rankings.values()))   # smallest first
    found = [example] + others[:max(int(n_counterexamples) - 1, 0)]
    return AxiomResult(axiom, str(spec), False, "forall", count[0], example,
                       message=f"counterexample (shrunk by hypothesis); {len(found)} shown", counterexamples=found)


def _no_counterexample(axiom: str, spec: MetricSpec, built: int, generated: int) -> AxiomResult:
    scenes = f"{built} constructed and {generated} generated" if built else f"{generated} generated"
    return AxiomResult(axiom, str(spec), True, "forall", built + generated,
                       message=f"no counterexample in {scenes} scenes (a search, not a proof)")


def _settings(max_examples: int):
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(max_examples=int(max_examples), database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                    verbosity=Verbosity.quiet)


def _searched_together(axiom: str, spec: MetricSpec, max_len: int, *, max_examples: int, seed: int,
                       zero_weights: bool) -> int | None:
    """Within :func:`scoring_together`: the number of scenes the search of ``axiom`` generates when
    no scene is a counterexample for ``spec``, or None when one is (or ``spec`` was not searched).

    The search a metric runs alone draws its scenes from ``random.Random(seed)`` and the outcomes
    so far; while no scene is a counterexample every outcome is "holds", so every metric without a
    counterexample draws the same scenes. They are drawn once, for every metric scored together
    whose lists may be as long (``max_len``) and whose constructions hold, each scene judged for
    every metric not yet broken, and no outcome ever reported to the search: a metric that holds
    on every scene gets the verdict (and the count) of its own search; a metric broken by a scene,
    or whose scoring raised, runs its own search (which finds that scene again, and shrinks it)."""
    together = _TOGETHER.get()
    if together is None:
        return None
    specs, _, searches = together
    key = (axiom, max_len, int(max_examples), seed, bool(zero_weights))
    if key not in searches:
        from hypothesis import find
        from hypothesis.errors import NoSuchExample

        make, min_len = _UNIVERSAL[axiom]
        alive = {}
        for s in specs:
            if min(_max_length(s, UNIVERSAL_LENGTH), UNIVERSAL_LENGTH) != max_len or str(s) in alive:
                continue
            built = _CONSTRUCTED.get(axiom, lambda _spec: [])(s)
            if all(e.holds for e in _run_grid(s, axiom, built)) if built else True:
                alive[str(s)] = s
        calls = [0]

        def judge_all(case: _Case) -> bool:
            calls[0] += 1
            for name, s in list(alive.items()):
                try:
                    holds = _evaluate_case(s, axiom, case).holds
                except Exception:   # its own search will meet the error
                    holds = False
                if not holds:
                    del alive[name]
            return False

        try:
            find(make(zero_weights, max_len), judge_all, settings=_settings(max_examples), random=random.Random(seed))
        except NoSuchExample:
            pass
        searches[key] = (set(alive), calls[0])
    passed, generated = searches[key]
    return generated if str(spec) in passed else None


def _run_grid(spec: MetricSpec, axiom: str, cases: list[_Case]) -> list[Example]:
    lists, scenes, index = [], [], []
    for c_i, case in enumerate(cases):
        for name, ranking in case.rankings.items():
            lists.append(ranking)
            scenes.append(case.scene)
            index.append((c_i, name))
    values = _scores(spec, lists, scenes)
    per_case: dict = {}
    for (c_i, name), v in zip(index, values):
        per_case.setdefault(c_i, {})[name] = float(v)
    out = []
    for c_i, case in enumerate(cases):
        sc = per_case[c_i]
        out.append(Example(axiom, str(spec), case.scene, case.rankings, sc, case.expectation,
                           _RELATIONS[case.op](sc[case.left], sc[case.right]), case.note))
    return out


def _margin(ex: Example) -> float:
    """How far an example is from holding (<= 0 when it holds)."""
    a, b = (ex.scores[k] for k in ex.expectation.replace("Q(", "").replace(")", "").split(" ")[::2])
    return (b - a) if ">" in ex.expectation else (a - b)


def _check_existential(axiom: str, spec: MetricSpec, build: Callable, kind: str, *,
                       must_hold_at_end: bool = False, r_quantifier: str = "exists") -> AxiomResult:
    if r_quantifier == "forall":
        return _check_existential_every_r(axiom, spec, build, kind)
    total = 0
    witnesses = []
    for v_name, weights, extra_asp, extra_r in _variants(kind):
        cases = build(spec, weights, extra_asp, extra_r, v_name)
        if not cases:
            return AxiomResult(axiom, str(spec), None, "exists", total,
                               message=f"the cut-off {spec.k} leaves no room for the construction")
        examples, good = [], []
        for start in range(0, len(cases), 60):     # in order; stop at the first batch with a witness
            batch = _run_grid(spec, axiom, cases[start:start + 60])
            examples += batch
            good = [e for e in batch if e.holds]
            if good:
                break
        total += len(examples)
        if not good:
            closest = min(examples, key=_margin)
            return AxiomResult(axiom, str(spec), False, "exists", total, closest,
                               message=f"no witness in the scene '{v_name}' among {len(examples)} "
                                       f"constructions; the closest one is shown")
        witnesses.append(good[0])
    return AxiomResult(axiom, str(spec), True, "exists", total, witnesses[0],
                       message="witness found in every scene; the first one is shown")


def _check_existential_every_r(axiom: str, spec: MetricSpec, build: Callable, kind: str) -> AxiomResult:
    """"For every r > 0": each scene needs a witness for every rating r of the constructions."""
    total, witnesses, failures = 0, [], []
    for v_name, weights, extra_asp, extra_r in _variants(kind):
        cases = build(spec, weights, extra_asp, extra_r, v_name)
        if not cases:
            return AxiomResult(axiom, str(spec), None, "forall r", total,
                               message=f"the cut-off {spec.k} leaves no room for the construction")
        examples = _run_grid(spec, axiom, cases)
        total += len(examples)
        groups: dict = {}
        for case, ex in zip(cases, examples):
            groups.setdefault(case.group, []).append(ex)
        for r, exs in groups.items():
            good = [e for e in exs if e.holds]
            if good:
                witnesses.append(good[0])
            else:
                closest = min(exs, key=_margin)
                closest.note += f" (no witness with r={r} among {len(exs)} constructions)"
                failures.append((r, v_name, closest))
    if failures:
        rs = sorted({r for r, _, _ in failures})
        return AxiomResult(axiom, str(spec), False, "forall r", total, failures[0][2],
                           message=f"no witness for r in {rs} (scenes: "
                                   f"{sorted({v for _, v, _ in failures})})",
                           counterexamples=[f[2] for f in failures])
    return AxiomResult(axiom, str(spec), True, "forall r", total, witnesses[0],
                       message="witness found for every r in every scene; the first one is shown")
