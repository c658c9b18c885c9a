"""Scenes: the hypothetical users an axiom quantifies over, and the examples a check reports.

A :class:`Scene` is one user: item aspects, test ratings on a 0-5 scale (``R_MAX = 5``, relevant
from ``THRESHOLD = 4``, an absent item is unrated) and the aspect weights :math:`w(u,a)` of the
user's profile. An :class:`Example` is a scene with the rankings an axiom compares, the metric's
scores of them and whether the axiom's expectation holds. ``_Case`` (a scene, its rankings and
the expected relation, before scoring) is what the generators (:mod:`.strategies`,
:mod:`.constructions`) produce and the checkers (:mod:`.checkers`) score. The list lengths the
checks allow a metric without cut-off live here too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from ...metrics.registry import MetricSpec

R_MAX = 5.0
THRESHOLD = 4.0
UNIVERSAL_LENGTH = 8        # longest generated list for a metric without cut-off (universal axioms)
UNBOUNDED_LENGTH = 1000     # longest constructed list for a metric without cut-off (existential)

__all__ = ["R_MAX", "THRESHOLD", "UNIVERSAL_LENGTH", "UNBOUNDED_LENGTH", "Scene", "Example"]


@dataclass
class Scene:
    """One hypothetical user: item aspects, test ratings (absent = unrated), aspect weights.

    ``aspects``: item -> tuple of aspect labels; ``ratings``: item -> rating in 0..``R_MAX``
    (items absent are unrated); ``weights``: aspect -> the user's interest :math:`w(u,a) >= 0`,
    not necessarily normalised (the metrics receive it as a training profile whose Eq. 9
    estimate of Parapar & Radlinski (2021) is exactly these weights, normalised).

    >>> sc = Scene({"i1": ("A",), "i2": ("B",)}, {"i1": 5.0}, {"A": 3.0, "B": 1.0})
    >>> sc.normalised_weights()
    {'A': 0.75, 'B': 0.25}
    """

    aspects: dict
    ratings: dict
    weights: dict

    def normalised_weights(self) -> dict:
        """The weights divided by their sum, :math:`w(u,a)/\\sum_\\phi w(u,a_\\phi)` (all 0 if the sum is 0).

        >>> Scene({}, {}, {"A": 1.0, "B": 0.0}).normalised_weights()
        {'A': 1.0, 'B': 0.0}
        """
        tot = sum(self.weights.values())
        return {a: (w / tot if tot else 0.0) for a, w in self.weights.items()}


@dataclass
class Example:
    """A concrete case: the rankings compared, the scene, the scores and what the axiom expects.

    ``rankings``: name -> list of items (best first); ``scores``: name -> metric value;
    ``expectation``: e.g. ``"Q(swapped) > Q(original)"``; ``holds``: whether it holds here;
    ``note``: how the case was built. ``str(example)`` prints all of it with the rankings side
    by side (:meth:`frame`).

    >>> sc = Scene({"a": ("A",), "b": ("A",)}, {"a": 2.0, "b": 5.0}, {"A": 1.0})
    >>> ex = Example("Pri", "nDCG@2", sc, {"original": ["a", "b"], "swapped": ["b", "a"]},
    ...              {"original": 0.6, "swapped": 0.9}, "Q(swapped) > Q(original)", True)
    >>> ex.frame()  # doctest: +NORMALIZE_WHITESPACE
                 original       swapped
    rank
    1     a [A] r=2  b [A] r=5
    2     b [A] r=5  a [A] r=2
    """

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

        ``max_rows``: show only the first and last ranks of long rankings (default: every rank).
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


def _swap(lst: list, p: int, q: int) -> list:
    out = list(lst)
    out[p], out[q] = out[q], out[p]
    return out


def _max_length(spec: MetricSpec, unbounded: int) -> int:
    return int(spec.k) if spec.k is not None else unbounded
