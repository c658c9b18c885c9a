r"""The eight axioms of Parapar & Radlinski (RecSys 2021, Sec. 4.1) as executable checks.

``rm.axioms.check("Pri", "ab-nDCG@10")`` builds the rankings and user profiles the axiom
quantifies over and returns an :class:`AxiomResult`: satisfied or violated, with a concrete
example (the rankings, the user's ratings and aspect weights, and the scores).
``rm.axioms.table(metrics)`` gives the satisfaction matrix (the paper's Table 1),
``rm.axioms.evaluate(metrics)`` the full :class:`AxiomReport` with every example.

How each axiom is checked
-------------------------
A *scene* is one hypothetical user: a few aspects ``g0, g1, ...`` (``A``, ``B``, ``C`` in the
constructed ones), the aspect weights :math:`w(u,a)` of the user's profile (given to the metrics
as training ratings whose Eq. 9 estimate is exactly these weights), items with aspects, and the
user's test ratings on a 0-5 scale (``r_max = 5``, relevant from 4; an item may be unrated).
The rankings an axiom compares are scored as separate users with the same judgments, so they
share one ideal and one profile. Every scene's user has at least one relevant judgment (like the
evaluated users of ``rm.evaluate``), so normalised metrics are defined. Rankings are never longer than the metric's cut-off (the
evaluated list); metrics without a cut-off get lists of up to 8 items in the universal checks
and up to 1000 in the existential ones ("a value n large enough" needs room).

*Universal* axioms (Pri, Deep, AspRel, MoreAsp, MissOverNon: "for all rankings and users ...")
are searched with ``hypothesis`` (:func:`hypothesis.find`) for a counterexample among generated
scenes: random aspects, weights, items, ratings (including unrated items) and positions, with
the items the axiom talks about placed as it prescribes. A counterexample found is shrunk to a
minimal one and reported; if none is found in ``max_examples`` scenes, the axiom is reported
satisfied. *Existential* axioms (NonPriSatAsp, TopHeav, TopHeavComp: "there is a saturation /
a depth n such that ...") are checked by direct construction over a grid of witnesses, for each
of two scenes (the listed aspects only; and a user who also likes an aspect the lists never
show); the axiom holds if every scene has a witness.

Formalisations (where the paper's wording leaves room, the choice is stated):

* **Pri** (Eq. 17): items at p < q show only aspect :math:`a_n`, both rated, :math:`r_q > r_p`;
  swapping them must increase Q.
* **Deep** (Eq. 18): four items at p, p+1, q, q+1 (q >= p+2) show only :math:`a_n`, with
  :math:`r_p = r_q < r_{p+1} = r_{q+1}`; correcting the pair at p must beat correcting it at q.
* **NonPriSatAsp** (Eq. 19): aspect B is saturated by m <= 20 relevant B-items (rating 5) at the top;
  then an A-item rated r, (gap-1) unrated-aspect fillers rated 0, and a B-item rated r + Δ;
  w(A) = w(B). Some (m, gap, r, Δ) must make the swap (B-item first) lower Q.
* **TopHeav** (Eq. 20, "n large enough"): one relevant item (rating r) then 2n-1 rated 0, against
  n rated 0 then n rated r, all showing the same aspect (so only relevance quantity and depth
  differ); for some r the first must win at the largest n the list allows (n = k/2 for a cut-off
  k, n = 500 without one): a top-heavy metric must eventually prefer the single top item.
* **TopHeavComp** (Eq. 21, "m small enough"): the same rankings; for some m (and r) the second
  must win.
* **The rating r of TopHeav / TopHeavComp** (``r_quantifier``): the paper does not say whether
  the witness may pick the relevant items' rating. ``"exists"`` (default): a witness at *some*
  r in 1..5 suffices; ``"forall"``: there must be a witness for *every* r > 0 (1..5), and every r
  without one is returned as a counterexample (e.g. αβ-nDCG with β = 0.5 violates TopHeavComp
  for every r >= 3 under ``"forall"``).
* **AspRel** (Eq. 22): equally rated (r > 0) items j above j' show only :math:`a_n` and
  :math:`a_{n'}`, with :math:`w(u,a_n) > w(u,a_{n'})`, and no other listed item shows either
  aspect (:math:`s = 0`); swapping them must decrease Q.
* **MoreAsp** (Eq. 23): equally rated (r > 0) items j above j' show disjoint aspect sets, all of
  positive weight, that no other listed item shows (so none is saturated and
  :math:`w(\vec\imath, a) = 0`); j's remaining interest :math:`\sum_{a\in j} w(u,a)` is larger;
  swapping them must decrease Q. (Eq. 23 prints the inequality of the remaining interests the
  other way round, which contradicts its own prose "the presence of the item with higher
  remaining interest yields higher quality"; we follow the prose.)
* **MissOverNon** (Eq. 24): j rated 0 above an unrated j' that shows at least one aspect;
  swapping them must increase Q.

Domain of the user's weights (``zero_weights``): by default every aspect in a scene has a
positive weight (the situation of the paper's Sec. 5, where weights come from the ground truth,
which includes the rated items themselves). With ``zero_weights=True`` generated users may have
no interest at all in some aspects (possible with a training profile), which breaks Pri and Deep
for every metric that weights aspects by the profile: a user's ratings of items whose only aspect
has weight 0 do not count.
"""
from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import unknown_name
from ..metrics import diversity as dv
from ..metrics.registry import MetricSpec, parse

