"""The statistics under the verdict rule of :mod:`recmetrics.meta.findings`: one comparison against
its noise (:class:`Comparison`, :func:`compare`), standard errors that are themselves estimates
(:class:`SE`: Student's t on their sample count), and a claim's comparisons as one family
(:func:`family`: intersection-union for ``agrees``, Holm's step-down for ``disagrees``), so that
the rule's error rates are what it states. The data split's replicates enter a comparison as a
paired test (:mod:`recmetrics.meta.replicates`). Import these from :mod:`recmetrics.meta.findings`,
which re-exports them.

Every comparison a verdict rests on is made by :func:`compare`, so a check can be replayed with its
inputs redrawn (:data:`REDRAW`, set by :mod:`recmetrics.meta.firmness`): as another split would
read them (a verdict's firmness), or with every comparison at its null (the rule's error rate).
"""
from __future__ import annotations

import functools
import math
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import InputError

__all__ = ["NOISE_SE", "REL_TOL", "MIN_SE_SAMPLES", "SE", "Comparison", "compare", "family", "holm", "check_z", "REDRAW",
           "Members", "replaying", "undetermined"]

#: a difference must exceed this many standard errors (of the difference) to decide a comparison;
#: its two-sided level ``2·(1 − Φ(2)) = 4.55 %`` is the error rate the rule promises, per claim
NOISE_SE = 2.0
#: relative floating-point tolerance: differences below ``REL_TOL * max(1, |a|, |b|)`` are ties
REL_TOL = 1e-9
#: an se estimated from fewer samples than this is unknown (it decides nothing)
MIN_SE_SAMPLES = 2
#: the redraw in force while a check is replayed (:mod:`recmetrics.meta.firmness`), else ``None``: an
#: object with ``inputs(a, b, se_a, se_b, reps_a, reps_b) -> (a, b, reps_a, reps_b)`` (the estimates as
#: another draw reads them), ``outcome(Comparison) -> Comparison`` and ``gates``, a set of what the
#: check decided on with an uncertainty nobody knows (:func:`undetermined`)
REDRAW: ContextVar = ContextVar("recmetrics_redraw", default=None)


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
    from scipy import special   # scipy.stats' t.ppf(norm.cdf(z), df) is these two (tested), without
                                # the import of scipy.stats (half a second of every chapter)
    return float(special.stdtrit(df, special.ndtr(z)))


def _t_sf2(t: float, df: float) -> float:
    """``2 · P(T > t)`` for Student's t with ``df`` degrees of freedom: ``scipy.stats.t.sf``'s own
    formula (``special.stdtr(df, -t)``) without its argument handling, bit-identical (tested);
    arguments outside its domain go through ``t.sf`` itself."""
    from scipy import special

    if df > 0 and math.isfinite(t):
        return float(2 * special.stdtr(df, -t))
    from scipy import stats

    return float(2 * stats.t.sf(t, df))


def _level(z: float) -> float:
    """The two-sided error rate of a ``z``-se band: 2·(1 − Φ(z))."""
    return math.erfc(z / math.sqrt(2.0))


