"""Aggregation of per-user values: arithmetic, geometric, harmonic and quadratic means.

The geometric and harmonic means floor values at ``1e-5`` (trec_eval's ``MIN_GEO_MEAN``, as in
gm_map) so that a single zero does not collapse the mean to 0 (geometric) or make it undefined
(harmonic); Schröder et al. call them GMAP, HMAP and QMAP when applied to AP.

The floor matters for the harmonic mean: with a share z of users scoring 0, HMAP ≈ 1e-5 / z (the
zeros dominate the sum of reciprocals), so it measures how many users score 0 more than how well
the others are served. ``floor=None`` gives the plain means instead: the harmonic and the
geometric mean are then 0 as soon as one user scores 0.

The geometric, harmonic and quadratic means reject negative values (MCC, markedness,
informedness and boolean τ can be negative): the quadratic mean would drop their sign (a perfect
and an inverted ranking would score alike). Use those metrics' ``unit=true`` variant, which maps
x to (1 + x)/2.

F1 aggregated (paper 000 §7, GF1) has two readings, :data:`F1_READINGS`: ``per-user`` — the mean
of the per-user F1 values of Eq. 3, what ``aggregate(f1_values, ...)`` gives — and ``aggregate`` —
F1 of the aggregated precision and recall, 2·M(P)·M(R)/(M(P) + M(R)) (:func:`f1_of_means`). Per
user, F1@n = P@n · 2n/(n + |R_u|): the factor does not depend on the system, so under the
per-user reading the geometric mean GF1 is GP times a constant on every user with a hit, and GF1,
GP and GRecall (Recall@n = P@n · n/|R_u|) differ only through which users have no hit at all
(floored to the same value in all three).

Which users' zeros count as what (``reading``, :data:`GEOMETRIC_READINGS`). Papers 000 and 003 were
computed with rec_eval (github.com/dvalcarce/rec_eval, the authors' fork of trec_eval 9.0.4), whose
geometric measures do not all treat a zero alike:

* ``"trec_eval"`` (the default): every value is floored, ``log max(x, 1e-5)`` — trec_eval's
  ``gm_map`` and ``gm_bpref``, and rec_eval's ``gm_map``, ``gm_bpref``, ``gm_set_P``,
  ``gm_set_recall``, ``gm_err``, ``gm_ndcg``, ``gm_infAP2``.
* ``"rec_eval"``: as above, except GF1 and GMRR. rec_eval's ``m_gm_set_F.c`` and
  ``m_gm_recip_rank.c`` write ``log max(v, 1e-5)`` only when the user has a relevant item in the
  list (``num_rel_ret > 0``; a relevant item found), and ``trec_eval.c`` sets every measure to 0
  before each user ("zero out all measures for new query"): a user with a list but no hit enters
  GF1 and GMRR as log 1 = 0, the *best* score, not the floor. Users the run has no list for are
  patched in at ``log 1e-5`` by ``te_calc_avg_meas_s_gm`` (``-c``); per-user scores do not say
  which zeros those are, so pass ``listed`` (False for them) when some user has no list.
  :func:`zero_counts_as` gives the reading per metric (:data:`REC_EVAL_HIT_ONLY`).

Other differences between rec_eval and trec_eval that touch the papers' metrics (read in its
sources; the per-user metrics of this package follow trec_eval and the papers' equations):
``ERR`` (``m_err.c``) divides the gain 2^r − 1 by 2^(r_max) with r_max the *user's* highest judged
grade (``num_rel_levels − 1``), not the dataset's maximum that 000's Eq. 8 states and
:func:`~recmetrics.metrics.ranking.expected_reciprocal_rank` uses; F1 is ``set_F`` over the
retrieved list (``-M n``), precision dividing by the list's length rather than n (equal when every
list has n items); its build compiles no ``gm_ndcg_cut`` (``m_gm_ndcg_cut.c`` is not in its
Makefile), so GnDCG@n is ``gm_ndcg`` on a list cut at n, whose ideal DCG runs over all the
user's judgments instead of the top n (equal for users with at most n judged items); infAP is
``infAP2`` (``m_infap2.c``), an unrated item counted as pooled but unjudged — this package's
``infAP(unjudged=pooled)``. ``benchmarks/bench_rec_eval_reading.py --rec-eval PATH`` sets a
rec_eval binary's measures against this package's on the same runs and judgments.

>>> import numpy as np
>>> f1 = np.array([0.5, 0.0])            # one user with a hit (F1 0.5), one without
>>> round(float(aggregate(f1, "geometric")), 6)   # exp((log 0.5 + log 1e-5) / 2)
0.002236
>>> round(float(aggregate(f1, "geometric(rec_eval)", metric="F1@100")), 6)   # exp((log 0.5 + log 1) / 2)
0.707107
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import InputError, unknown_name

MIN_GEO_MEAN = 1e-5

_ALIASES = {"arithmetic": "arithmetic", "mean": "arithmetic", "a": "arithmetic", "am": "arithmetic",
            "geometric": "geometric", "gm": "geometric", "g": "geometric", "gmean": "geometric",
            "harmonic": "harmonic", "hm": "harmonic", "h": "harmonic", "hmean": "harmonic",
            "quadratic": "quadratic", "qm": "quadratic", "q": "quadratic", "rms": "quadratic"}
METHODS = ("arithmetic", "geometric", "harmonic", "quadratic")
#: how an aggregated F1 is read: the mean of per-user F1 (Eq. 3 per user, then the mean) or the F1
#: of the aggregated precision and recall
F1_READINGS = ("per-user", "aggregate")
#: which users' zeros count as what in the geometric mean (module docstring): ``trec_eval`` floors
#: every zero at 1e-5; ``rec_eval`` (the papers' tool) counts a listed user's zero in GF1 and GMRR
#: as log 1 = 0, the best score
GEOMETRIC_READINGS = ("trec_eval", "rec_eval")
#: the metrics whose rec_eval geometric measure is written only on a hit (m_gm_set_F.c, m_gm_recip_rank.c)
REC_EVAL_HIT_ONLY = ("F1", "RR")

_READING_RE = re.compile(r"^\s*([A-Za-z]+)\s*\(\s*([^()]*?)\s*\)\s*$")


def method_name(method: str) -> str:
    """The canonical name of an aggregation (``"gm"`` → ``"geometric"``), for the callers that take
    no reading of the geometric mean's zeros: ``"geometric(rec_eval)"`` is refused here rather
    than read as trec_eval's (:func:`parse_aggregate` and :func:`aggregate_name` keep a reading)."""
    key, reading = parse_aggregate(method)
    if reading != "trec_eval":
        raise InputError(f"aggregation {method!r}: only trec_eval's reading of the geometric mean is available here "
                         f"(give {key!r}); rec_eval's is taken by aggregate(), evaluate(), Study and the robustness study")
    return key