AXIOMS = ("Pri", "Deep", "NonPriSatAsp", "TopHeav", "TopHeavComp", "AspRel", "MoreAsp", "MissOverNon")
QUANTIFIER = {"Pri": "forall", "Deep": "forall", "NonPriSatAsp": "exists", "TopHeav": "exists",
              "TopHeavComp": "exists", "AspRel": "forall", "MoreAsp": "forall", "MissOverNon": "forall"}
R_MAX = 5.0
THRESHOLD = 4.0
UNIVERSAL_LENGTH = 8        # longest generated list for a metric without cut-off (universal axioms)
UNBOUNDED_LENGTH = 1000     # longest constructed list for a metric without cut-off (existential)
TOLERANCE = 1e-12

#: the paper's Table 1 (True = satisfied), keyed by our registry names
PAPER_TABLE1 = {
    "a-nDCG": dict(Pri=True, Deep=True, NonPriSatAsp=True, TopHeav=True, TopHeavComp=True,
                   AspRel=False, MoreAsp=False, MissOverNon=False),
    "S-Recall": {a: False for a in AXIOMS},
    "S-RR": {a: False for a in AXIOMS},
    "NRBP": dict(Pri=True, Deep=True, NonPriSatAsp=True, TopHeav=True, TopHeavComp=True,
                 AspRel=False, MoreAsp=False, MissOverNon=False),
    "EU": dict({a: True for a in AXIOMS}, MissOverNon=False),
    "RBU": dict({a: True for a in AXIOMS}, MissOverNon=False),
    "ab-nDCG": {a: True for a in AXIOMS},
}
#: the metrics of Table 1 with the paper's settings (cut-off 10 where the paper writes @k)
PAPER_METRICS = ("a-nDCG@10", "S-Recall@10", "S-RR", "NRBP", "EU", "RBU@10", "ab-nDCG@10")
#: plain accuracy metrics, checked "for the record"
ACCURACY_METRICS = ("P@10", "nDCG@10", "AP@10", "RR@10", "ERR@10")

R_QUANTIFIERS = ("exists", "forall")

__all__ = ["AXIOMS", "QUANTIFIER", "R_QUANTIFIERS", "more_asp_threshold", "PAPER_TABLE1", "PAPER_METRICS", "ACCURACY_METRICS", "Scene",
           "Example", "AxiomResult", "AxiomReport", "check", "evaluate", "table", "pri", "deep",
           "non_pri_sat_asp", "top_heav", "top_heav_comp", "asp_rel", "more_asp", "miss_over_non"]


# --------------------------------------------------------------------------------------------
# scenes, examples, results
# --------------------------------------------------------------------------------------------
@dataclass
class Scene:
    """One hypothetical user: item aspects, test ratings (absent = unrated), aspect weights."""

    aspects: dict
    ratings: dict
    weights: dict

    def normalised_weights(self) -> dict:
        tot = sum(self.weights.values())
        return {a: (w / tot if tot else 0.0) for a, w in self.weights.items()}


