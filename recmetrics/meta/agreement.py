"""Agreement between rankings of systems: Kendall's τ (a thin wrapper of :mod:`scipy.stats`).

A metric ranks systems by their aggregated (by default mean) per-user score; two metrics, or a
metric and a known true order, agree when they rank the systems alike. ``kendall_tau`` compares
two score vectors; ``system_ranking_tau`` aggregates per-user score matrices first.

Conventions: τ-b (ties in either ranking are accounted for, as scipy's default); when one of the
two vectors is constant (every system tied) τ and τ_ap are undefined and NaN is returned — one
convention for both. Scores must be finite numbers (:mod:`recmetrics.checks`).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import checks
from ..errors import InputError
from ..metrics.aggregate import aggregate as _aggregate

__all__ = ["kendall_tau", "tau_b", "tau_rows", "system_ranking_tau", "ranking_taus", "tau_ap", "agreement_matrix",
           "metric_agreement", "cutoff_agreement", "mean_agreement", "agreement_se", "N_BOOTSTRAP"]

#: bootstrap resamples of the users behind :func:`agreement_se`
N_BOOTSTRAP = 200
#: up to this many systems :func:`kendall_tau` counts the pairs itself (:func:`tau_rows`, bit-identical
#: to scipy's τ-b); longer vectors go to scipy's O(n log n) algorithm
_PAIRWISE_MAX = 256


def kendall_tau(x, y, variant: str = "b") -> float:
    """Kendall's τ between two paired vectors (scipy.stats.kendalltau; ``variant`` "b" or "c")."""
    x, y = _vectors(x, y, "kendall_tau")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    if variant == "b" and x.size <= _PAIRWISE_MAX:   # a few systems: τ-b from the pair counts, as scipy forms it
        return float(tau_rows(x[None], y[None])[0])
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return float(stats.kendalltau(x, y, variant=variant).statistic)


def tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b of two finite float vectors of the same length, unchecked: the hot loop of
    robustness replicates (thousands of rankings of a few systems), equal to :func:`kendall_tau`
    to rounding (tested). ``Σ sign(xi−xj)·sign(yi−yj) / sqrt(Σ sign(xi−xj)² · Σ sign(yi−yj)²)``
    over the pairs; NaN when either vector is constant."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    den = float((sx * sx).sum()) * float((sy * sy).sum())
    return float((sx * sy).sum() / np.sqrt(den)) if den > 0 else float("nan")


