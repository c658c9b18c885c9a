"""How firm is a verdict: the chance that another independent split of the same data reads it the same.

A claim's check decides its verdict from a few comparisons, each an estimate against its noise
(:func:`recmetrics.meta.comparisons.compare`). Another split of the same ratings would give each
estimate again, differing from this one by about √2 times its standard error (two independent
draws around the same truth). :func:`firmness` replays the check many times with every uncertain
input redrawn that way and the row's own rule re-applied — Holm's step-down, a threshold read one
step either side, two readings of an open choice, whatever the check does — and returns the share of
replays that read the same verdict.

How an estimate is redrawn (:class:`Predictive`):

* with the data split's replicates (disjoint user groups, :mod:`recmetrics.meta.replicates`), the
  groups are resampled with replacement — one resampling per replay, shared by every estimate of the
  check, so what two metrics share moves them together — and the estimate and its replicates shift
  by √2 times the resampled mean's departure (its spread is the batch-means se);
* with a standard error alone (Monte Carlo, a bootstrap over users), by √2 · se · N(0, 1), one draw
  per estimate (the same value and se in two comparisons of one replay move together);
* exact values (closed forms, counts, definitions) are not redrawn: a check that makes no uncertain
  comparison is firm by construction (basis ``"exact values"``), as is a claim the set-up cannot test
  (``"not testable"``) or one whose result was not computed (``"not computed"``);
* a comparison whose uncertainty is unknown (an se of 0 from samples that all read the same, too
  few replicates) cannot be redrawn: it decides nothing on this split, but another split, with a
  known uncertainty, may decide it. An ``inconclusive`` that rests on one has no computable
  firmness: its basis is :data:`UNKNOWN` (NaN), and it is shown as borderline. So has any verdict
  that passed a gate no redraw moves (:func:`recmetrics.meta.comparisons.undetermined`: entries tied
  at the Monte Carlo floor, a τ that read the same in every bootstrap resample of the users).

The replays stop early once the share is clearly on one side of :data:`FIRM` (at least
:data:`MIN_DRAWS`, batches of :data:`BATCH`, at most ``draws``), seeded from the claim's id, so a
build reads the same figures on any machine. A row below :data:`FIRM` is *borderline*: "another
split may read this differently". Over many rows the firmness figures predict how many verdicts
change between two split seeds (:func:`recmetrics.report.stability.predicted_changes`), which the
books built at several seeds check.

:func:`null_rate` replays a check with every uncertain comparison at its null (the compared values
equal, each estimate off by its own noise): the share of ``disagrees`` is the rule's error rate for
that claim, which the family rule keeps at its level however many comparisons the claim makes.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import zlib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .comparisons import REDRAW, Comparison, _mean

__all__ = ["FIRM", "BORDERLINE", "UNKNOWN", "DRAWS", "MIN_DRAWS", "BATCH", "SPLIT_FACTOR", "Predictive", "Null", "replay",
           "firmness", "null_rate", "firm_label", "firm_reading", "replay_cached", "replay_session", "sharing_summaries",
           "row_firmness", "keep_for_replay"]

#: a verdict at least this firm is shown as firm; below it, as borderline
FIRM = 0.9
#: the words a borderline verdict carries
BORDERLINE = "another split may read this differently"
#: the basis of a firmness the data cannot give: an inconclusive verdict resting on an unknown uncertainty,
#: or any verdict that passed a gate no redraw moves
UNKNOWN = "uncertainty unknown"
#: replays at most per row, at least, and per batch between the stopping checks
DRAWS, MIN_DRAWS, BATCH = 120, 40, 20
#: how much further another split's estimate lies than the standard errors of this split say: the
#: split's user groups, the bootstrap over users and the Monte Carlo draws see the users' variability,
#: not the training's (another split trains every system on other ratings). Measured on the quick
#: book of movielens-small (``benchmarks/firmness_calibration.py``, split seeds 0-2): at 1 the rows read
#: firm kept their verdict under another seed in 96.0 % of the cases, at 1.5 in 97.8 %, with the rows
#: that changed 0.68 times those predicted; 1.5 is the smallest factor that keeps both within the
#: bounds a reader needs (97 %; 0.65-1.5 times), and seeds 6-8, built apart, check it
SPLIT_FACTOR = 1.5

_SQRT2 = math.sqrt(2.0)
#: while a check is replayed: the results of deterministic helpers, by call (:func:`replay_cached`)
_MEMO: ContextVar = ContextVar("recmetrics_replay_memo", default=None)


_PLAIN = (str, bytes, int, float, bool, type(None))
_PLAIN_TYPES = frozenset(_PLAIN)


def _key(x):
    if isinstance(x, _PLAIN):
        return x
    if isinstance(x, (list, tuple)):
        if all(type(e) in _PLAIN_TYPES for e in x):    # plain values are their own keys
            return (type(x).__name__, *x)
        return (type(x).__name__, *map(_key, x))
    if isinstance(x, dict):
        return ("dict", *((_key(k), _key(v)) for k, v in x.items()))
    return ("id", id(x))


#: the memo every replay of a session shares (:func:`replay_session`), None outside one
_SESSION: ContextVar = ContextVar("recmetrics_replay_session", default=None)


@contextlib.contextmanager
def replay_session():
    """Within the block, the replays of every claim share one memo of :func:`replay_cached` results:
    the claims of a chapter read the same results objects (a robustness study, say), whose summaries
    are then computed once for all the rows' replays instead of once per row. Nested sessions share
    the outer one's memo; the memo (and the objects it keeps alive, so no id is reused) is dropped
    when the outermost block ends. The values read are the same (the cached functions do not depend
    on the redraw)."""
    if _SESSION.get() is not None:
        yield
        return
    token = _SESSION.set({})
    try:
        yield
    finally:
        _SESSION.reset(token)


@contextlib.contextmanager
def sharing_summaries():
    """Within the block, inside a :func:`replay_session`, a check run outside a replay (a row's own
    verdict) reads and leaves :func:`replay_cached` results in the session's memo too: a summary the
    first claim computes is not computed again by the next claims, nor by the replays. The values
    are the same (the cached functions do not depend on the redraw, nor on whether one is in force).
    Outside a session, or within a replay, nothing changes."""
    shared = _SESSION.get()
    if shared is None or _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set(shared)
    try:
        yield
    finally:
        _MEMO.reset(token)


def _replay_memo() -> dict:
    """The memo a row's replays use: the session's when one is open, else a fresh one."""
    shared = _SESSION.get()
    return {} if shared is None else shared


def replay_cached(fn):
    """Remember ``fn``'s result while a check is replayed (:func:`firmness`, :func:`null_rate`): the
    same call on the same objects returns the first result. Only for functions whose result does not
    depend on the redraw — summaries and lookups of a chapter's results that no comparison is made
    in; outside a replay (and outside :func:`sharing_summaries`) the function runs as written."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        memo = _MEMO.get()
        if memo is None:
            return fn(*args, **kwargs)
        key = (fn.__qualname__, _key(args), _key(kwargs))
        if key not in memo:
            memo[key] = (fn(*args, **kwargs), args, kwargs)   # the arguments kept: their ids stay theirs
        return memo[key][0]
    return wrapper