@dataclass
class Example:
    """A concrete case: the rankings compared, the scene, the scores and what the axiom expects."""

    axiom: str
    metric: str
    scene: Scene
    rankings: dict            # name -> list of items
    scores: dict              # name -> metric value
    expectation: str          # e.g. "Q(swapped) > Q(original)"
    holds: bool               # whether the expectation holds in this example
    note: str = ""

    def frame(self, max_rows: int | None = None) -> pd.DataFrame:
        """The rankings side by side: rank, item, aspects and rating of each.

        ``max_rows``: show only the first and last ranks of long rankings.
        """
        cols = {}
        depth = max(len(r) for r in self.rankings.values())
        for name, ranking in self.rankings.items():
            cells = []
            for i in range(depth):
                if i < len(ranking):
                    it = ranking[i]
                    r = self.scene.ratings.get(it)
                    asp = ",".join(self.scene.aspects.get(it, ())) or "-"
                    cells.append(f"{it} [{asp}] r={'?' if r is None else f'{r:g}'}")
                else:
                    cells.append("")
            cols[name] = cells
        frame = pd.DataFrame(cols, index=pd.RangeIndex(1, depth + 1, name="rank"))
        if max_rows is not None and depth > max_rows:
            half = max(1, max_rows // 2)
            frame = pd.concat([frame.iloc[:half], frame.iloc[-half:]])
        return frame

    def __str__(self) -> str:
        w = ", ".join(f"{a}={v:.3f}" for a, v in self.scene.normalised_weights().items())
        unlisted = {i: r for i, r in self.scene.ratings.items()
                    if not any(i in rk for rk in self.rankings.values())}
        extra = ("; other judged items: " + ", ".join(
            f"{i} [{','.join(self.scene.aspects.get(i, ())) or '-'}] r={r:g}" for i, r in unlisted.items())
            if unlisted else "")
        scores = ", ".join(f"Q({n})={v:.10g}" for n, v in self.scores.items())
        lines = [f"{self.axiom} / {self.metric}: expects {self.expectation}; {scores} -> "
                 f"{'holds' if self.holds else 'fails'}",
                 f"user weights w(u,a): {w}{extra}"]
        if self.note:
            lines.append(self.note)
        depth = max(len(r) for r in self.rankings.values())
        if depth > 12:
            lines.append(f"(first and last 6 of {depth} ranks)")
        lines.append(self.frame(max_rows=12).to_string())
        return "\n".join(lines)


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

    def __str__(self) -> str:
        state = {True: "satisfied", False: "VIOLATED", None: "not applicable"}[self.satisfied]
        head = f"{self.axiom} on {self.metric}: {state} ({self.quantifier}, {self.cases} cases). {self.message}"
        return head + ("\n" + str(self.example) if self.example is not None else "")


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------
def _spec(metric) -> MetricSpec:
    return parse(metric)


def _scores(spec: MetricSpec, lists: list[list], scenes: list[Scene]) -> np.ndarray:
    """Metric values of ``lists[i]`` under ``scenes[i]``."""
    aspects = {}
    for sc in scenes:
        aspects.update(sc.aspects)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = dv.score_lists(lists, [sc.ratings for sc in scenes], aspects, [spec],
                             profile=[{a: w for a, w in sc.weights.items() if w > 0} for sc in scenes],
                             threshold=THRESHOLD, max_rating=R_MAX)
    return out.iloc[:, 0].to_numpy()


def _tol(*values) -> float:
    return TOLERANCE * max([1.0] + [abs(v) for v in values])


_RELATIONS = {
    ">": lambda a, b: a - b > _tol(a, b),
    "<": lambda a, b: b - a > _tol(a, b),
}


@dataclass
class _Case:
    scene: Scene
    rankings: dict            # name -> list
    left: str
    op: str
    right: str
    note: str = ""
    group: object = None      # the rating r of a TopHeav / TopHeavComp construction

    @property
    def expectation(self) -> str:
        return f"Q({self.left}) {self.op} Q({self.right})"


def _evaluate_case(spec: MetricSpec, axiom: str, case: _Case) -> Example:
    names = list(case.rankings)
    values = _scores(spec, [case.rankings[n] for n in names], [case.scene] * len(names))
    scores = dict(zip(names, map(float, values)))
    holds = _RELATIONS[case.op](scores[case.left], scores[case.right])
    return Example(axiom, str(spec), case.scene, case.rankings, scores, case.expectation, holds, case.note)


def _max_length(spec: MetricSpec, unbounded: int) -> int:
    return int(spec.k) if spec.k is not None else unbounded


# --------------------------------------------------------------------------------------------
# hypothesis strategies for the universal axioms
# --------------------------------------------------------------------------------------------
RATINGS = (None, 0, 1, 2, 3, 4, 5)


def _strategies():
    from hypothesis import strategies as st

    return st


def _base_scene(draw, st, *, zero_weights: bool, n_aspects=(2, 4), length=(2, 8), max_weight: int = 20):
    c = draw(st.integers(*n_aspects))
    labels = [f"g{i}" for i in range(c)]
    lo = 0 if zero_weights else 1
    weights = draw(st.lists(st.integers(lo, max_weight), min_size=c, max_size=c))
    if sum(weights) == 0:
        weights[0] = 1
    L = draw(st.integers(*length))
    items = [f"i{t}" for t in range(L)]
    item_aspects = [draw(st.frozensets(st.integers(0, c - 1), max_size=c)) for _ in range(L)]
    item_ratings = [draw(st.sampled_from(RATINGS)) for _ in range(L)]
    n_extra = draw(st.integers(0, 2))
    extras = [(f"x{t}", draw(st.frozensets(st.integers(0, c - 1), max_size=c)),
               draw(st.integers(0, 5))) for t in range(n_extra)]
    # the user is an evaluated user: at least one relevant judgment (here an unlisted item)
    extras.append(("x_rel", draw(st.frozensets(st.integers(0, c - 1), min_size=1, max_size=c)),
                   draw(st.integers(int(THRESHOLD), int(R_MAX)))))
    return dict(labels=labels, weights=weights, items=items, aspects=item_aspects,
                ratings=item_ratings, extras=extras)


def _scene_from(raw) -> Scene:
    labels = raw["labels"]
    aspects, ratings = {}, {}
    for it, asp, r in zip(raw["items"], raw["aspects"], raw["ratings"]):
        aspects[it] = tuple(labels[a] for a in sorted(asp))
        if r is not None:
            ratings[it] = float(r)
    for it, asp, r in raw["extras"]:
        aspects[it] = tuple(labels[a] for a in sorted(asp))
        ratings[it] = float(r)
    return Scene(aspects, ratings, {labels[a]: float(w) for a, w in enumerate(raw["weights"])})


def _swap(lst: list, p: int, q: int) -> list:
    out = list(lst)
    out[p], out[q] = out[q], out[p]
    return out


def _pri_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        n = draw(st.integers(0, len(raw["labels"]) - 1))
        lo = draw(st.integers(0, 4))
        hi = draw(st.integers(lo + 1, 5))
        raw["aspects"][p], raw["aspects"][q] = frozenset([n]), frozenset([n])
        raw["ratings"][p], raw["ratings"][q] = lo, hi
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", ">", "original",
                     f"ranks {p + 1} and {q + 1} show only {raw['labels'][n]}, ratings {lo} < {hi}")

    return case()