def tau_rows(x: np.ndarray, y: np.ndarray, form: str = "kendall_tau") -> np.ndarray:
    """Kendall's τ-b between ``x[k]`` and ``y[k]`` for every row ``k`` of two ``(K, n)`` float arrays,
    each row over the systems where both are finite (NaN: left out), at once; NaN where fewer than
    two systems are left or either side is constant. Bit-identical, row by row, to
    ``kendall_tau(x[k][ok], y[k][ok])`` (``form="kendall_tau"``: scipy's ``con_minus_dis /
    sqrt(tot - xtie) / sqrt(tot - ytie)``, clipped to [-1, 1]) or to ``tau_b(x[k][ok], y[k][ok])``
    (``form="tau_b"``): the pair counts are exact integers, formed into τ as each of those forms
    them (tested). The robustness study's τ of thousands of reduced test sets, one call each."""
    if form not in ("kendall_tau", "tau_b"):
        raise InputError(f"form must be 'kendall_tau' or 'tau_b', got {form!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape:
        raise InputError(f"tau_rows needs two (rows, systems) arrays of one shape, got {x.shape} and {y.shape}")
    i, j = np.triu_indices(x.shape[1], k=1)
    valid = ~(np.isnan(x) | np.isnan(y))
    pair = valid[:, i] & valid[:, j]
    with np.errstate(invalid="ignore"):
        sx = np.where(pair, np.sign(x[:, i] - x[:, j]), 0.0)
        sy = np.where(pair, np.sign(y[:, i] - y[:, j]), 0.0)
    c = (sx * sy).sum(axis=1)           # concordant minus discordant pairs (exact integers)
    nx, ny = (sx * sx).sum(axis=1), (sy * sy).sum(axis=1)   # pairs not tied in x, in y
    out = np.full(len(x), np.nan)
    ok = (nx > 0) & (ny > 0) & (valid.sum(axis=1) >= 2)
    if form == "kendall_tau":
        out[ok] = np.minimum(1.0, np.maximum(-1.0, c[ok] / np.sqrt(nx[ok]) / np.sqrt(ny[ok])))
    else:   # tau_b sums both triangles: 2c / sqrt((2 nx) (2 ny))
        out[ok] = (2 * c[ok]) / np.sqrt((2 * nx[ok]) * (2 * ny[ok]))
    return out


def _vectors(x, y, what: str):
    """Two validated, finite float vectors of the same length (at least 2 systems); two labelled
    Series are paired by system name, not by position."""
    x, y = checks.paired(x, y, what, kind="system")
    x = checks.numbers(x, f"{what}: x").ravel()
    y = checks.numbers(y, f"{what}: y").ravel()
    if x.shape != y.shape:
        raise InputError(f"{what} needs two vectors of the same length, got {x.size} and {y.size}")
    if x.size < 2:
        raise InputError(f"{what} needs at least two systems")
    checks.finite(x, f"{what}: x", col_name="system")
    checks.finite(y, f"{what}: y", col_name="system")
    return x, y


def _system_scores(scores, aggregate: str) -> np.ndarray:
    s = checks.numbers(scores, "system scores")
    if s.ndim == 1:
        return s
    if s.ndim == 2:
        return np.asarray(_aggregate(s, aggregate, axis=1))
    raise InputError(f"system scores must be (n_systems,) or (n_systems, n_users), got shape {s.shape}")


def system_ranking_tau(scores, reference, *, aggregate: str = "arithmetic", variant: str = "b") -> float:
    """τ between the system ranking of ``scores`` and that of ``reference``.

    Each of them is either one aggregated value per system, shape (n_systems,), or per-user values,
    shape (n_systems, n_users), aggregated with ``aggregate`` (arithmetic mean by default). A true
    order is passed as values that increase with quality, e.g. ``-perturbation_level``.
    """
    a = _system_scores(scores, aggregate)
    b = _system_scores(reference, aggregate)
    return kendall_tau(a, b, variant)


def ranking_taus(cube, reference, *, aggregate: str = "arithmetic", variant: str = "b") -> np.ndarray:
    """τ of every metric's system ranking against ``reference``; cube: (n_metrics, n_systems[, n_users])."""
    c = np.asarray(cube, dtype=np.float64)
    if c.ndim not in (2, 3):
        raise InputError(f"cube must be (n_metrics, n_systems[, n_users]), got shape {c.shape}")
    return np.array([system_ranking_tau(m, reference, aggregate=aggregate, variant=variant) for m in c])


def tau_ap(x, y) -> float:
    """Yilmaz, Aslam & Robertson's (SIGIR 2008) AP correlation τ_ap of ranking ``x`` against the
    reference ``y`` (both: one value per system, larger is better).

    τ_ap = 2/(n-1) Σ_{i=2..n} C(i)/(i-1) - 1, where systems are ordered by ``x`` (best first) and
    C(i) counts the systems above position i that ``y`` also ranks above system i. Errors near the
    top cost more than at the bottom; τ_ap is asymmetric (``y`` is the reference). Ties in ``x``
    are broken in the reference's favour; pairs tied in ``y`` count half. When either ranking ties
    every system, τ_ap is undefined: NaN, as :func:`kendall_tau` returns (breaking a full tie in the
    reference's favour would report perfect agreement, 1.0, for a metric that tells nothing apart).
    Checked by hand against the paper's definition (Eq. 3) and τ_ap = τ when errors are uniform.

    >>> tau_ap([3, 2, 1], [3, 2, 1]), tau_ap([1, 1, 1], [3, 2, 1])
    (1.0, nan)
    """
    x, y = _vectors(x, y, "tau_ap")
    if np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    n = x.size
    order = np.lexsort((-y, -x))             # best first by x (ties: by the reference)
    yo = y[order]
    above = yo[None, :] > yo[:, None]        # above[i, j]: reference puts j above i
    tie = yo[None, :] == yo[:, None]
    lower = np.tril(np.ones((n, n), dtype=bool), k=-1)   # j ranked above i by x
    c = (above & lower).sum(axis=1) + 0.5 * (tie & lower).sum(axis=1)
    i = np.arange(1, n)
    return float(2.0 / (n - 1) * np.sum(c[1:] / i) - 1.0)


def agreement_matrix(rankings, method: str = "tau", variant: str = "b"):
    """Pairwise agreement of system rankings: ``rankings`` a DataFrame (systems x orderings, e.g.
    metrics or cut-offs; each column one value per system) or ``{name: per-system values}``.

    ``method="tau"``: Kendall's τ (symmetric); ``"tau_ap"``: τ_ap of the row's ranking against the
    column's as reference (not symmetric). Returns a square DataFrame.
    """
    import pandas as pd

    frame = rankings if isinstance(rankings, pd.DataFrame) else pd.DataFrame(dict(rankings))
    if frame.shape[1] < 1 or frame.shape[0] < 2:
        raise InputError(f"agreement needs at least two systems (rows), got shape {frame.shape}")
    if method not in ("tau", "tau_ap"):
        raise InputError(f"method must be 'tau' or 'tau_ap', got {method!r}")
    names = list(frame.columns)
    if method == "tau":
        fast = _tau_matrix(frame, variant)
        if fast is not None:
            return pd.DataFrame(fast, index=pd.Index(names), columns=pd.Index(names))
    out = np.ones((len(names), len(names)))
    for a, na in enumerate(names):
        for b, nb in enumerate(names):
            if a != b:
                out[a, b] = (kendall_tau(frame[na], frame[nb], variant) if method == "tau"
                             else tau_ap(frame[na], frame[nb]))
    return pd.DataFrame(out, index=pd.Index(names), columns=pd.Index(names))


def _tau_matrix(frame, variant: str) -> np.ndarray | None:
    """Every ordered pair's :func:`kendall_tau` (τ-b) of the columns of ``frame`` in one
    :func:`tau_rows` call, which forms τ as scipy does (bit-identical, tested), with 1 on the
    diagonal; None when the columns are not unique labels of finite numbers or τ-c is asked for
    (the caller then computes pair by pair, and :func:`kendall_tau` says what is wrong)."""
    if variant != "b" or not frame.columns.is_unique:
        return None
    try:
        x = np.asarray(frame.to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if x.ndim != 2 or not np.isfinite(x).all():
        return None
    k = x.shape[1]
    a, b = np.nonzero(~np.eye(k, dtype=bool))           # every ordered pair, the row's metric first
    out = np.ones((k, k))
    out[a, b] = tau_rows(x.T[a], x.T[b])
    return out


def _per_system(scores: dict, aggregate: str | None):
    """``{name: systems x users scores}`` (plain per-user scores) -> systems x names aggregated table."""
    import pandas as pd

    from ..study import per_user_scores

    out = {}
    for name, frame in scores.items():
        frame = checks.score_table(per_user_scores(frame), f"scores of {name!r}")[0]
        out[name] = pd.Series(_aggregate(frame.to_numpy(dtype=np.float64), aggregate or "arithmetic", axis=1,
                                         metric=name),
                              index=frame.index)
    return pd.DataFrame(out)


def metric_agreement(study, cutoff=None, method: str = "tau", aggregate: str | None = None, pool: str = "concat"):
    """τ (or τ_ap) among the metrics' system orderings at one cut-off (000 Fig. 1/9).

    ``study``: a :class:`~recmetrics.study.Study`, or plain per-user scores ``{metric: systems x users}``."""
    if isinstance(study, dict):
        return agreement_matrix(_per_system(study, aggregate), method)
    return agreement_matrix(study.table(cutoff, pool=pool, aggregate=aggregate), method)


def cutoff_agreement(study, metric: str | None = None, method: str = "tau", aggregate: str | None = None,
                     pool: str = "concat"):
    """τ (or τ_ap) among the cut-offs of one metric's system orderings (003 Fig. 1).

    ``study``: a Study (with ``metric``), or plain per-user scores ``{cutoff: systems x users}``."""
    import pandas as pd

    if isinstance(study, dict):
        return agreement_matrix(_per_system(study, aggregate), method)
    if metric is None:
        raise InputError("give the metric whose cut-offs to compare")
    frame = pd.DataFrame({c: study.system_scores(metric, c, pool, aggregate) for c in study.cutoffs})
    return agreement_matrix(frame, method)


def mean_agreement(study, cutoff=None, method: str = "tau", pool: str = "concat"):
    """Per metric: τ and τ_ap (geometric ranking against the arithmetic one as reference) between the
    system ordering under the arithmetic mean and under the geometric mean (000 §7.1).

    ``study``: a Study, or plain per-user scores ``{metric: systems x users}``."""
    import pandas as pd

    rows = []
    metrics = list(study) if isinstance(study, dict) else study.metrics
    for m in metrics:
        if isinstance(study, dict):
            a, g = (_per_system({m: study[m]}, agg)[m] for agg in ("arithmetic", "geometric"))
        else:
            a = study.system_scores(m, cutoff, pool, "arithmetic")
            g = study.system_scores(m, cutoff, pool, "geometric")
        rows.append({"metric": m, "tau": kendall_tau(a, g), "tau_ap": tau_ap(g, a)})
    return pd.DataFrame(rows).set_index("metric")


def agreement_se(scores, *, aggregate: str | None = None, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0):
    """Bootstrap standard error of every τ of :func:`agreement_matrix` over the evaluated users.

    A τ between two metrics' (or cut-offs') rankings of the systems on a full test set is an
    estimate: other users, or another split, move the system means and can swap close systems.
    ``scores``: ``{name: systems x units}`` per-user scores of the same systems and units (e.g.
    ``study.all_scores(100)``, or ``{c: study.scores("nDCG", c) for c in cutoffs}``); every
    resample draws the units with replacement (the same draw for every name, so what the names
    share stays paired), aggregates each name with ``aggregate`` (default arithmetic) and takes
    τ-b between every two names. Returns the names x names matrix of the resamples' standard
    deviation (diagonal 0; NaN where τ is undefined in fewer than two resamples). ``seed`` makes it
    reproducible; the units are the columns as given (``pool="mean"`` units are users)."""
    import pandas as pd

    if not isinstance(scores, dict) or len(scores) < 2:
        raise InputError("agreement_se needs {name: systems x units scores} for at least two names")
    n_bootstrap = checks.positive_int(n_bootstrap, "n_bootstrap")
    if n_bootstrap < 2:
        raise InputError(f"n_bootstrap must be at least 2, got {n_bootstrap}")
    names = list(scores)
    first = pd.DataFrame(scores[names[0]])
    for name in names[1:]:
        other = pd.DataFrame(scores[name])
        if not (other.index.equals(first.index) and other.columns.equals(first.columns)):
            raise InputError(f"agreement_se: the scores of {name!r} are not over the systems and units of "
                             f"{names[0]!r} (each name needs the same systems x units table)")
    if first.shape[0] < 2 or first.shape[1] < 1:
        raise InputError(f"agreement_se needs at least two systems and one unit, got shape {first.shape}")
    cube = np.stack([checks.numbers(pd.DataFrame(scores[n]).to_numpy(dtype=np.float64), f"scores of {n!r}")
                     for n in names])                                    # (names, systems, units)
    if not np.isfinite(cube).all():
        bad = names[int(np.flatnonzero(~np.isfinite(cube).all(axis=(1, 2)))[0])]
        raise InputError(f"agreement_se: the scores of {bad!r} hold a NaN or infinite value; pool the units "
                         f"first (every system needs a score for every unit)")
    rng = np.random.default_rng(checks.seed(seed))
    n_units, k = cube.shape[2], len(names)
    means = np.empty((k, n_bootstrap, cube.shape[1]))                    # (names, resamples, systems)
    for b in range(n_bootstrap):
        draw = rng.integers(0, n_units, n_units)
        if aggregate in (None, "arithmetic"):
            means[:, b] = cube[:, :, draw].mean(axis=2)
        else:
            means[:, b] = np.stack([_aggregate(cube[i][:, draw], aggregate, axis=1, metric=str(names[i]))
                                    for i in range(k)])
    taus = np.full((n_bootstrap, k, k), np.nan)
    for i in range(k):
        taus[:, i, i] = 1.0
        for j in range(i + 1, k):
            taus[:, i, j] = taus[:, j, i] = tau_rows(means[i], means[j], form="tau_b")
    ok = np.isfinite(taus).sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        se = np.where(ok >= 2, np.nanstd(taus, axis=0, ddof=1), np.nan)
    np.fill_diagonal(se, 0.0)
    return pd.DataFrame(se, index=pd.Index(names), columns=pd.Index(names))
