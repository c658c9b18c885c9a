"""The statistics under the verdict rule of :mod:`recmetrics.meta.findings`: one comparison against
its noise (:class:`Comparison`, :func:`compare`), standard errors that are themselves estimates
(:class:`SE`: Student's t on their sample count), and a claim's comparisons as one family
(:func:`family`: intersection-union for ``agrees``, Holm's step-down for ``disagrees``), so that
the rule's error rates are what it states (issue 25 §2). The data split's replicates enter a
comparison as a paired test (:mod:`recmetrics.meta.replicates`). Import these from
:mod:`recmetrics.meta.findings`, which re-exports them.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import InputError

__all__ = ["NOISE_SE", "REL_TOL", "MIN_SE_SAMPLES", "SE", "Comparison", "compare", "family", "check_z"]

#: a difference must exceed this many standard errors (of the difference) to decide a comparison;
#: its two-sided level ``2·(1 − Φ(2)) = 4.55 %`` is the error rate the rule promises, per claim
NOISE_SE = 2.0
#: relative floating-point tolerance: differences below ``REL_TOL * max(1, |a|, |b|)`` are ties
REL_TOL = 1e-9
#: an se estimated from fewer samples than this is unknown (it decides nothing)
MIN_SE_SAMPLES = 2


class SE(float):
    """A standard error *estimated* from ``n`` samples (Monte Carlo draws, replicates): ``SE(0.01, n=5)``.

    A plain number passed as an se is taken as known (closed form, or estimated from so many draws
    that its own error does not matter, e.g. DP's ``sqrt(Σ p(1−p)/B)`` with B in the thousands);
    ``None`` or 0 is an exact value. An ``SE`` says the se is itself an estimate: the rule widens the
    band with Student's t on ``n − 1`` degrees of freedom (Welch–Satterthwaite for a difference), and
    an se of 0 (five identical samples) or from fewer than :data:`MIN_SE_SAMPLES` samples is unknown.

    >>> SE(0.0, n=5), compare(0.1333334, 0.1333333, SE(0.0, n=5), SE(0.0, n=5)).sign()
    (SE(0.0, n=5), 0)
    """

    n: int

    def __new__(cls, value: float, n: int):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InputError(f"SE: n must be a count of samples (an integer >= 0), got {n!r}")
        out = super().__new__(cls, value)
        out.n = int(n)
        return out

    def __repr__(self) -> str:
        return f"SE({float(self)!r}, n={self.n})"

    def __reduce__(self):
        return SE, (float(self), self.n)


def _check_z(z: float) -> float:
    if isinstance(z, bool) or not isinstance(z, (int, float, np.integer, np.floating)) or not (z > 0) \
            or not math.isfinite(float(z)):
        raise InputError(f"z (the noise band in standard errors) must be a finite number > 0, got {z!r}")
    return float(z)


def _var_df(se, what: str = "se") -> tuple[float, float]:
    """``(variance, degrees of freedom)`` of one se: exact → (0, inf), unknown → (inf, inf)."""
    if se is None:
        return 0.0, math.inf
    if isinstance(se, bool) or not isinstance(se, (int, float, np.integer, np.floating)):
        raise InputError(f"{what} must be a number >= 0, None (exact) or NaN (unknown), got {se!r}")
    v = float(se)
    if v < 0:
        raise InputError(f"{what} must be >= 0 (a standard error), got {v!r}")
    if math.isnan(v) or math.isinf(v):
        return math.inf, math.inf
    n = getattr(se, "n", None)
    if n is None:
        return v * v, math.inf
    if n < MIN_SE_SAMPLES or v == 0.0:
        return math.inf, math.inf
    return v * v, float(n - 1)


def _se_df(*ses) -> tuple[float, float]:
    """se of a sum/difference of independent estimates and its Welch–Satterthwaite degrees of freedom."""
    parts = [_var_df(s) for s in ses]
    var = sum(v for v, _ in parts)
    if math.isinf(var):
        return math.inf, math.inf
    denom = sum(v * v / d for v, d in parts if v > 0 and math.isfinite(d))
    return math.sqrt(var), (var * var / denom if denom > 0 else math.inf)


@functools.lru_cache(maxsize=512)
def _quantile(z: float, df: float) -> float:
    """The band in se: ``z`` for a known se, Student's t at the same coverage for ``df`` degrees of freedom."""
    if math.isinf(df):
        return z
    from scipy import stats

    return float(stats.t.ppf(stats.norm.cdf(z), df))


def _level(z: float) -> float:
    """The two-sided error rate of a ``z``-se band: 2·(1 − Φ(z))."""
    return math.erfc(z / math.sqrt(2.0))


@dataclass(frozen=True)
class Comparison:
    """One comparison ``a − b`` against its noise: ``gap`` (a − b), ``se`` of the difference (inf:
    unknown), its degrees of freedom ``df`` (inf: a known se), the floating-point tolerance ``tol``,
    a ``label`` for details; ``pair``/``values``: the two entries and their values, when a check
    needs them back. With data-split replicates it also holds their paired test: ``rep_gap`` (the
    mean per-replicate difference), ``rep_se`` (its batch-means se ``sd(d)/√R``, on ``R − 1``
    degrees of freedom) and ``votes = (replicates where a > b, R)``; the comparison then decides only
    when both tests decide the same way (its p-value is the larger of the two). An unknown Monte
    Carlo se then leaves the decision to the replicates (the full-split gap must point their way)."""

    label: str
    gap: float
    se: float
    df: float = math.inf
    tol: float = 0.0
    votes: tuple[int, int] | None = None
    pair: tuple | None = None
    values: tuple | None = None
    rep_gap: float | None = None
    rep_se: float = math.inf

    def _parts(self):
        if self.votes is None:
            yield self.gap, self.se, self.df, self.tol
            return
        # with replicates, an unknown Monte Carlo se (NaN, or 0 from identical samples) leaves the
        # decision to the replicates' paired test, computed from the same samples: the full-split
        # gap then only has to point the same way
        yield self.gap, (0.0 if math.isinf(self.se) else self.se), self.df, self.tol
        yield self.rep_gap, self.rep_se, float(self.votes[1] - 1), self.tol

    def sign(self, z: float = NOISE_SE) -> int:
        """+1 / −1 when ``|gap| > q·se + tol`` (``q`` = :func:`_quantile`), else 0 (with replicates:
        only when their paired test gives the same sign)."""
        z = _check_z(z)
        signs = set()
        for gap, se, df, tol in self._parts():
            if gap is None or not math.isfinite(gap) or math.isinf(se) or math.isnan(se):
                return 0
            band = _quantile(z, df) * se + tol
            signs.add(0 if abs(gap) <= band else (1 if gap > 0 else -1))
        return signs.pop() if len(signs) == 1 else 0

    @property
    def p(self) -> float:
        """Two-sided p-value of ``gap ≠ 0`` beyond the tolerance (1 when undecidable, 0 for an exact gap):
        ``p < level(z)`` exactly when :meth:`sign` decides, so Holm's step-down can order comparisons."""
        ps, dirs = [], set()
        for gap, se, df, tol in self._parts():
            excess = abs(gap) - tol if gap is not None and math.isfinite(gap) else -1.0
            if excess <= 0 or math.isinf(se) or math.isnan(se):
                return 1.0
            dirs.add(gap > 0)
            if se == 0:
                ps.append(0.0)
            elif math.isinf(df):
                ps.append(math.erfc(excess / se / math.sqrt(2.0)))
            else:
                from scipy import stats

                ps.append(float(2 * stats.t.sf(excess / se, df)))
        return max(ps) if len(dirs) == 1 else 1.0

    def text(self) -> str:
        return self.label + (f" (holds in {self.votes[0]} of {self.votes[1]} replicates)" if self.votes else "")


def _replicate_part(reps_a, reps_b) -> tuple[float | None, float, tuple[int, int] | None]:
    """The paired test of per-replicate values: mean difference, its batch-means se ``sd(d)/√R``
    (inf below :data:`MIN_SE_SAMPLES` replicates or for a spread of 0) and how many replicates have ``a > b``."""
    if reps_a is None and reps_b is None:
        return None, math.inf, None
    a = np.asarray(reps_a if reps_a is not None else np.zeros(np.shape(reps_b)), dtype=np.float64).ravel()
    b = np.asarray(reps_b if reps_b is not None else np.zeros(a.shape), dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise InputError(f"replicates of a comparison must be paired, got {a.size} and {b.size} values")
    d = (a - b)[np.isfinite(a - b)]
    votes = (int((d > 0).sum()), int(d.size))
    if d.size < MIN_SE_SAMPLES:
        return (float(d.mean()) if d.size else None), math.inf, votes
    sd = float(d.std(ddof=1))
    return float(d.mean()), (sd / math.sqrt(d.size) if sd > 0 else math.inf), votes


def compare(a: float, b: float, se_a=0.0, se_b=0.0, *, reps_a=None, reps_b=None, label: str = "") -> Comparison:
    """:class:`Comparison` of ``a − b`` with the two estimates' se (independent) and, when given, the
    paired per-replicate values of both (the data split's variability, :mod:`recmetrics.meta.replicates`:
    a paired t-test on the per-replicate differences, which must agree with the first)."""
    a, b = float(a), float(b)
    rep_gap, rep_se, votes = _replicate_part(reps_a, reps_b)
    se, df = _se_df(se_a, se_b)
    gap = a - b if math.isfinite(a) and math.isfinite(b) else math.nan
    tol = REL_TOL * max(1.0, abs(a), abs(b)) if math.isfinite(gap) else 0.0
    return Comparison(label or f"{a:.4g} vs {b:.4g}", gap, se, df, tol, votes, rep_gap=rep_gap, rep_se=rep_se)


def family(comparisons: Iterable[Comparison], *, z: float = NOISE_SE) -> tuple[str, list, list, list]:
    """One verdict for a claim that makes several comparisons at once, each oriented so that
    ``gap > 0`` is what the claim says; returns ``(verdict, held, reversed, undecided)``.

    * ``agrees`` when *every* comparison holds beyond its band (an intersection-union test: if the
      claim is false some comparison is, and that one alone passes with probability at most the
      level ``2·(1 − Φ(z))``, so no correction is needed);
    * ``disagrees`` when Holm's step-down over the two-sided p-values of all m comparisons
      (family-wise level ``2·(1 − Φ(z))``) rejects a comparison that goes against the claim: with
      all comparisons truly null, that happens in at most 4.55 % of draws however many there are;
    * otherwise ``inconclusive``.
    """
    z = _check_z(z)
    comps = list(comparisons)
    held = [c for c in comps if c.sign(z) > 0]
    alpha, m = _level(z), len(comps)
    rejected = []
    for i, c in enumerate(sorted(comps, key=lambda c: c.p)):
        if c.p > alpha / (m - i):
            break
        rejected.append(c)
    reversed_ = [c for c in rejected if c.gap < 0]
    undecided = [c for c in comps if c not in held and c not in reversed_]
    verdict = "disagrees" if reversed_ else "agrees" if comps and len(held) == m else "inconclusive"
    return verdict, held, reversed_, undecided


check_z = _check_z
