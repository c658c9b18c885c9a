"""Constructed scenes of the existential axioms (NonPriSatAsp, TopHeav, TopHeavComp).

An existential axiom ("there is a saturation / a depth n such that ...") is checked over a grid
of direct constructions, each a ``_Case`` (scene, the two rankings compared, the relation the
axiom expects), built for each scene variant of ``_variants``: the listed aspects only, and a
user who also likes an aspect the lists never show. The grids:

* NonPriSatAsp: aspect B saturated by m <= 20 items rated 5, then an A-item rated r, gap-1 fillers
  rated 0 without aspects, and a B-item rated r + Δ (gap in 1, 2; r in 1..4; Δ in 1..5-r).
* TopHeav: one item rated r then 2n-1 rated 0, against n rated 0 then n rated r, at the largest
  n the list allows (k/2 for a cut-off k, ``UNBOUNDED_LENGTH``/2 without), r in 1..5.
* TopHeavComp: the same rankings at depths m of ``_depths`` (1, 2, 3, ... up to that n), r in 1..5.

Each construction's ``group`` is its rating r (TopHeav / TopHeavComp), which the check with
``r_quantifier="forall"`` needs a witness for.
"""
from __future__ import annotations

from .scenes import UNBOUNDED_LENGTH, Scene, _Case, _max_length, _swap


def _variants(kind: str) -> list[tuple[str, dict, dict, dict]]:
    """(name, weights, extra aspects, extra ratings) of the scenes an existential axiom must hold in."""
    if kind == "sat":
        return [("listed aspects only", {"A": 1.0, "B": 1.0}, {}, {}),
                ("user also likes unlisted C", {"A": 1.0, "B": 1.0, "C": 1.0}, {"c_other": ("C",)},
                 {"c_other": 5.0})]
    return [("listed aspect only", {"A": 1.0}, {}, {}),
            ("user also likes unlisted B", {"A": 1.0, "B": 1.0}, {"b_other": ("B",)}, {"b_other": 5.0})]


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
