r"""The eight axioms of Parapar & Radlinski (RecSys 2021, Sec. 4.1), one check function each.

``AXIOMS`` names them in the paper's order and ``QUANTIFIER`` says how each is checked
(``"forall"``: a counterexample search over generated scenes; ``"exists"``: a witness search over
constructions, see :mod:`.checkers`). :func:`check` dispatches by name (case-insensitive).
:func:`more_asp_threshold` is the second-order margin that explains αβ-nDCG's MoreAsp
counterexamples. The formalisation of each axiom, where the paper's wording leaves room, is in
the docstring of :mod:`recmetrics.meta.axioms`.
"""
from __future__ import annotations

import numpy as np

from ...errors import unknown_name
from ...metrics.registry import MetricSpec, parse
from .checkers import AxiomResult, _check_existential, _check_universal
from .constructions import _non_pri_sat_asp_cases, _top_heav_cases, _top_heav_comp_cases

AXIOMS = ("Pri", "Deep", "NonPriSatAsp", "TopHeav", "TopHeavComp", "AspRel", "MoreAsp", "MissOverNon")
QUANTIFIER = {"Pri": "forall", "Deep": "forall", "NonPriSatAsp": "exists", "TopHeav": "exists",
              "TopHeavComp": "exists", "AspRel": "forall", "MoreAsp": "forall", "MissOverNon": "forall"}
R_QUANTIFIERS = ("exists", "forall")

__all__ = ["AXIOMS", "QUANTIFIER", "R_QUANTIFIERS", "more_asp_threshold", "check", "pri", "deep",
           "non_pri_sat_asp", "top_heav", "top_heav_comp", "asp_rel", "more_asp", "miss_over_non"]


def _spec(metric) -> MetricSpec:
    return parse(metric)


def more_asp_threshold(gammas, x: float) -> float:
    r"""The second-order margin of αβ-nDCG on MoreAsp: :math:`\frac{x}{2}\sum_{\phi\ne\varphi}
    \gamma_\phi\gamma_\varphi` over ordered pairs of distinct aspects of one item.

    At a rank where no aspect is yet shown, an item with aspects of weights :math:`\gamma_\phi`
    gains :math:`1-\prod_\phi(1-x\gamma_\phi) = x\sum_\phi\gamma_\phi - x^2\sum_{\phi<\varphi}
    \gamma_\phi\gamma_\varphi + O(x^3)` (Eq. 13 of Parapar & Radlinski 2021,
    :math:`x = \beta r/r_{max}`), so against an item showing one aspect of weight
    :math:`\gamma'` it wins (to second order) only when
    :math:`\sum_\phi\gamma_\phi - \gamma' > \frac{x}{2}\sum_{\phi\ne\varphi}\gamma_\phi\gamma_\varphi`.

    ``gammas``: the normalised weights :math:`\gamma_\phi` of the item's aspects; ``x``:
    :math:`\beta r/r_{max}` (αβ-nDCG's default β = 0.5 and a rating 5 of 5 give 0.5).
    One aspect has no pair: the threshold is 0.

    >>> more_asp_threshold([0.5, 0.25], 0.5)
    0.0625
    >>> more_asp_threshold([0.3], 0.5)
    0.0
    """
    g = np.asarray(list(gammas), dtype=float)
    return float(x / 2.0 * (g.sum() ** 2 - (g ** 2).sum()))


