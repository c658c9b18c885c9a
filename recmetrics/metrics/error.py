"""Predictive accuracy (error) metrics of a rating predictor (Schröder et al. 2011, §4.1).

Per user ``u`` over the user's test ratings ``T_u`` (every judged item, relevant or not) and the
predictor's predictions ``p(u, i)``:

* ``MAE  = 1/|T_u| · sum |p(u,i) - r(u,i)|``
* ``MSE  = 1/|T_u| · sum (p(u,i) - r(u,i))²``
* ``RMSE = sqrt(MSE)``
* ``NMAE = MAE / (r_max - r_min)`` (the width of the rating scale; Goldberg et al. 2001)

Context. The kernels need ``predictions=`` (DataFrame ``user, item, prediction``); the test
ratings are the judgments the run is evaluated against (``evaluate``'s ``qrels``) unless ``test=``
(DataFrame ``user, item, rating`` or a :class:`~recmetrics.data.qrels.Qrels`) is given, e.g.
``rm.evaluate(run, qrels, ["RMSE", "MAE"], predictions=pred)``. The run is not used.

Missing predictions (parameter ``fill``):

* ``fill`` unset (default, or ``fill=error``): a test (user, item) pair without a prediction
  raises :class:`~recmetrics.errors.InputError` naming the first such pair and how many are
  missing;
* ``fill=<number>`` (e.g. ``RMSE(fill=3.5)``): missing predictions take that value;
* ``fill=skip``: missing pairs are left out of the user's mean (a user left with no pair raises).

Predictions for pairs that are not test ratings are ignored; duplicate (user, item) predictions
and non-finite predictions raise. An evaluated user without any test rating in ``test`` raises.

NMAE's scale is the dataset's declared rating scale, never the test data's range (which changes
with the split): ``NMAE(rmin=1,rmax=5)``, or ``rm.evaluate(..., rating_scale=ds.rating_scale)``
(``Dataset.rating_scale``); without either it is an error.

Users: error metrics describe a rating predictor over *every* user with test ratings. When every
metric asked of :func:`recmetrics.evaluate` is an error metric, its default user policy is
``"all"``; mixed with ranking metrics the ranking default (users with a relevant item) applies
and a warning says so (pass ``users="all"``). :func:`pooled_errors` gives the rating-level
(pooled) MAE / MSE / RMSE, which weight users by their number of test ratings, beside the
per-user means the metrics aggregate.

All four are non-negative (lower is better), so every aggregation (arithmetic, geometric,
harmonic, quadratic) applies; note that the geometric and harmonic means floor a zero error at
1e-5.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, require_columns, show
from .registry import register

if TYPE_CHECKING:
    import pandas as pd

FILL_SKIP = "skip"
_CACHE_ATTR = "_error_metric_cache"


def _test_frame(test) -> pd.DataFrame:
    import pandas as pd

    if hasattr(test, "to_frame") and hasattr(test, "threshold"):  # a Qrels
        test = test.to_frame()
    if not isinstance(test, pd.DataFrame):
        raise InputError(f"test must be a DataFrame with columns user, item, rating (or a Qrels); "
                         f"got {type(test).__name__}")
    require_columns(test, ("user", "item", "rating"), "test ratings", verb="lack")
    if test.duplicated(["user", "item"]).any():
        i = int(np.flatnonzero(test.duplicated(["user", "item"]).to_numpy())[0])
        raise InputError(f"test: user {show(test['user'].iloc[i])} item {show(test['item'].iloc[i])} "
                         f"is rated more than once (row {i})")
    return test


def _prediction_frame(predictions) -> pd.DataFrame:
    import pandas as pd

    if not isinstance(predictions, pd.DataFrame):
        raise InputError(f"predictions must be a DataFrame with columns user, item, prediction; "
                         f"got {type(predictions).__name__}")
    require_columns(predictions, ("user", "item", "prediction"), "predictions", verb="lack")
    dup = predictions.duplicated(["user", "item"]).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"predictions: user {show(predictions['user'].iloc[i])} item "
                         f"{show(predictions['item'].iloc[i])} is predicted more than once (row {i})")
    return predictions


def _check_fill(fill):
    if isinstance(fill, str) and fill.lower() in ("error", "raise", "none"):
        return None
    if fill is None or (isinstance(fill, str) and fill.lower() == FILL_SKIP):
        return fill.lower() if isinstance(fill, str) else None
    try:
        value = float(fill)
    except (TypeError, ValueError):
        raise InputError(f"fill must be unset (missing predictions raise), a number, or {FILL_SKIP!r}; "
                         f"got {fill!r}") from None
    if not np.isfinite(value):
        raise InputError(f"fill must be a finite number, got {fill!r}")
    return value


def prediction_errors(test, predictions, *, fill=None, users=None) -> pd.DataFrame:
    """Per-user error sums of ``predictions`` on the ``test`` ratings.

    Returns a DataFrame indexed by user with columns ``n`` (pairs counted), ``abs`` (sum of absolute
    errors), ``sq`` (sum of squared errors), ``MAE``, ``MSE`` and ``RMSE``. ``users`` (optional) restricts and orders the rows; a listed user
    without test ratings raises. Missing predictions: see the module docstring (``fill``).
    """
    import pandas as pd

    fill = _check_fill(fill)
    t = _test_frame(test)
    p = _prediction_frame(predictions)
    truth = pd.to_numeric(t["rating"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(truth).all():
        i = int(np.flatnonzero(~np.isfinite(truth))[0])
        raise InputError(f"test rating of user {show(t['user'].iloc[i])} item {show(t['item'].iloc[i])} "
                         f"is not a finite number")
    pred_values = pd.to_numeric(p["prediction"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(pred_values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"prediction for user {show(p['user'].iloc[i])} item {show(p['item'].iloc[i])} is "
                         f"{show(p['prediction'].iloc[i])}; predictions must be finite numbers")
    # vectorised join: (user, item) -> prediction row through one MultiIndex lookup
    index = pd.MultiIndex.from_arrays([p["user"].to_numpy(), p["item"].to_numpy()])
    where = index.get_indexer(pd.MultiIndex.from_arrays([t["user"].to_numpy(), t["item"].to_numpy()]))
    found = where >= 0
    pred = np.where(found, pred_values[np.maximum(where, 0)], np.nan)
    keep = np.ones(len(t), dtype=bool)
    if not found.all():
        miss = np.flatnonzero(~found)
        if fill is None:
            i = int(miss[0])
            raise InputError(
                f"no prediction for user {show(t['user'].iloc[i])} item {show(t['item'].iloc[i])} "
                f"({len(miss)} of {len(t)} test ratings have none); predict every test pair, or pass "
                f"fill=<number> or fill={FILL_SKIP} (e.g. 'RMSE(fill=3.5)')")
        if fill == FILL_SKIP:
            keep = found
        else:
            pred = np.where(found, pred, fill)
    codes, uniq = pd.factorize(t["user"].to_numpy(), sort=False)
    err = (pred - truth)[keep]
    c = codes[keep]
    n_users = len(uniq)
    n = np.bincount(c, minlength=n_users)
    s_abs = np.bincount(c, weights=np.abs(err), minlength=n_users)
    s_sq = np.bincount(c, weights=err * err, minlength=n_users)
    if (n == 0).any():
        u = uniq[int(np.flatnonzero(n == 0)[0])]
        raise InputError(f"user {show(u)} has no prediction for any test rating (fill={FILL_SKIP} skipped "
                         f"them all); cannot compute its error")
    with np.errstate(invalid="ignore", divide="ignore"):
        mae, mse = s_abs / n, s_sq / n
    out = pd.DataFrame({"n": n, "abs": s_abs, "sq": s_sq, "MAE": mae, "MSE": mse, "RMSE": np.sqrt(mse)},
                       index=pd.Index(uniq, name="user"))
    if users is None:
        return out
    users = np.asarray(users)
    rows = out.index.get_indexer(users)
    if (rows < 0).any():
        u = users[int(np.flatnonzero(rows < 0)[0])]
        raise InputError(f"user {show(u)} has no test rating in test=; error metrics need at least one "
                         f"(user, item, rating) per evaluated user")
    return out.iloc[rows]


def _per_user(j, predictions, test, fill) -> pd.DataFrame:
    test = j.qrels if test is None else test
    """prediction_errors aligned with ``j.users``, cached on the judged object per (test, predictions, fill)."""
    cache = j.__dict__.setdefault(_CACHE_ATTR, {})
    key = (id(test), id(predictions), repr(fill))
    hit = cache.get(key)
    if hit is not None and hit[0] is test and hit[1] is predictions:
        return hit[2]
    table = prediction_errors(test, predictions, fill=fill, users=j.users)
    cache[key] = (test, predictions, table)
    return table


_ERR = dict(cutoff="none", needs=("predictions",), optional=("test",), family="error", bounds=(0.0, np.inf), perfect=0.0,
            better="lower")


@register("MAE", aliases=("mean_absolute_error",), params={"fill": None}, **_ERR,
          description="Mean absolute error of the rating predictions over the user's test ratings")
def mae(j, k, fill=None, predictions=None, test=None):
    return _per_user(j, predictions, test, fill)["MAE"].to_numpy()


@register("MSE", aliases=("mean_squared_error",), params={"fill": None}, **_ERR,
          description="Mean squared error of the rating predictions over the user's test ratings")
def mse(j, k, fill=None, predictions=None, test=None):
    return _per_user(j, predictions, test, fill)["MSE"].to_numpy()


@register("RMSE", aliases=("root_mean_squared_error",), params={"fill": None}, **_ERR,
          description="Root mean squared error of the rating predictions over the user's test ratings")
def rmse(j, k, fill=None, predictions=None, test=None):
    return _per_user(j, predictions, test, fill)["RMSE"].to_numpy()


@register("NMAE", aliases=("normalised_mae", "normalized_mae"), params={"fill": None, "rmin": None, "rmax": None},
          cutoff="none", needs=("predictions",), optional=("test", "rating_scale"), family="error",
          bounds=(0.0, np.inf), perfect=0.0,
          description="MAE divided by the width of the dataset's rating scale (rmax - rmin)")
def nmae(j, k, fill=None, rmin=None, rmax=None, predictions=None, test=None, rating_scale=None):
    table = _per_user(j, predictions, test, fill)
    if (rmin is None) != (rmax is None):
        raise InputError("NMAE: give both rmin and rmax (e.g. 'NMAE(rmin=1,rmax=5)'), or neither and "
                         "rating_scale=(min, max)")
    if rmin is None:
        if rating_scale is None:
            raise InputError("NMAE needs the dataset's rating scale, not the test data's range: pass "
                             "rating_scale=ds.rating_scale to rm.evaluate, or 'NMAE(rmin=1,rmax=5)'")
        rmin, rmax = rating_scale
    lo, hi = float(rmin), float(rmax)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise InputError(f"NMAE needs a rating scale with rmax > rmin, got rmin={lo:g}, rmax={hi:g}")
    return table["MAE"].to_numpy() / (hi - lo)


def pooled_errors(test, predictions, fill=None) -> pd.Series:
    """Rating-level MAE, MSE and RMSE over every test rating of ``test`` (users weighted by their
    number of ratings), from the same checked join as the per-user metrics."""
    import pandas as pd

    table = prediction_errors(test, predictions, fill=_check_fill(fill))
    n = table["n"].sum()
    mse = table["sq"].sum() / n
    return pd.Series({"MAE": table["abs"].sum() / n, "MSE": mse, "RMSE": float(np.sqrt(mse)), "ratings": int(n)})


__all__ = ["prediction_errors", "pooled_errors", "FILL_SKIP"]