def _deep_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(4, max_len))
        L = len(raw["items"])
        p = draw(st.integers(0, L - 4))
        q = draw(st.integers(p + 2, L - 2))
        n = draw(st.integers(0, len(raw["labels"]) - 1))
        lo = draw(st.integers(0, 4))
        hi = draw(st.integers(lo + 1, 5))
        for pos, r in ((p, lo), (p + 1, hi), (q, lo), (q + 1, hi)):
            raw["aspects"][pos] = frozenset([n])
            raw["ratings"][pos] = r
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "fixed_at_p": _swap(orig, p, p + 1),
                                        "fixed_at_q": _swap(orig, q, q + 1)},
                     "fixed_at_p", ">", "fixed_at_q",
                     f"p={p + 1}, q={q + 1}: ranks p, p+1, q, q+1 show only {raw['labels'][n]}, "
                     f"ratings {lo}, {hi}, {lo}, {hi}")

    return case()


def _asp_rel_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        n, n2 = draw(st.lists(st.integers(0, c - 1), min_size=2, max_size=2, unique=True))
        w = raw["weights"]
        if w[n] == w[n2]:
            w[n] += 1
        if w[n] < w[n2]:
            n, n2 = n2, n
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        r = draw(st.integers(1, 5))
        for t in range(L):
            raw["aspects"][t] = frozenset(raw["aspects"][t] - {n, n2})
        raw["aspects"][p], raw["aspects"][q] = frozenset([n]), frozenset([n2])
        raw["ratings"][p] = raw["ratings"][q] = r
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", "<", "original",
                     f"rank {p + 1} shows only {raw['labels'][n]} (w={w[n]}), rank {q + 1} only "
                     f"{raw['labels'][n2]} (w={w[n2]}), both rated {r}")

    return case()