def pri(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
        n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    r"""Axiom 1 (Priority inside aspect, Pri; Parapar & Radlinski 2021, Eq. 17), universal.

    .. math:: r_{u,i_q} > r_{u,i_p},\ a_n \in i_p, i_q,\ \forall_{\phi\ne n}\, a_\phi \notin i_p, i_q
              \implies Q(\vec\imath_{p\leftrightarrow q}) > Q(\vec\imath), \quad p < q

    Items at p < q show only aspect :math:`a_n` and are both rated (0..5) with
    :math:`r_q > r_p`; swapping them must increase Q. Searched with ``hypothesis`` over
    ``max_examples`` generated scenes (default 100; ``seed`` 0), lists up to the cut-off (8 items
    without one). ``zero_weights`` (default False): whether the user may have weight 0 on some
    aspects; ``n_counterexamples`` (default 5): how many distinct counterexamples to return.
    Other keyword arguments are ignored (so :func:`check` can pass every option).

    >>> pri("ab-nDCG@10", max_examples=20).satisfied
    True
    """
    return _check_universal("Pri", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def deep(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
         n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    r"""Axiom 2 (Deepness inside aspect, Deep; Parapar & Radlinski 2021, Eq. 18), universal.

    .. math:: p < q,\ r_{u,i_p} = r_{u,i_q} < r_{u,i_{p+1}} = r_{u,i_{q+1}},\ \text{all four show only } a_n
              \implies Q(\vec\imath_{p\leftrightarrow p+1}) > Q(\vec\imath_{q\leftrightarrow q+1})

    Four items at p, p+1, q, q+1 (q >= p+2) show only :math:`a_n`; correcting the pair at p
    must beat correcting it at q. Options as in :func:`pri`; a cut-off below 4 leaves no room
    (``satisfied=None``).

    >>> deep("nDCG@10", max_examples=20).satisfied
    True
    """
    return _check_universal("Deep", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def asp_rel(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
            n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    r"""Axiom 6 (Aspect relevance, AspRel; Parapar & Radlinski 2021, Eq. 22), universal.

    .. math:: r_{u,j} = r_{u,j'} > 0,\ j \text{ shows only } a_n,\ j' \text{ only } a_{n'},\
              w(u,a_n) > w(u,a_{n'}) \implies Q(\vec\imath_{j\leftrightarrow j'}) < Q(\vec\imath)

    Equally rated items j above j' show one aspect each and no other listed item shows either
    aspect (:math:`s = 0`); swapping them (the less liked aspect first) must decrease Q. Options
    as in :func:`pri`.

    >>> asp_rel("ab-nDCG@10", max_examples=20).satisfied
    True
    """
    return _check_universal("AspRel", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def more_asp(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
             n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    r"""Axiom 7 (Prefer more aspect contribution, MoreAsp; Parapar & Radlinski 2021, Eq. 23), universal.

    .. math:: r_{u,j} = r_{u,j'},\ \sum_{a_\phi\in j} w(u,a_\phi) - w(\vec\imath,a_\phi) >
              \sum_{a_\phi\in j'} w(u,a_\phi) - w(\vec\imath,a_\phi)
              \implies Q(\vec\imath_{j\leftrightarrow j'}) < Q(\vec\imath)

    Equally rated (r > 0) items j above j' show disjoint aspect sets of positive weight that no
    other listed item shows (none saturated, :math:`w(\vec\imath,a) = 0`); j's remaining
    interest is larger; swapping them must decrease Q. Eq. 23 prints the inequality the other way
    round, against its own prose; we follow the prose. Half the generated scenes sit at the
    boundary (several aspects against one whose weight is one unit less than their sum), where
    αβ-nDCG's second-order term can win (:func:`more_asp_threshold`). Options as in :func:`pri`.

    >>> more_asp("ab-nDCG@10", max_examples=20).satisfied
    False
    """
    return _check_universal("MoreAsp", _spec(metric), max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                            n_counterexamples=n_counterexamples)


def miss_over_non(metric, *, max_examples: int = 100, seed: int = 0, zero_weights: bool = False,
                  n_counterexamples: int = 5, **_ignored) -> AxiomResult:
    r"""Axiom 8 (Missing over non-relevant, MissOverNon; Parapar & Radlinski 2021, Eq. 24), universal.

    .. math:: r_{u,j} = 0,\ \nexists r_{u,j'},\ \exists a_\phi \in j' \mid s(u,a_\phi) < 1
              \implies Q(\vec\imath_{j\leftrightarrow j'}) > Q(\vec\imath)

    j rated 0 above an unrated j' that shows at least one aspect; swapping them must increase Q.
    Options as in :func:`pri`; with ``zero_weights=True`` half the scenes give the user no
    interest in any aspect of j'.

    >>> miss_over_non("ab-nDCG@10", max_examples=20).satisfied
    True
    >>> miss_over_non("a-nDCG@10", max_examples=20).satisfied
    False
    """
    return _check_universal("MissOverNon", _spec(metric), max_examples=max_examples, seed=seed,
                            zero_weights=zero_weights, n_counterexamples=n_counterexamples)


def non_pri_sat_asp(metric, **_ignored) -> AxiomResult:
    r"""Axiom 3 (Non-priority on saturated aspects, NonPriSatAsp; Parapar & Radlinski 2021, Eq. 19), existential.

    .. math:: \exists r_\Delta, s_\Delta > 0 \mid r_{u,i_{p+k}} - r_{u,i_p} = r_\Delta,\
              s(\vec\imath[0..p], a_{n'}) - s(\vec\imath[0..p], a_n) = s_\Delta
              \implies Q(\vec\imath_{p\leftrightarrow p+k}) < Q(\vec\imath)

    Direct construction: aspect B saturated by m <= 20 items rated 5 at the top, then an A-item
    rated r, gap-1 fillers rated 0 and a B-item rated r + Δ, w(A) = w(B); some (m, gap, r, Δ)
    must make the swap (B-item first) lower Q, in both scenes (the listed aspects only; a user who
    also likes an unlisted aspect C). No options (others are ignored).

    >>> r = non_pri_sat_asp("ab-nDCG@10")
    >>> r.satisfied, r.quantifier
    (True, 'exists')
    """
    return _check_existential("NonPriSatAsp", _spec(metric), _non_pri_sat_asp_cases, "sat")


def _check_r_quantifier(r_quantifier: str) -> str:
    q = str(r_quantifier).lower()
    if q not in R_QUANTIFIERS:
        raise unknown_name("rating quantifier", r_quantifier, R_QUANTIFIERS)
    return q


def top_heav(metric, *, r_quantifier: str = "exists", **_ignored) -> AxiomResult:
    r"""Axiom 4 (Top-heaviness threshold, TopHeav; Parapar & Radlinski 2021, Eq. 20), existential.

    .. math:: \exists n \in \mathbb{N}^+ \mid
              Q(i^r_1, i^0_2, \dots, i^0_{2n}) > Q(i^0_1, \dots, i^0_n, i^r_{n+1}, \dots, i^r_{2n}),\ r > 0

    Direct construction at the largest n the list allows (n = k/2 for a cut-off k, 500 without
    one), every item showing the same aspect: a top-heavy metric must eventually prefer the single
    top item. ``r_quantifier`` (the paper leaves it open): ``"exists"`` (default) a witness at
    some rating r in 1..5 suffices; ``"forall"`` needs one at every r, and each r without one is
    a counterexample. Anything else raises :class:`~recmetrics.errors.UnknownNameError`.

    >>> top_heav("ab-nDCG@10").satisfied
    True
    >>> top_heav("S-RR").satisfied
    False
    """
    return _check_existential("TopHeav", _spec(metric), _top_heav_cases, "depth",
                              r_quantifier=_check_r_quantifier(r_quantifier))


def top_heav_comp(metric, *, r_quantifier: str = "exists", **_ignored) -> AxiomResult:
    r"""Axiom 5 (Top-heaviness threshold, complementary, TopHeavComp; Parapar & Radlinski 2021, Eq. 21), existential.

    .. math:: \exists m \in \mathbb{N}^+ \mid
              Q(i^r_1, i^0_2, \dots, i^0_{2m}) < Q(i^0_1, \dots, i^0_m, i^r_{m+1}, \dots, i^r_{2m}),\ r > 0

    The rankings of :func:`top_heav` over a grid of depths m (1, 2, 3, 4, 5, 7, 10, ... up to the
    largest the list allows) and ratings r; some m must make the second ranking win.
    ``r_quantifier`` as in :func:`top_heav` (default ``"exists"``; αβ-nDCG with β = 0.5 has no
    witness for r >= 3 under ``"forall"``).

    >>> top_heav_comp("ab-nDCG@10").satisfied
    True
    >>> top_heav_comp("ab-nDCG@10", r_quantifier="forall").satisfied
    False
    """
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

    Parapar & Radlinski (2021), Sec. 4.1: dispatches to :func:`pri`, :func:`deep`,
    :func:`non_pri_sat_asp`, :func:`top_heav`, :func:`top_heav_comp`, :func:`asp_rel`,
    :func:`more_asp` or :func:`miss_over_non`. The axiom name is case-insensitive; an unknown
    axiom, metric or ``r_quantifier`` raises :class:`~recmetrics.errors.UnknownNameError` with
    the closest names. ``max_examples`` (100), ``seed`` (0), ``zero_weights`` (False) and
    ``n_counterexamples`` (5, how many distinct counterexamples a universal axiom returns) apply
    to the universal axioms; ``r_quantifier`` (``"exists"``) to TopHeav and TopHeavComp (see the
    module docstring of :mod:`recmetrics.meta.axioms`).

    >>> r = check("pri", "ab-nDCG@10", max_examples=20)
    >>> r.axiom, r.satisfied
    ('Pri', True)
    """
    name = _axiom_name(axiom)
    return _CHECKS[name](metric, max_examples=max_examples, seed=seed, zero_weights=zero_weights,
                         r_quantifier=_check_r_quantifier(r_quantifier), n_counterexamples=n_counterexamples)