def parse_aggregate(method: str, reading: str | None = None) -> tuple[str, str]:
    """``(method, reading)`` of an aggregation written ``NAME`` or ``NAME(READING)``:
    ``"geometric(rec_eval)"`` → ``("geometric", "rec_eval")``; ``reading`` (a keyword) may say it
    instead, and must not contradict it. The reading defaults to ``"trec_eval"``; another one is
    only defined for the geometric mean.

    >>> parse_aggregate("gm(rec_eval)"), parse_aggregate("mean")
    (('geometric', 'rec_eval'), ('arithmetic', 'trec_eval'))
    """
    text = str(method)
    written = None
    m = _READING_RE.match(text)
    if m:
        text, written = m.group(1), m.group(2)
    key = _ALIASES.get(text.strip().lower())
    if key is None:
        raise unknown_name("aggregation", str(method), METHODS)
    for r in (written, reading):
        if r is not None and r not in GEOMETRIC_READINGS:
            raise InputError(f"reading of the geometric mean must be one of {GEOMETRIC_READINGS}, got {r!r} "
                             f"(in aggregate={method!r})")
    if written is not None and reading is not None and written != reading:
        raise InputError(f"aggregate={method!r} says reading {written!r} but reading={reading!r} was given")
    r = written or reading or "trec_eval"
    if r != "trec_eval" and key != "geometric":
        raise InputError(f"the {r} reading (which zeros count as log 1) is one of the geometric mean; "
                         f"aggregate={method!r} is the {key} mean")
    return key, r