def _more_asp_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        perm = draw(st.permutations(list(range(c))))
        w = raw["weights"]
        if c >= 3 and draw(st.booleans()):
            # boundary family: several aspects against one whose weight is one unit less than theirs
            a = draw(st.integers(2, c - 1))
            S1, S2 = set(perm[:a]), {perm[a]}
            for x in S1:
                w[x] = draw(st.integers(1, 20))
            w[perm[a]] = sum(w[x] for x in S1) - 1
        else:
            a = draw(st.integers(1, c - 1))
            b = draw(st.integers(1, c - a))
            S1, S2 = set(perm[:a]), set(perm[a:a + b])
            for x in S1 | S2:
                w[x] = max(w[x], 1)
            if sum(w[x] for x in S1) == sum(w[x] for x in S2):
                w[min(S1)] += 1
            if sum(w[x] for x in S1) < sum(w[x] for x in S2):
                S1, S2 = S2, S1
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        r = draw(st.integers(1, 5))
        for t in range(L):
            raw["aspects"][t] = frozenset(raw["aspects"][t] - S1 - S2)
        raw["aspects"][p], raw["aspects"][q] = frozenset(S1), frozenset(S2)
        raw["ratings"][p] = raw["ratings"][q] = r
        orig = list(raw["items"])
        lab = raw["labels"]
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", "<", "original",
                     f"rank {p + 1} shows {sorted(lab[x] for x in S1)} (total weight "
                     f"{sum(w[x] for x in S1)}), rank {q + 1} shows {sorted(lab[x] for x in S2)} "
                     f"(total weight {sum(w[x] for x in S2)}) of {sum(w)}, both rated {r}")

    return case()


def _miss_over_non_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        raw["ratings"][p] = 0
        raw["ratings"][q] = None
        raw["aspects"][q] = draw(st.frozensets(st.integers(0, c - 1), min_size=1, max_size=c))
        if zero_weights and draw(st.booleans()):
            # boundary family: the user has no interest in any aspect of the unrated item
            shown = set(raw["aspects"][q])
            if len(shown) == c:
                shown = {min(shown)}
                raw["aspects"][q] = frozenset(shown)
            for a in shown:
                raw["weights"][a] = 0
            if sum(raw["weights"]) == 0:
                raw["weights"][min(set(range(c)) - shown)] = 1
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", ">", "original",
                     f"rank {p + 1} is rated 0, rank {q + 1} is unrated and shows an aspect")

    return case()


_UNIVERSAL = {
    "Pri": (_pri_strategy, 2),
    "Deep": (_deep_strategy, 4),
    "AspRel": (_asp_rel_strategy, 2),
    "MoreAsp": (_more_asp_strategy, 2),
    "MissOverNon": (_miss_over_non_strategy, 2),
}