@dataclass(frozen=True)
class Comparison:
    """One comparison ``a − b`` against its noise: ``gap`` (a − b), ``se`` of the difference (inf:
    unknown), its degrees of freedom ``df`` (inf: a known se), the floating-point tolerance ``tol``,
    a ``label`` for details; ``pair``/``values``: the two entries and their values, when a check
    needs them back. With data-split replicates it also holds their paired spread: ``rep_se`` (the
    batch-means se ``sd(d)/√R`` of the per-replicate differences, on ``R − 1`` degrees of freedom),
    ``rep_gap`` (their mean, for the record) and ``votes = (replicates where a > b, R)``. The
    full-split gap is then decided against the Monte Carlo se and the replicates' se together
    (``sqrt(se² + rep_se²)``, Welch–Satterthwaite degrees of freedom; an unknown Monte Carlo se is
    part of the replicates' spread): the replicates estimate how far the statistic moves with the
    users it is measured on, not the statistic itself, whose value on 1/R of the users is biased for
    τ or DP (a τ of 1.000 on every user averages 0.88 on the groups)."""

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
    #: a non-strict relation on exact values: a gap within the tolerance holds (0.7999999999999998 ≥ 0.8)
    tie_holds: bool = False
    #: an identity ("a = b"): it holds while the gap is inside its band, and a departure either way is
    #: against it
    identity: bool = False

    @property
    def exact(self) -> bool:
        """Both values exact (an se of 0 known, no replicates): the comparison has no noise."""
        return self.se == 0 and math.isinf(self.df) and self.votes is None and math.isfinite(self.gap)

    def holds(self, z: float = NOISE_SE) -> bool:
        """What the claim says of this comparison holds beyond (an identity: within) the noise."""
        s = self.sign(z)
        if self.identity:
            return s == 0 and math.isfinite(self.gap) and not math.isinf(self.se) and not math.isnan(self.se)
        return s > 0

    def _parts(self):
        if self.votes is None:
            yield self.gap, self.se, self.df, self.tol
            return
        yield self.gap, *self._split_se, self.tol

    @functools.cached_property
    def _split_se(self) -> tuple[float, float]:
        """The se of the full-split gap with the replicates' spread, and its degrees of freedom
        (computed once per comparison: its fields are frozen)."""
        mc = 0.0 if math.isinf(self.se) or math.isnan(self.se) else self.se
        rep, rdf = self.rep_se, float(self.votes[1] - 1)
        if math.isinf(rep) or math.isnan(rep):
            return math.inf, math.inf
        var = mc * mc + rep * rep
        denom = (mc ** 4 / self.df if mc and math.isfinite(self.df) else 0.0) + (rep ** 4 / rdf if rep else 0.0)
        return math.sqrt(var), (var * var / denom if denom > 0 else math.inf)

    def sign(self, z: float = NOISE_SE) -> int:
        """+1 / −1 when ``|gap| > q·se + tol`` (``q`` = :func:`_quantile`; with replicates the se is
        the Monte Carlo and the split's together), else 0."""
        z = _check_z(z)
        if self.tie_holds and self.exact and abs(self.gap) <= self.tol:
            return 1
        signs = set()
        for gap, se, df, tol in self._parts():
            if gap is None or not math.isfinite(gap) or math.isinf(se) or math.isnan(se):
                return 0
            band = _quantile(z, df) * se + tol
            signs.add(0 if abs(gap) <= band else (1 if gap > 0 else -1))
        return signs.pop() if len(signs) == 1 else 0

    @functools.cached_property
    def p(self) -> float:
        """Two-sided p-value of ``gap ≠ 0`` beyond the tolerance (1 when undecidable, 0 for an exact gap):
        ``p < level(z)`` exactly when :meth:`sign` decides, so Holm's step-down can order comparisons.
        Computed once per comparison (its fields are frozen)."""
        ps, dirs = [], set()
        if self.tie_holds and self.exact and abs(self.gap) <= self.tol:
            return 1.0
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
                ps.append(_t_sf2(excess / se, df))
        return max(ps) if len(dirs) == 1 else 1.0

    @property
    def total_se(self) -> float:
        """The se the gap is decided against (with replicates, the Monte Carlo and the split's together)."""
        return self._split_se[0] if self.votes is not None else self.se

    @property
    def z(self) -> float:
        """The distance from the decision line in standard errors: ``gap / total_se`` (±inf for an
        exact gap, NaN when unknown)."""
        gap, se = self.gap, self.total_se
        if gap is None or not math.isfinite(gap) or math.isnan(se) or math.isinf(se):
            return math.nan
        if se == 0:
            return 0.0 if abs(gap) <= self.tol else math.copysign(math.inf, gap)
        return gap / se

    def margin(self) -> str:
        """The effect, its se and its distance from the line: ``"+0.012 ± 0.005, z 2.4"`` (with the split's
        replicates the se is the Monte Carlo and the split's together: ``"… with the split"``)."""
        gap, se, tail = self.gap, self.total_se, ""
        if self.votes is not None:    # the replicates' own values (τ, DP on 1/R of the users) are biased: their
            head = f"{_num(gap)} ± {_num(se, False)} with the split"    # spread is shown, not their count
        else:
            head = f"{_num(gap)} ± {_num(se, False)}" if se > 0 else f"{_num(gap)}, exact"
        z = self.z
        zt = "" if se == 0 and self.votes is None else (f", z {z:+.1f}" if math.isfinite(z) else ", se unknown")
        return head + zt + tail

    def text(self) -> str:
        return f"{self.label} ({self.margin()})" if self.label else self.margin()