def aggregate_name(method: str, reading: str | None = None) -> str:
    """The canonical text of an aggregation: ``"geometric"`` for trec_eval's reading,
    ``"geometric(rec_eval)"`` for rec_eval's (:func:`parse_aggregate`)."""
    key, r = parse_aggregate(method, reading)
    return key if r == "trec_eval" else f"{key}({r})"


def zero_counts_as(reading: str, metric) -> str:
    """What a zero of ``metric`` (a name like ``"F1@100"``, an alias, or a MetricSpec) counts as in
    the geometric mean under ``reading``: ``"floor"`` (log 1e-5) or ``"one"`` (log 1 = 0; rec_eval's
    GF1 and GMRR, :data:`REC_EVAL_HIT_ONLY`, for a user with a list but no hit).

    >>> zero_counts_as("rec_eval", "RR@100"), zero_counts_as("rec_eval", "P@10"), zero_counts_as("trec_eval", "F1@10")
    ('one', 'floor', 'floor')
    """
    if reading not in GEOMETRIC_READINGS:
        raise InputError(f"reading of the geometric mean must be one of {GEOMETRIC_READINGS}, got {reading!r}")
    if reading == "trec_eval":
        return "floor"
    from .registry import get

    name = getattr(metric, "name", None)
    if name is None:
        if not isinstance(metric, str) or not metric.strip():
            raise InputError(f"the {reading} reading needs each metric's name (e.g. 'F1@100'), got {metric!r}")
        name = get(re.split(r"[@(]", metric, maxsplit=1)[0].strip()).name
    return "one" if name in REC_EVAL_HIT_ONLY else "floor"


def _zero_is_one(x: np.ndarray, axis: int, reading: str, metric, listed) -> np.ndarray | None:
    """Boolean mask, broadcastable to ``x``, of the values that enter the geometric mean as 1
    (a listed user's zero of a hit-only metric under ``reading``), or None when there is none."""
    if reading == "trec_eval":
        return None
    if metric is None:
        raise InputError(f"the {reading} reading depends on the metric (zeros of {', '.join(REC_EVAL_HIT_ONLY)} "
                         "count as log 1, the others are floored): pass metric= (a name, or one per row)")
    if isinstance(metric, (str, bytes)) or hasattr(metric, "name"):
        rows = np.array(zero_counts_as(reading, metric) == "one")
    else:
        names = list(metric)
        if x.ndim != 2:
            raise InputError(f"one metric per row needs 2-D values, got shape {x.shape}")
        other = 1 - (axis % 2)
        if len(names) != x.shape[other]:
            raise InputError(f"metric= names {len(names)} metric(s) for {x.shape[other]} rows of values")
        rows = np.array([zero_counts_as(reading, m) == "one" for m in names])
        rows = rows[:, None] if other == 0 else rows[None, :]
    if not rows.any():
        return None
    one = (x == 0) & rows
    if listed is not None:
        ok = np.asarray(listed)
        if ok.dtype != bool:
            raise InputError(f"listed must be a boolean array (True: the run has a list for the user), got {ok.dtype}")
        try:
            one = one & np.broadcast_to(ok, x.shape)
        except ValueError:
            raise InputError(f"listed has shape {ok.shape}, the values {x.shape}") from None
    return one


def aggregate(values, method: str = "arithmetic", axis: int = -1, floor: float | None = MIN_GEO_MEAN, *,
              reading: str | None = None, metric=None, listed=None):
    """Aggregate per-user ``values`` along ``axis`` with the named mean.

    ``floor`` (geometric and harmonic means only): values below it are raised to it first
    (default 1e-5, trec_eval's ``MIN_GEO_MEAN``); ``None`` uses the values as they are.

    ``reading`` (geometric mean only; or written ``method="geometric(rec_eval)"``): which users'
    zeros count as what, :data:`GEOMETRIC_READINGS` — ``"trec_eval"`` (default) floors every zero;
    ``"rec_eval"`` counts a zero of F1 or RR as log 1 = 0 (module docstring), so it needs
    ``metric``: the metric's name, or for 2-D values one name per row of the other axis.
    ``listed`` (optional, boolean, broadcastable to ``values``): False for users the run has no list
    for, whose zeros rec_eval floors whatever the metric."""
    m, t = transformed(values, method, axis, floor, reading=reading, metric=metric, listed=listed)
    return untransformed(m, t.mean(axis=axis))