def _check_universal(axiom: str, spec: MetricSpec, *, max_examples: int, seed: int,
                     zero_weights: bool, n_counterexamples: int = 5) -> AxiomResult:
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.errors import NoSuchExample

    make, min_len = _UNIVERSAL[axiom]
    max_len = min(_max_length(spec, UNIVERSAL_LENGTH), UNIVERSAL_LENGTH)
    if max_len < min_len:
        return AxiomResult(axiom, str(spec), None, "forall", 0,
                           message=f"the cut-off {spec.k} leaves no room for the construction "
                                   f"(needs lists of {min_len})")
    count = [0]
    failing: dict = {}        # distinct failing scenes met while searching (before shrinking)

    def violated(case: _Case) -> bool:
        count[0] += 1
        ex = _evaluate_case(spec, axiom, case)
        if not ex.holds and len(failing) < 4 * n_counterexamples:
            failing.setdefault(str(ex), ex)
        return not ex.holds

    conf = settings(max_examples=int(max_examples), database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                    verbosity=Verbosity.quiet)
    try:
        case = find(make(zero_weights, max_len), violated, settings=conf, random=random.Random(seed))
    except NoSuchExample:
        return AxiomResult(axiom, str(spec), True, "forall", count[0],
                           message=f"no counterexample in {max_examples} generated scenes")
    example = _evaluate_case(spec, axiom, case)
    others = [e for key, e in failing.items() if key != str(example)]
    others.sort(key=lambda e: sum(len(r) for r in e.rankings.values()))   # smallest first
    found = [example] + others[:max(int(n_counterexamples) - 1, 0)]
    return AxiomResult(axiom, str(spec), False, "forall", count[0], example,
                       message=f"counterexample (shrunk by hypothesis); {len(found)} shown", counterexamples=found)


# --------------------------------------------------------------------------------------------
# existential axioms: direct constructions
# --------------------------------------------------------------------------------------------
def _variants(kind: str) -> list[tuple[str, dict, dict, dict]]:
    """(name, weights, extra aspects, extra ratings) of the scenes an existential axiom must hold in."""
    if kind == "sat":
        return [("listed aspects only", {"A": 1.0, "B": 1.0}, {}, {}),
                ("user also likes unlisted C", {"A": 1.0, "B": 1.0, "C": 1.0}, {"c_other": ("C",)},
                 {"c_other": 5.0})]
    return [("listed aspect only", {"A": 1.0}, {}, {}),
            ("user also likes unlisted B", {"A": 1.0, "B": 1.0}, {"b_other": ("B",)}, {"b_other": 5.0})]


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


def more_asp_threshold(gammas, x: float) -> float:
    r"""The second-order margin of αβ-nDCG on MoreAsp: :math:`	frac{x}{2}\sum_{\phi
earphi}
    \gamma_\phi\gamma_arphi` over ordered pairs of distinct aspects of one item.

    At a rank where no aspect is yet shown, an item with aspects of weights :math:`\gamma_\phi`
    gains :math:`1-\prod_\phi(1-x\gamma_\phi) = x\sum_\phi\gamma_\phi - x^2\sum_{\phi<arphi}
    \gamma_\phi\gamma_arphi + O(x^3)` (Eq. 13, :math:`x = eta r/r_{max}`), so against an item
    showing one aspect of weight :math:`\gamma'` it wins (to second order) only when
    :math:`\sum_\phi\gamma_\phi - \gamma' > 	frac{x}{2}\sum_{\phi
earphi}\gamma_\phi\gamma_arphi`.
    """
    g = np.asarray(list(gammas), dtype=float)
    return float(x / 2.0 * (g.sum() ** 2 - (g ** 2).sum()))


def _non_pri_sat_asp_cases(spec, weights, extra_asp, extra_r, v_name):
    L = _max_length(spec, UNBOUNDED_LENGTH)
    cases = []
    for gap in (1, 2):
        max_m = min(L - 1 - gap, 20)
        for m in range(1, max_m + 1):
            for r in range(1, 5):
                for d in range(1, 6 - r):
                    sat = [f"b{t}" for t in range(1, m + 1)]
                    fill = [f"f{t}" for t in range(1, gap)]
                    aspects = {**{b: ("B",) for b in sat}, **{f: () for f in fill},
                               "x": ("A",), "y": ("B",), **extra_asp}
                    ratings = {**{b: 5.0 for b in sat}, **{f: 0.0 for f in fill},
                               "x": float(r), "y": float(r + d), **extra_r}
                    orig = sat + ["x"] + fill + ["y"]
                    cases.append(_Case(Scene(aspects, ratings, dict(weights)),
                                       {"original": orig, "swapped": _swap(orig, m, m + gap)},
                                       "swapped", "<", "original",
                                       f"scene '{v_name}': B saturated by {m} items rated 5; A-item x "
                                       f"rated {r}, B-item y rated {r + d}, {gap - 1} filler(s) between"))
    return cases