def _uncertain(se) -> float:
    """The se as a float when it is a finite number > 0, else 0 (exact, or unknown: not redrawn)."""
    if se is None or isinstance(se, bool):
        return 0.0
    try:
        s = float(se)
    except (TypeError, ValueError):
        return 0.0
    return s if math.isfinite(s) and s > 0 else 0.0


class _Draws:
    """Standard normal draws keyed by what they perturb, so one replay moves one estimate once."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._eps: dict = {}
        self.keys: set = set()
        #: comparisons of unknown uncertainty; gates no redraw moves (:func:`~recmetrics.meta.comparisons.undetermined`)
        self.unknown: set = set()
        self.gates: set = set()

    def eps(self, key) -> float:
        if key not in self._eps:
            self._eps[key] = float(self.rng.standard_normal())
        self.keys.add(key)
        return self._eps[key]


class Predictive(_Draws):
    """One replay as another split reads it: every uncertain input of :func:`compare` redrawn, its
    departure ``√2 · factor`` times its standard error (``factor``: :data:`SPLIT_FACTOR`)."""

    def __init__(self, rng: np.random.Generator, factor: float = SPLIT_FACTOR):
        super().__init__(rng)
        self._index: dict[int, np.ndarray] = {}
        self.scale = _SQRT2 * float(factor)

    def _resample(self, n: int) -> np.ndarray:
        if n not in self._index:
            self._index[n] = self.rng.integers(0, n, size=n)
        return self._index[n]

    def _one(self, x: float, se, reps):
        if reps is not None:
            r = np.asarray(reps, dtype=np.float64).ravel()
            ok = np.isfinite(r)
            n = int(np.count_nonzero(ok))
            finite = r[ok]
            if n >= 2 and finite.max() > finite.min():
                sample = r[self._resample(r.size)]
                sample = sample[np.isfinite(sample)]
                # the resampled mean's departure, widened from the bootstrap's (n-1)/n variance
                depart = (_mean(sample) - _mean(finite)) * math.sqrt(n / (n - 1)) if sample.size else 0.0
                self.keys.add(("reps", r.size))
                return x + self.scale * depart, r + self.scale * depart
            return x, reps
        s = _uncertain(se)
        if s and math.isfinite(x):
            return x + self.scale * s * self.eps(("se", x, s)), reps
        return x, reps

    def inputs(self, a, b, se_a, se_b, reps_a, reps_b):
        a, reps_a = self._one(a, se_a, reps_a)
        b, reps_b = self._one(b, se_b, reps_b)
        return a, b, reps_a, reps_b

    def outcome(self, c: Comparison) -> Comparison:
        se = c.total_se
        if math.isinf(se) or math.isnan(se):
            self.unknown.add(c.label)
        return c


class Null(_Draws):
    """One replay with every uncertain comparison at its null: its gap (and its replicates' paired
    mean) drawn around 0 with its own se, the same draw for both tests of one comparison (they read
    the same data), a new draw for every comparison made (two metrics at the same value are two
    estimates). :meth:`restart` starts the count again, so the readings of an open choice, which
    make the same comparisons on (nearly) the same data, read the same draws."""

    def __init__(self, rng: np.random.Generator):
        super().__init__(rng)
        self._count = 0

    def restart(self) -> None:
        self._count = 0

    def inputs(self, a, b, se_a, se_b, reps_a, reps_b):
        return a, b, reps_a, reps_b

    def outcome(self, c: Comparison) -> Comparison:
        se = c.se if 0 < c.se < math.inf else 0.0
        rep_se = c.rep_se if c.votes is not None and 0 < c.rep_se < math.inf else 0.0
        if not (se or rep_se):
            return c
        eps = self.eps(("null", self._count))
        self._count += 1
        gap = (se or rep_se) * eps
        rep_gap = rep_se * eps if rep_se else c.rep_gap
        return dataclasses.replace(c, gap=gap, rep_gap=rep_gap)


def replay(check: Callable[[Mapping[str, Any]], Any], results: Mapping[str, Any], redraw) -> str:
    """The verdict ``check(results)`` reads with ``redraw`` in force (``inconclusive`` when a result it
    needs is missing, as :func:`recmetrics.meta.findings.assess` reads a ``KeyError``)."""
    token = REDRAW.set(redraw)
    try:
        return check(results).verdict
    except KeyError:
        return "inconclusive"
    finally:
        REDRAW.reset(token)


def _rng(key: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(str(key).encode("utf-8")), int(seed)])


def firmness(check: Callable, results: Mapping[str, Any], verdict: str, *, key: str = "", seed: int = 0,
             draws: int = DRAWS, factor: float = SPLIT_FACTOR) -> tuple[float, str, int]:
    """``(firmness, basis, replays)``: the share of replays under :class:`Predictive` (``factor``) that
    read ``verdict``; ``basis`` is ``"exact values"`` (firmness 1) when the check redrew nothing, else
    ``"simulated"``; ``(NaN, UNKNOWN, 0)`` for an ``inconclusive`` resting on a comparison whose
    uncertainty is unknown, and for any verdict that passed a gate no redraw moves
    (:func:`~recmetrics.meta.comparisons.undetermined`). ``key`` (the claim's id) and ``seed`` seed the replays."""
    rng = _rng(key, seed)
    memo = _MEMO.set(_replay_memo())
    try:
        return _firmness(check, results, verdict, rng, draws, factor)
    finally:
        _MEMO.reset(memo)


def _firmness(check, results, verdict, rng, draws, factor):
    same = n = 0
    while n < draws:
        for _ in range(min(BATCH, draws - n)):
            redraw = Predictive(rng, factor)
            same += replay(check, results, redraw) == verdict
            n += 1
            if n == 1 and (redraw.gates or (redraw.unknown and verdict == "inconclusive")):
                return math.nan, UNKNOWN, 0
            if n == 1 and not redraw.keys:
                return 1.0, "exact values", 0
        p = same / n
        if n >= MIN_DRAWS and abs(p - FIRM) > 3.0 * math.sqrt(max(p * (1 - p), 1.0 / n) / n):
            break
    return same / n, "simulated", n


def null_rate(check: Callable, results: Mapping[str, Any], *, key: str = "", seed: int = 0,
              draws: int = 2000) -> tuple[float, int]:
    """``(share of disagrees, comparisons)`` over ``draws`` replays under :class:`Null`; ``comparisons``:
    how many uncertain comparisons the check makes (0: nothing to simulate, the share is NaN)."""
    rng = _rng(key, seed)
    hits, size = 0, 0
    memo = _MEMO.set(_replay_memo())
    try:
        for i in range(draws):
            redraw = Null(rng)
            hits += replay(check, results, redraw) == "disagrees"
            size = max(size, len(redraw.keys))
            if i == 0 and not size:
                return math.nan, 0
    finally:
        _MEMO.reset(memo)
    return hits / draws, size


def firm_label(value, basis: str = "") -> str:
    """``"firm"`` at or above :data:`FIRM`, ``"borderline"`` below or when the ``basis`` is
    :data:`UNKNOWN`, ``""`` when not computed."""
    if basis == UNKNOWN:
        return "borderline"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else "firm" if v >= FIRM else "borderline"


def firm_reading(value, basis: Any = "") -> tuple[str, str]:
    """``(label, how)`` of a firmness as every page prints it: :func:`firm_label`, and how firm — the
    share of replays (two decimals) when it was simulated, else its basis (``exact values``,
    :data:`UNKNOWN`); ``("", "")`` when not computed. A basis of None or NaN (findings saved before
    it was recorded) reads as simulated.

    >>> firm_reading(0.974, "simulated"), firm_reading(1.0, "exact values"), firm_reading(math.nan, UNKNOWN)
    (('firm', '0.97'), ('firm', 'exact values'), ('borderline', 'uncertainty unknown'))
    >>> firm_reading(math.nan, None)
    ('', '')
    """
    basis = "" if basis is None or basis != basis else str(basis)
    label = firm_label(value, basis)
    if not label:
        return "", ""
    return label, (f"{float(value):.2f}" if basis in ("", "simulated") else basis)


def keep_for_replay(claims: Iterable, results: Mapping[str, Any], context: Mapping[str, Any] | None = None,
                    *, choice: str | None = None):
    """With ``$RECMETRICS_REPLAY_DIR`` set, write the claims and the results their checks read to a
    file there (cloudpickle), so their checks can be replayed outside the chapter — the null rate of
    every check (``benchmarks/null_rates.py``, :func:`recmetrics.meta.firmness.null_rate`); else nothing.
    With ``choice``, ``results`` are the results under every reading of that open choice
    (:func:`recmetrics.papers.choices.assess_choices`)."""
    folder = os.environ.get("RECMETRICS_REPLAY_DIR")
    if not folder:
        return None
    import hashlib

    try:
        import cloudpickle
    except ImportError:                       # joblib (the models extra) carries its own copy
        from joblib.externals import cloudpickle

    claims = list(claims)
    tag = hashlib.sha1("\0".join(c.id for c in claims).encode("utf-8")).hexdigest()[:10]
    path = Path(folder) / f"{os.environ.get('RECMETRICS_CHAPTER', 'claims')}-{tag}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        cloudpickle.dump({"claims": claims, "results": dict(results), "context": dict(context or {}),
                          "choice": choice}, fh)
    return path


def row_firmness(check: Callable, results: Mapping[str, Any], verdict: str | None, *, key: str,
                 context: Mapping[str, Any] | None = None, draws: int = DRAWS) -> tuple[float, str]:
    """``(firmness, basis)`` of one row (:func:`recmetrics.meta.firmness.firmness`, seeded by the claim's
    id and the context's split seed): 1 for a claim not computed (``verdict`` None) or not testable,
    NaN when ``draws`` is 0."""
    if not draws:
        return math.nan, ""
    if verdict is None or verdict == "not testable":
        return 1.0, "not computed" if verdict is None else "not testable"
    firm, basis, _ = firmness(check, results, str(verdict), key=key,
                              seed=int(dict(context or {}).get("seed") or 0), draws=draws)
    return firm, basis