def _num(x, signed: bool = True) -> str:
    """A gap or an se in three significant digits (``+0.0123``, ``0.00412``; ``n/a`` when unknown)."""
    if x is None or not math.isfinite(x):
        return "n/a"
    sign = "+" if signed else ""
    return f"{x:{sign}.3g}" if abs(x) >= 1e-4 or x == 0 else f"{x:{sign}.2e}"


def _replicate_part(reps_a, reps_b) -> tuple[float | None, float, tuple[int, int] | None]:
    """The paired test of per-replicate values: mean difference, its batch-means se ``sd(d)/√R``
    (inf below :data:`MIN_SE_SAMPLES` replicates or for a spread of 0) and how many replicates have ``a > b``."""
    if reps_a is None and reps_b is None:
        return None, math.inf, None
    a = np.asarray(reps_a if reps_a is not None else np.zeros(np.shape(reps_b)), dtype=np.float64).ravel()
    b = np.asarray(reps_b if reps_b is not None else np.zeros(a.shape), dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise InputError(f"replicates of a comparison must be paired, got {a.size} and {b.size} values")
    d = a - b
    d = d[np.isfinite(d)]
    n = int(d.size)
    votes = (int(np.count_nonzero(d > 0)), n)
    if not n:
        return None, math.inf, votes
    mean = _mean(d)
    if n < MIN_SE_SAMPLES:
        return mean, math.inf, votes
    sd = _sd(d, mean)
    return mean, (sd / math.sqrt(n) if sd > 0 else math.inf), votes


def _mean(x: np.ndarray) -> float:
    """``x.mean()`` of a non-empty 1-d float64 array: numpy's own steps (the pairwise sum over the
    count) without its argument handling, bit-identical (tested)."""
    return float(np.add.reduce(x)) / x.size


def _sd(x: np.ndarray, mean: float) -> float:
    """``x.std(ddof=1)`` of a finite 1-d float64 array of size >= 2 whose mean ``x.mean()`` is
    ``mean``: numpy's own steps (the squared deviations summed pairwise, divided by n - 1, the
    square root correctly rounded) without its argument handling, bit-identical (tested)."""
    dev = x - mean
    np.square(dev, out=dev)
    return math.sqrt(float(np.add.reduce(dev)) / (x.size - 1))


def compare(a: float, b: float, se_a=0.0, se_b=0.0, *, reps_a=None, reps_b=None, label: str = "",
            pair: tuple | None = None, values: tuple | None = None) -> Comparison:
    """:class:`Comparison` of ``a − b`` with the two estimates' se (independent) and, when given, the
    paired per-replicate values of both (the data split's variability, :mod:`recmetrics.meta.replicates`:
    a paired t-test on the per-replicate differences, which must agree with the first). ``pair`` and
    ``values``: the entries compared and their values, kept on the comparison for a check that needs
    them back."""
    a, b = float(a), float(b)
    redraw = REDRAW.get()
    shown = label or f"{a:.4g} vs {b:.4g}"
    if redraw is not None:
        a, b, reps_a, reps_b = redraw.inputs(a, b, se_a, se_b, reps_a, reps_b)
    rep_gap, rep_se, votes = _replicate_part(reps_a, reps_b)
    se, df = _se_df(se_a, se_b)
    gap = a - b if math.isfinite(a) and math.isfinite(b) else math.nan
    tol = REL_TOL * max(1.0, abs(a), abs(b)) if math.isfinite(gap) else 0.0
    c = Comparison(shown, gap, se, df, tol, votes, pair, values, rep_gap=rep_gap, rep_se=rep_se)
    return c if redraw is None else redraw.outcome(c)


def replaying() -> bool:
    """Whether a check is being replayed (:data:`REDRAW` in force: firmness, null rate). Only its
    verdict is read then, so what a check computes for its detail alone is better left out: its
    comparisons would draw noise and count as the verdict's although they decide nothing."""
    return REDRAW.get() is not None


def undetermined(reason: str) -> None:
    """Say that a check decides on something no redraw of its estimates can move and whose
    uncertainty the data do not give: entries tied at the Monte Carlo floor ``1/(B+1)``, which more
    permutations or another split could order; a statistic that read the same in every bootstrap
    resample (an se of 0 that says nothing of another split). Outside a replay nothing happens;
    during one (:data:`REDRAW`), the replay records ``reason``, so the verdict's firmness is reported
    unknown rather than firm by construction."""
    redraw = REDRAW.get()
    if redraw is not None:
        redraw.gates.add(str(reason))


def holm(comparisons: Iterable[Comparison], *, z: float = NOISE_SE) -> list[Comparison]:
    """The comparisons Holm's step-down rejects (``gap ≠ 0`` beyond the noise, family-wise level
    ``2·(1 − Φ(z))``), in order of their p-values."""
    comps = list(comparisons)
    alpha, m = _level(_check_z(z)), len(comps)
    rejected = []
    for i, c in enumerate(sorted(comps, key=lambda c: c.p)):
        if c.p > alpha / (m - i):
            break
        rejected.append(c)
    return rejected


def family(comparisons: Iterable[Comparison], *, z: float = NOISE_SE) -> tuple[str, list, list, list]:
    """One verdict for a claim that makes several comparisons at once, each oriented so that
    ``gap > 0`` is what the claim says; returns ``(verdict, held, reversed, undecided)``.

    * ``agrees`` when *every* comparison holds beyond its band (an intersection-union test: if the
      claim is false some comparison is, and that one alone passes with probability at most the
      level ``2·(1 − Φ(z))``, so no correction is needed); an identity (``Comparison.identity``)
      holds while it is inside its band;
    * ``disagrees`` when Holm's step-down over the two-sided p-values of all m comparisons
      (family-wise level ``2·(1 − Φ(z))``) rejects a comparison that goes against the claim (an
      identity: a departure either way): with
      all comparisons truly null, that happens in at most 4.55 % of draws however many there are;
    * otherwise ``inconclusive``.
    """
    z = _check_z(z)
    comps = list(comparisons)
    held = Members(c for c in comps if c.holds(z))
    rejected = holm(comps, z=z)
    reversed_ = Members(c for c in rejected if c.identity or c.gap < 0)
    undecided = Members(c for c in comps if c not in held and c not in reversed_)
    verdict = "disagrees" if reversed_ else "agrees" if comps and len(held) == len(comps) else "inconclusive"
    return verdict, held, reversed_, undecided


class Members(list):
    """A part of a family (:func:`family`: held, reversed, undecided): a list whose ``c in part`` finds
    ``c`` by hash — equal fields, the answer the list's own test gives — instead of comparing it with
    every element (checks ask it of every comparison they name). Read it; do not change it."""

    __slots__ = ("_index",)

    def __init__(self, items=()):
        super().__init__(items)
        try:
            self._index = frozenset(self)
        except TypeError:                  # a field that cannot be hashed: the list's own test
            self._index = None

    def __contains__(self, c) -> bool:
        if self._index is not None:
            try:
                return c in self._index
            except TypeError:
                pass
        return list.__contains__(self, c)


check_z = _check_z