def _depths(n_max: int) -> list[int]:
    grid = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500]
    return sorted({n for n in grid if n <= n_max} | {n_max})


def _top_heav_rankings(n: int, r: int, weights, extra_asp, extra_r, v_name) -> _Case:
    tops = [f"t{t}" for t in range(1, n + 1)]
    zeros = [f"z{t}" for t in range(1, 2 * n)]
    aspects = {**{x: ("A",) for x in tops + zeros}, **extra_asp}
    ratings = {**{x: float(r) for x in tops}, **{x: 0.0 for x in zeros}, **extra_r}
    one_on_top = [tops[0]] + zeros
    deep = zeros[:n] + tops
    return _Case(Scene(aspects, ratings, dict(weights)), {"one_on_top": one_on_top, "n_after_n": deep},
                 "one_on_top", ">", "n_after_n",
                 f"scene '{v_name}': n={n}, relevant items rated {r}, all items show A", group=r)


def _top_heav_cases(spec, weights, extra_asp, extra_r, v_name):
    n_max = _max_length(spec, UNBOUNDED_LENGTH) // 2
    if n_max < 1:
        return []
    return [_top_heav_rankings(n_max, r, weights, extra_asp, extra_r, v_name) for r in range(1, 6)]


def _top_heav_comp_cases(spec, weights, extra_asp, extra_r, v_name):
    n_max = _max_length(spec, UNBOUNDED_LENGTH) // 2
    if n_max < 1:
        return []
    out = []
    for m in _depths(n_max):
        for r in range(1, 6):
            c = _top_heav_rankings(m, r, weights, extra_asp, extra_r, v_name)
            out.append(_Case(c.scene, c.rankings, "one_on_top", "<", "n_after_n", c.note.replace("n=", "m="),
                             group=r))
    return out


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def pri(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
        n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    """Axiom 1 (Priority inside aspect): see the module docstring."""
    return _check_universal("Pri", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def deep(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
         n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    """Axiom 2 (Deepness inside aspect)."""
    return _check_universal("Deep", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def asp_rel(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
            n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    """Axiom 6 (Aspect relevance)."""
    return _check_universal("AspRel", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def more_asp(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
             n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    """Axiom 7 (Prefer more aspect contribution)."""
    return _check_universal("MoreAsp", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def miss_over_non(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
                  n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    """Axiom 8 (Missing over non-relevant)."""
    return _check_universal("MissOverNon", _spec(metric), max_examples=max_examples, seed=seed,
                            zero_weights=zero_weights, n_counterexamples=n_counterexamples)


def non_pri_sat_asp(metric, **_ignored) -> AxiomResult:
    """Axiom 3 (Non-priority on saturated aspects): direct construction."""
    return _check_existential("NonPriSatAsp", _spec(metric), _non_pri_sat_asp_cases, "sat")


def _check_r_quantifier(r_quantifier: str) -> str:
    q = str(r_quantifier).lower()
    if q not in R_QUANTIFIERS:
        raise unknown_name("rating quantifier", r_quantifier, R_QUANTIFIERS)
    return q


def top_heav(metric, *, r_quantifier: str = "exists", **_ignored) -> AxiomResult:
    """Axiom 4 (Top-heaviness threshold): direct construction at the largest n the list allows;
    ``r_quantifier``: a witness at some rating r (``"exists"``) or at every r (``"forall"``)."""
    return _check_existential("TopHeav", _spec(metric), _top_heav_cases, "depth",
                              r_quantifier=_check_r_quantifier(r_quantifier))


def top_heav_comp(metric, *, r_quantifier: str = "exists", **_ignored) -> AxiomResult:
    """Axiom 5 (Top-heaviness threshold, complementary): direct construction over m (and r)."""
    return _check_existential("TopHeavComp", _spec(metric), _top_heav_comp_cases, "depth",
                              r_quantifier=_check_r_quantifier(r_quantifier))


_CHECKS = {"Pri": pri, "Deep": deep, "NonPriSatAsp": non_pri_sat_asp, "TopHeav": top_heav,
           "TopHeavComp": top_heav_comp, "AspRel": asp_rel, "MoreAsp": more_asp,
           "MissOverNon": miss_over_non}


def _axiom_name(axiom: str) -> str:
    for a in AXIOMS:
        if a.lower() == str(axiom).lower():
            return a
    raise unknown_name("axiom", str(axiom), AXIOMS)


def check(axiom: str, metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
          r_quantifier: str = "exists", n_counterexamples: int = 5) -> AxiomResult:
    """Check one axiom (a name of :data:`AXIOMS`) on one metric (a name like ``"ab-nDCG@10"``).

    ``r_quantifier`` applies to TopHeav and TopHeavComp (see the module docstring);
    ``n_counterexamples``: how many distinct counterexamples a universal axiom returns.
    """
    name = _axiom_name(axiom)
    return _CHECKS[name](metric, max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                         r_quantifier=_check_r_quantifier(r_quantifier), n_counterexamples=n_counterexamples)


@dataclass
class AxiomReport:
    """Every (metric, axiom) result; ``table`` is the satisfaction matrix."""

    results: dict = field(default_factory=dict)     # (metric, axiom) -> AxiomResult
    metrics: list = field(default_factory=list)
    axioms: list = field(default_factory=list)

    @property
    def table(self) -> pd.DataFrame:
        """Metrics x axioms: True (satisfied), False (violated), None (not applicable)."""
        data = [[self.results[(m, a)].satisfied for a in self.axioms] for m in self.metrics]
        return pd.DataFrame(data, index=pd.Index(self.metrics, name="metric"), columns=self.axioms, dtype=object)

    def symbols(self) -> pd.DataFrame:
        """The table with the paper's symbols: ● satisfied, ○ violated, – not applicable."""
        return self.table.map(lambda v: "●" if v is True else ("○" if v is False else "–"))

    def result(self, metric, axiom: str) -> AxiomResult:
        return self.results[(str(_spec(metric)), _axiom_name(axiom))]

    def examples(self) -> pd.DataFrame:
        """One row per (metric, axiom): outcome, expectation, scores and the example's note."""
        rows = []
        for (m, a), r in self.results.items():
            ex = r.example
            rows.append({"metric": m, "axiom": a, "satisfied": r.satisfied, "quantifier": r.quantifier,
                         "cases": r.cases, "expectation": ex.expectation if ex else "",
                         "scores": ({k: round(v, 6) for k, v in ex.scores.items()} if ex else {}),
                         "example": ex.note if ex else r.message})
        return pd.DataFrame(rows)

    def compare(self, paper: Mapping = PAPER_TABLE1) -> pd.DataFrame:
        """(metric, axiom) cells where our result and the paper's Table 1 disagree."""
        rows = []
        for (m, a), r in self.results.items():
            name = _spec(m).name
            if name in paper and a in paper[name] and r.satisfied is not None and paper[name][a] != r.satisfied:
                rows.append({"metric": m, "axiom": a, "paper": paper[name][a], "measured": r.satisfied,
                             "example": str(r.example) if r.example else r.message})
        return pd.DataFrame(rows, columns=["metric", "axiom", "paper", "measured", "example"])


def evaluate(metrics: Iterable = PAPER_METRICS, axioms: Iterable[str] = AXIOMS, *, max_examples: int = 100,
             seed: int = 0, zero_weights: bool = False, progress: Callable | None = None,
             r_quantifier: str = "exists", n_counterexamples: int = 5) -> AxiomReport:
    """Check every axiom on every metric; ``progress(metric, axiom)`` is called before each check."""
    specs = [_spec(m) for m in ([metrics] if isinstance(metrics, (str, MetricSpec)) else metrics)]
    names = [_axiom_name(a) for a in axioms]
    report = AxiomReport(metrics=[str(s) for s in specs], axioms=names)
    for s in specs:
        for a in names:
            if progress is not None:
                progress(str(s), a)
            report.results[(str(s), a)] = check(a, s, max_examples=max_examples, seed=seed,
                                                zero_weights=zero_weights, r_quantifier=r_quantifier,
                                                n_counterexamples=n_counterexamples)
    return report


def table(metrics: Iterable = PAPER_METRICS, axioms: Iterable[str] = AXIOMS, **kw) -> pd.DataFrame:
    """The satisfaction matrix (metrics x axioms, True/False/None); see :func:`evaluate`."""
    return evaluate(metrics, axioms, **kw).table