def transformed(values, method: str = "arithmetic", axis: int = -1, floor: float | None = MIN_GEO_MEAN, *,
                reading: str | None = None, metric=None, listed=None) -> tuple[str, np.ndarray]:
    """``(mean, t)``: the canonical name of ``method`` and ``values`` on the scale that mean averages
    (the values, their squares, logarithms or reciprocals, after the floor and the reading), checked
    as :func:`aggregate` checks them; ``aggregate(values, ...) == untransformed(mean, t.mean(axis))``
    bit for bit. Elementwise, so a subset of ``t``'s units (same layout) gives that subset's mean:
    many groups of units are aggregated from one transform."""
    x = np.asarray(values, dtype=np.float64)
    m, reading = parse_aggregate(method, reading)
    if x.shape[axis] == 0:
        raise InputError("cannot aggregate an empty set of users")
    if np.isnan(x).any():
        raise InputError("per-user values contain NaN; every evaluated user needs a value")
    if m == "arithmetic":
        return m, x
    if (x < 0).any():
        raise InputError(f"the {m} mean needs non-negative values (got {x.min():g}); for a metric that "
                         "can be negative (MCC, markedness, informedness, BKTau) use its unit=true variant, "
                         "which maps x to (1 + x)/2")
    if m == "quadratic":
        return m, x * x
    one = _zero_is_one(x, axis, reading, metric, listed) if m == "geometric" else None
    if floor is not None:
        if not floor > 0:
            raise InputError(f"floor must be positive or None, got {floor!r}")
        x = np.maximum(x, floor)
    if one is not None:
        x = np.where(one, 1.0, x)
    with np.errstate(divide="ignore"):
        return m, (np.log(x) if m == "geometric" else 1.0 / x)


def untransformed(method: str, mean):
    """The mean named ``method`` (canonical, as :func:`transformed` returns it) from the mean of its
    transformed values."""
    if method == "arithmetic":
        return mean
    if method == "quadratic":
        return np.sqrt(mean)
    with np.errstate(divide="ignore"):
        return np.exp(mean) if method == "geometric" else 1.0 / mean


def f1_of_means(precision, recall, method: str = "arithmetic", axis: int = -1,
                floor: float | None = MIN_GEO_MEAN, *, reading: str | None = None) -> np.ndarray:
    """F1 of the aggregated precision and recall: ``2·M(P)·M(R) / (M(P) + M(R))`` (0 when both are 0).

    ``precision``, ``recall``: per-user values (same shape), aggregated along ``axis`` with the named
    mean ``M`` (and ``floor`` and ``reading``, as :func:`aggregate`). This is the ``aggregate`` reading of an
    aggregated F1 (:data:`F1_READINGS`); the ``per-user`` reading is ``aggregate(f1_values, method)``.
    Paper 000 (Eq. 3) defines F1 per user and averages it, and does not say which reading its
    geometric GF1 (§7) used; under the per-user reading GF1 can differ from GP only through the
    users with no hit (module docstring). Chapter 07 runs both readings.

    >>> import numpy as np
    >>> p = np.array([[0.1, 0.0, 0.2]]); r = np.array([[0.5, 0.0, 0.4]])
    >>> round(float(f1_of_means(p, r)[0]), 4)  # 2 · 0.1 · 0.3 / 0.4
    0.15
    """
    p = aggregate(precision, method, axis=axis, floor=floor, reading=reading, metric="P")
    r = aggregate(recall, method, axis=axis, floor=floor, reading=reading, metric="Recall")
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    if p.shape != r.shape:
        raise InputError(f"precision and recall must have the same shape, got {np.shape(precision)} and "
                         f"{np.shape(recall)}")
    den = p + r
    return np.divide(2 * p * r, den, out=np.zeros(np.broadcast(p, r).shape), where=den > 0)
