"""Computations of the chapter "Popularity bias and how to neutralise it" (paper 004, §4.4-4.6),
kept in the library so the notebook only calls, charts and explains.

Every function takes a seed; ``users`` (an int) evaluates a seeded sample of the test users (the
quick profile), ``None`` all of them. The design comparisons carry their uncertainty: a bootstrap
over users (:mod:`recmetrics.protocols.uncertainty`) gives every value a standard error and keeps
the replicates, so the thesis' claims (:mod:`recmetrics.papers.bellogin2012`) can decide any
difference, ratio or lead against its noise.
"""
from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from .designs import DEFAULT_N, parse
from .expectations import eq42_bounds, random_precision_per_set, random_precision_variance_per_set, uniform_split
from .targets import ShortPoolWarning, build_targets, evaluate, popularity
from .uncertainty import N_BOOTSTRAP, per_user_means, point, replicates


#: the uniform split the thesis reports (§4.6.2, MovieLens 1M with σ = 0.2, ε = 0.2), shown beside ours
THESIS_UNIFORM_SPLIT = {"data": "MovieLens 1M", "sigma": 0.2, "eps": 0.2, "T": 1703, "eta": 118}

#: the designs of Fig. 4.1 and Fig. 4.7 by name: ``{T}`` is replaced by |T| of the uniform split
#: (Fig. 4.7's AR is "TI-NN with |N_u| = 1,700, to level with UAR in random precision", §4.6.3)
THESIS_DESIGNS = {
    "1R": f"TI-1R-NN(n={DEFAULT_N})",
    "AR-AN": "TI-AR-AN",                                  # Fig. 4.1's AR (TI-AN)
    "AR-AI": "AI-AR-AN",                                  # Fig. 4.1's AR with every item a candidate (AI-AN)
    "AR": "TI-AR-NN(n={T})",                              # Fig. 4.7's AR
    "P1R": f"P1R(m=10,n={DEFAULT_N},popularity=full)",
    "P1R-train": f"P1R(m=10,n={DEFAULT_N},popularity=train)",
    "U1R": f"U1R(n={DEFAULT_N})",
    "UAR": "UAR",
    "AI-UAR": "AI-UAR",
    "head10": f"head10(relevant=1R,n={DEFAULT_N})",
}

#: the label of the analytic random expectation in result tables and replicates
RANDOM = "E[random]"


def sample_users(test: pd.DataFrame, users: int | None, seed: int = 0):
    """Ids of ``users`` test users drawn at random (None, i.e. all, when ``users`` is None)."""
    if users is None:
        return None
    ids = np.sort(test["user"].unique())
    if users < 1:
        raise InputError(f"users must be a positive number of test users, got {users}")
    pick = np.random.default_rng([seed, 11]).choice(ids, min(users, len(ids)), replace=False)
    return pick


def _named(systems) -> dict:
    """``{name: spec}`` from a list of zoo specs (named by themselves) or a ``{name: spec}`` mapping."""
    return dict(systems) if isinstance(systems, Mapping) else {s: s for s in systems}


def fit_all(systems, train):
    """``{name: fitted system}`` for the zoo specs ``systems`` (a list, each named by its spec, or a
    ``{name: spec}`` mapping such as :data:`recmetrics.papers.bellogin2012.SYSTEMS`)."""
    from .. import recommenders

    return {name: recommenders.create(spec).fit(train) for name, spec in _named(systems).items()}


def design_spec(name: str, T: int | None = None) -> str:
    """The design spec of a :data:`THESIS_DESIGNS` name (or any spec), ``{T}`` filled with |T|."""
    spec = THESIS_DESIGNS.get(name, name)
    if "{T}" in spec:
        if T is None:
            raise InputError(f"design {name!r} needs |T| of the uniform split")
        spec = spec.replace("{T}", str(int(T)))
    return str(parse(spec))


def _precision_cutoff(metric: str) -> int | None:
    m = re.fullmatch(r"P@(\d+)", str(metric).strip())
    return int(m.group(1)) if m else None


def _frame(per_set: pd.DataFrame, column) -> pd.DataFrame:
    cols = ["user"] + (["percentile"] if "percentile" in per_set.columns else [])
    return per_set[cols].assign(value=np.asarray(per_set[column], dtype=np.float64))


@dataclass
class DesignRun:
    """Systems under designs, with their uncertainty (what :func:`compare_designs` returns).

    ``table``: tidy ``design, system, metric, value, se, random_expected`` (the analytic random
    P@n of the design for ``P@n`` rows, NaN for other metrics); ``info``: the uniform split
    (:func:`~recmetrics.protocols.uniform_split`); ``replicates``: bootstrap replicates (rows) of every
    value, columns ``(design, system, metric)`` plus ``(design, RANDOM, "P@n")`` for the expectation,
    drawn jointly (paired) per split; ``per_user``: tidy ``design, system, metric, user, value`` (each
    user's mean over her sets: the unit of the significance tests); ``metadata``: per design its
    target-set facts (sets, short sets, t, users, candidates)."""

    table: pd.DataFrame
    info: dict
    replicates: pd.DataFrame
    per_user: pd.DataFrame
    metadata: dict = field(default_factory=dict)


def _reports_short_pools(fn):
    """For chapter helpers whose results carry the short target sets (``metadata['short_sets']``, a
    ``short_sets`` column): the :class:`ShortPoolWarning` each build of the sets would print is not
    repeated (the chapter shows the counts instead)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShortPoolWarning)
            return fn(*args, **kwargs)
    return wrapper


@_reports_short_pools
def evaluate_systems(fitted: dict, train: pd.DataFrame, test: pd.DataFrame, design: str, metrics, *,
                     users=None, threshold: float = 4.0, seed: int = 0, strict: bool = False):
    """Every fitted system under one design on one shared build of the target sets. Returns
    ``(frames, per_user, metadata)``: ``frames`` ``{(design, system, metric): per-set table}`` (with
    ``(design, RANDOM, "P@n")`` for each precision metric: the per-set random expectation)."""
    d = parse(design)
    ts = build_targets(train, test, d, threshold=threshold, seed=seed, users=users, strict=strict)
    frames, rows = {}, []
    meta = None
    for name, system in fitted.items():
        r = evaluate(system, train, test, d, list(metrics), seed=seed, threshold=threshold, targets=ts)
        meta = r.metadata
        for m in r.aggregate.index:
            frames[(str(d), name, m)] = _frame(r.per_set, m)
            pu = per_user_means(r.per_set, m)
            rows.append(pd.DataFrame({"design": str(d), "system": name, "metric": m, "user": pu.index,
                                      "value": pu.to_numpy()}))
    base = pd.DataFrame({"user": ts.users})
    if d.kind == "P1R":
        base["percentile"] = ts.group
    for m in metrics:
        k = _precision_cutoff(m)
        if k is not None:
            frames[(str(d), RANDOM, m)] = base.assign(value=random_precision_per_set(ts, k, threshold))
    return frames, (pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()), dict(meta or ts.metadata)


def _tidy(frames: dict, reps: pd.DataFrame, names=("design", "system", "metric")) -> pd.DataFrame:
    values = point(frames)
    se = reps.std(ddof=1)
    out = pd.DataFrame([(*k, float(values[k]), float(se[k])) for k in frames], columns=[*names, "value", "se"])
    return out


def compare_designs(ratings: pd.DataFrame, systems, designs=tuple(THESIS_DESIGNS), metrics=("P@10", "nDCG@10"), *,
                    test_size: float = 0.2, sigma: float = 0.2, eps: float = 0.2, users: int | None = None,
                    threshold: float = 4.0, seed: int = 0, n_bootstrap: int = N_BOOTSTRAP,
                    fitted: dict | None = None) -> DesignRun:
    """Fig. 4.1 and Fig. 4.7: every system (zoo specs, or ``{name: spec}``) under every design (names of
    :data:`THESIS_DESIGNS` or specs). U designs (U1R, UAR, AI-UAR) use :func:`uniform_split` (σ, ε) and
    systems fitted on its training part; the others a random holdout (``fitted``: ``{name: system}``
    already fitted on it). Each
    design's target sets are built once and shared by the systems; every value gets a bootstrap
    standard error over users (:class:`DesignRun`)."""
    from ..data.splits import holdout

    train, test = holdout(ratings, test_size, seed=seed)
    utrain, utest, info = uniform_split(ratings, sigma, eps, seed=seed)
    systems = _named(systems)
    fitted = dict(fitted or {})
    fitted.update(fit_all({k: v for k, v in systems.items() if k not in fitted}, train))
    fitted = {k: fitted[k] for k in systems}
    ufitted = None
    frames = {"holdout": {}, "uniform": {}}  # per split
    per_user, meta = [], {}
    for name in designs:
        spec = design_spec(name, info["T"])
        d = parse(spec)
        if d.uniform and ufitted is None:
            ufitted = fit_all(systems, utrain)
        tr, te = (utrain, utest) if d.uniform else (train, test)
        f, pu, md = evaluate_systems(ufitted if d.uniform else fitted, tr, te, spec, metrics,
                                     users=sample_users(te, users, seed), threshold=threshold, seed=seed)
        frames["uniform" if d.uniform else "holdout"].update(f)
        per_user.append(pu)
        meta[spec] = {k: md.get(k) for k in ("n_sets", "short_sets", "short_users", "t", "n_users", "n_candidates")}
    allf = {**frames["holdout"], **frames["uniform"]}
    reps = replicates(allf, n_bootstrap=n_bootstrap, seed=seed)  # users drawn jointly: the same people in both splits
    tidy = _tidy(allf, reps)
    rnd = tidy[tidy["system"] == RANDOM].set_index(["design", "metric"])["value"]
    table = tidy[tidy["system"] != RANDOM].reset_index(drop=True)
    table["random_expected"] = [rnd.get((d, m), np.nan) for d, m in zip(table["design"], table["metric"])]
    return DesignRun(table, info, reps, pd.concat(per_user, ignore_index=True), meta)


@dataclass
class Curves:
    """What :func:`sparsity_curves` returns: ``table`` tidy ``curve, x, system, series, value, se``
    (series AR, 1R, lower, upper; ``se`` NaN for the exact Eq. 4.2 bounds) and the bootstrap
    ``replicates`` of the AR and 1R values (columns ``(x, system, series)`` of the removal curve,
    drawn jointly: the same users at every removal level)."""

    table: pd.DataFrame
    replicates: pd.DataFrame


def sparsity_curves(train, test, systems, *, removed=(0.0, 0.2, 0.4, 0.6, 0.8), sizes=(50, 100, 200, 400),
                    n: int = 10, users: int | None = None, threshold: float = 4.0, seed: int = 0,
                    n_bootstrap: int = N_BOOTSTRAP) -> Curves:
    """Fig. 4.3 and Fig. 4.2: P@n in AR (TI-AR-AN) and 1R (TI-1R-NN(n=99)) as test ratings are removed
    at random, and 1RP@n with its Eq. 4.2 bounds against |N_u| (``sizes``). ``systems``: ``{name:
    fitted}``. The AR and 1R values of the removal curve get bootstrap standard errors; the rows of
    system :data:`RANDOM` (series AR) give the analytic random precision ρ at each level, the
    relevance density the thesis says AR precision follows linearly (Eq. 4.4)."""
    who = sample_users(test, users, seed)
    rng = np.random.default_rng([seed, 13])
    keys = rng.random(len(test))
    rows, frames = [], {}
    one = f"TI-1R-NN(n={DEFAULT_N})"
    def bounds_sets(te, size):   # the 1R and AR sets of Eq. 4.2, built once for every system
        return tuple(build_targets(train, te, f"TI-{kind}-NN(n={size})", threshold=threshold, seed=seed, users=who)
                     for kind in ("1R", "AR"))

    full_bounds = {}              # nothing removed: the bounds at |N_u| = DEFAULT_N, again in the size curve
    for frac in removed:
        te = test[keys >= frac]
        ts = build_targets(train, te, "TI-AR-AN", threshold=threshold, seed=seed, users=who)
        frames[(frac, RANDOM, "AR")] = pd.DataFrame({"user": ts.users,
                                                     "value": random_precision_per_set(ts, n, threshold)})
        sets = bounds_sets(te, DEFAULT_N)
        for name, s in systems.items():
            ar = evaluate(s, train, te, "TI-AR-AN", f"P@{n}", seed=seed, threshold=threshold, targets=ts)
            r1 = evaluate(s, train, te, one, f"P@{n}", seed=seed, threshold=threshold, targets=sets[0])
            b = eq42_bounds(s, train, te, n, size=DEFAULT_N, threshold=threshold, seed=seed, users=who, targets=sets)
            if len(te) == len(test):
                full_bounds[name] = b
            frames[(frac, name, "AR")] = _frame(ar.per_set, f"P@{n}")
            frames[(frac, name, "1R")] = _frame(r1.per_set, f"P@{n}")
            rows += [("removed", frac, name, "lower", b["lower"]), ("removed", frac, name, "upper", b["upper"])]
    for size in sizes:
        sets = None if size == DEFAULT_N and len(full_bounds) == len(systems) else bounds_sets(test, size)
        for name, s in systems.items():
            b = full_bounds[name] if sets is None else eq42_bounds(s, train, test, n, size=size, threshold=threshold,
                                                                   seed=seed, users=who, targets=sets)
            rows += [("size", size + 1, name, "1R", b["value"]), ("size", size + 1, name, "lower", b["lower"]),
                     ("size", size + 1, name, "upper", b["upper"])]
    reps = replicates(frames, n_bootstrap=n_bootstrap, seed=seed)
    measured = _tidy(frames, reps, ("x", "system", "series")).assign(curve="removed")
    exact = pd.DataFrame(rows, columns=["curve", "x", "system", "series", "value"]).assign(se=np.nan)
    table = pd.concat([measured[["curve", "x", "system", "series", "value", "se"]], exact], ignore_index=True)
    return Curves(table, reps)


def positive_ratio(ratings: pd.DataFrame, *, segments: int = 100, threshold: float = 4.0) -> pd.DataFrame:
    """Fig. 4.6: pr(i)/r(i) (positive share of an item's ratings) against popularity rank, averaged over
    ``segments`` equal segments of the rank. Columns ``segment, rank, ratio, popularity``."""
    r = popularity(ratings)
    pr = ratings[ratings["rating"] >= threshold]["item"].value_counts().reindex(r.index, fill_value=0)
    seg = np.minimum(np.arange(len(r)) * segments // len(r), segments - 1)
    frame = pd.DataFrame({"segment": seg, "rank": np.arange(1, len(r) + 1), "ratio": pr.to_numpy() / r.to_numpy(),
                          "popularity": r.to_numpy()})
    return frame.groupby("segment", as_index=False).mean()


@dataclass
class Sweep:
    """What :func:`alpha_sweep` returns: ``table`` tidy ``alpha, system, value, se, random_expected``
    and the bootstrap ``replicates`` (columns ``(alpha, system)`` plus ``(alpha, RANDOM)``; each α is
    its own simulated data set, drawn independently of the others); ``ratings_per_item``: r/|I| of the
    simulated data (the thesis' MovieLens 1M: 1,000,209/3,706 ≈ 270), which sets how strongly r_train
    and r_test anti-correlate at α = 0 (§4.5.1)."""

    table: pd.DataFrame
    replicates: pd.DataFrame
    design: str
    ratings_per_item: float = float("nan")


@functools.lru_cache(maxsize=8)
def _simulated(alpha: float, like: str, seed: int):
    """Power-law data shaped like ``like`` (``rm.datasets.load("powerlaw", ...)``), drawn once for
    :func:`alpha_sweep` and :func:`fig44_side_panels`, which read the same simulations (never changed)."""
    from ..data import datasets

    return datasets.load("powerlaw", alpha=alpha, like=like, seed=seed)


def alpha_sweep(like: str, systems, *, alphas=(0.0, 0.5, 1.0, 1.5, 2.0), design: str = f"TI-1R-NN(n={DEFAULT_N})",
                metric: str = "P@10", users: int | None = None, test_size: float = 0.2, threshold: float = 4.0,
                seed: int = 0, n_bootstrap: int = N_BOOTSTRAP) -> Sweep:
    """Fig. 4.4 (centre): ``metric`` of each system on power-law data shaped like ``like`` for each α,
    beside the analytic random expectation. The thesis shows 1R ("We show only the 1R design, but
    the effect is the same in AR", §4.5.2), hence the default design."""
    from ..data.splits import holdout

    rows, reps, per_item = [], [], float("nan")
    for k, a in enumerate(alphas):
        ds = _simulated(a, like, seed)
        per_item = len(ds.ratings) / ds.ratings["item"].nunique()
        train, test = holdout(ds.ratings, test_size, seed=seed)
        f, _, _ = evaluate_systems(fit_all(systems, train), train, test, design, [metric],
                                   users=sample_users(test, users, seed), threshold=threshold, seed=seed)
        f = {(a, s): fr for (_, s, _), fr in f.items()}
        r = replicates(f, n_bootstrap=n_bootstrap, seed=seed * 1000 + k)
        reps.append(r)
        t = _tidy(f, r, ("alpha", "system"))
        exp = float(t.loc[t["system"] == RANDOM, "value"].iloc[0]) if (t["system"] == RANDOM).any() else np.nan
        rows.append(t[t["system"] != RANDOM].assign(random_expected=exp))
    return Sweep(pd.concat(rows, ignore_index=True), pd.concat(reps, axis=1), str(parse(design)), per_item)


@_reports_short_pools
def random_vs_analytic(train, test, designs=(f"TI-1R-NN(n={DEFAULT_N})", "TI-AR-AN", f"TI-AR-NN(n={DEFAULT_N})",
                                             f"P1R(m=10,n={DEFAULT_N})"),
                       *, seeds=(0, 1, 2), users: int | None = None, threshold: float = 4.0, seed: int = 0,
                       n_bootstrap: int = N_BOOTSTRAP) -> pd.DataFrame:
    """Measured P@10 of seeded Random recommenders beside E[P_RND@10] (Eq. 4.4 / 4.5) per design.
    Tidy ``design, seed, measured, expected, se, short_sets`` (target sets the design's pool left
    short: :class:`~recmetrics.protocols.targets.ShortPoolWarning`): ``se`` is the standard error of the mean of the
    seeds' measurements (the same for every seed row of a design) — the larger of the bootstrap over
    users and the spread a random ranking has under the expectation itself (hypergeometric hits per
    set, :func:`~recmetrics.protocols.expectations.random_precision_variance_per_set`): with a few
    relevant items per thousand candidates the bootstrap of a handful of observed hits understates it,
    and the null spread ignores that a user's 1R sets share N_u."""
    from .. import recommenders

    who = sample_users(test, users, seed)
    rows = []
    for d in designs:
        spec = str(parse(d))
        ts = build_targets(train, test, spec, threshold=threshold, seed=seed, users=who)
        per = random_precision_per_set(ts, 10, threshold)
        exp = float(pd.Series(per).groupby(ts.group).mean().mean())
        weight = 1.0 / (pd.Series(ts.group).map(pd.Series(ts.group).value_counts()).to_numpy() * len(np.unique(ts.group)))
        null_se = float(np.sqrt((weight ** 2 * random_precision_variance_per_set(ts, 10, threshold)).sum() / len(seeds)))
        parts = []
        for s in seeds:
            rnd = recommenders.create("Random", seed=s).fit(train)
            r = evaluate(rnd, train, test, spec, "P@10", seed=s, threshold=threshold, users=who,
                         targets=ts if s == seed else None)   # the sets of the expectation, drawn with this seed
            parts.append((s, float(r.aggregate.iloc[0]), _frame(r.per_set, "P@10")))
        pooled = {spec: pd.concat([p[2] for p in parts], ignore_index=True)}
        se = max(null_se, float(replicates(pooled, n_bootstrap=n_bootstrap, seed=seed).std(ddof=1).iloc[0]))
        short = int(ts.metadata.get("short_sets", 0))
        rows += [(spec, s, v, exp, se, short) for s, v, _ in parts]
    return pd.DataFrame(rows, columns=["design", "seed", "measured", "expected", "se", "short_sets"])


def cumulative_popularity(ratings: pd.DataFrame, *, threshold: float | None = None, points: int | None = 200
                          ) -> pd.DataFrame:
    """Fig. 4.4 (left and right): the cumulative share of an item set's ratings against the items ranked by
    decreasing popularity (paper 004 §4.5.2). ``threshold=None`` counts every rating (left panel: simulated
    data); a number counts only the positive ratings, ``rating >= threshold``, and ranks the items that have
    at least one (right panel: "the cumulative distribution of positive ratings in real datasets"; the thesis
    likewise keeps only the TREC documents relevant to some query).

    Columns ``rank`` (1 = most popular), ``item_share`` (rank / number of items, so data sets of different
    sizes share the x axis), ``count`` (the item's ratings) and ``cumulative`` (share of all counted ratings
    held by the items up to ``rank``). With ``points`` the table keeps the first ``points // 4`` ranks and
    evenly spaced ones after them (and the last): the values kept are exact, the curve stays light."""
    if threshold is not None:
        ratings = ratings[ratings["rating"] >= threshold]
    if ratings.empty:
        raise InputError("cumulative_popularity: no ratings to count"
                         + (f" at or above threshold {threshold:g}" if threshold is not None else ""))
    counts = popularity(ratings).to_numpy(dtype=float)
    n = len(counts)
    frame = pd.DataFrame({"rank": np.arange(1, n + 1), "item_share": np.arange(1, n + 1) / n, "count": counts,
                          "cumulative": np.cumsum(counts) / counts.sum()})
    if points and n > points:
        head = max(points // 4, 1)
        keep = np.unique(np.concatenate([np.arange(head), np.linspace(head, n - 1, points - head).round().astype(int)]))
        frame = frame.iloc[keep].reset_index(drop=True)
    return frame


def positive_concentration(ratings: pd.DataFrame, *, threshold: float = 4.0, head: float = 0.1) -> dict:
    """The statistics §4.5.2 quotes beside Fig. 4.4 (right), for one rating data set: the number of items with
    a positive rating (``rating >= threshold``), the share of them liked by a single user (TREC: 87.2% of
    the documents are relevant to one query), the share of users who like the most liked item (Netflix 20.1%,
    MovieLens 32.7%, Last.fm 73%; TREC's most judged document: 3.6% of the queries) and the share of the
    positive ratings held by the ``head`` most liked items."""
    pos = ratings[ratings["rating"] >= threshold]
    if pos.empty:
        raise InputError(f"positive_concentration: no rating at or above threshold {threshold:g}")
    likes = pos.groupby("item")["user"].nunique().sort_values(ascending=False)
    n_head = int(np.ceil(head * len(likes)))
    return {"items": int(len(likes)), "single_share": float((likes == 1).mean()),
            "top_share_users": float(likes.iloc[0] / ratings["user"].nunique()),
            "head": head, "head_share": float(likes.iloc[:n_head].sum() / likes.sum())}


def popularity_curves(frames, *, threshold: float | None = None, points: int | None = 200) -> pd.DataFrame:
    """:func:`cumulative_popularity` of every ``{label: ratings}`` in ``frames``, stacked with a ``data``
    column (the label) -- one curve per data set of Fig. 4.4 (left or right)."""
    parts = [cumulative_popularity(r, threshold=threshold, points=points).assign(data=str(label))
             for label, r in dict(frames).items()]
    if not parts:
        raise InputError("popularity_curves: no data sets given")
    return pd.concat(parts, ignore_index=True)


def fig44_side_panels(like: str, *, alphas=(0.0, 0.5, 1.0, 1.5, 2.0), datasets=("movielens-small", "insteval"),
                      threshold: float = 4.0, points: int | None = 200, seed: int = 0) -> dict:
    """Fig. 4.4's outer panels (paper 004 §4.5.2). ``left``: the cumulative popularity of power-law data
    shaped like ``like`` for each α (every rating counted; the same simulator and seed as
    :func:`alpha_sweep`); ``right``: the cumulative distribution of positive ratings (``>= threshold``) of
    the real ``datasets``; ``positive``: :func:`positive_concentration` per real data set (one row each)."""
    from ..data import datasets as registry

    sims = {f"α = {a:g}": _simulated(a, like, seed).ratings for a in alphas}
    real = {name: registry.load(name).ratings for name in dict.fromkeys(datasets)}
    positive = pd.DataFrame([{"data": name, **positive_concentration(r, threshold=threshold)}
                             for name, r in real.items()])
    return {"left": popularity_curves(sims, points=points),
            "right": popularity_curves(real, threshold=threshold, points=points), "positive": positive}


#: beyond-accuracy metrics of each system's own lists shown beside the designs (recmetrics.metrics.popularity,
#: recmetrics.metrics.exposure)
LIST_BIAS = ("ARP", "APLT", "ItemCoverage", "Gini")


def list_popularity(train: pd.DataFrame, test: pd.DataFrame, systems, *, n: int = 10, users: int | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """How popularity-biased each system's own top-``n`` lists are: ARP, APLT, item coverage and Gini
    (:data:`LIST_BIAS`, item popularity from ``train``) of the lists given to the test users (all of
    them, or the seeded sample of ``users`` of :func:`sample_users`). ``systems``: ``{name: fitted}``.
    One row per system, one column per metric."""
    from ..data.qrels import Qrels
    from ..evaluation import evaluate as evaluate_run

    who = sample_users(test, users, seed)
    who = np.sort(test["user"].unique()) if who is None else np.sort(who)
    qrels = Qrels(test)  # names the users; relevance plays no part in these metrics
    metrics = [f"{m}@{n}" for m in LIST_BIAS]
    rows = {name: evaluate_run(s.recommend(who, n=n), qrels, metrics, users=who, train=train).summary()
            for name, s in systems.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(LIST_BIAS)).rename_axis("system")


def bias_beside_designs(bias: pd.DataFrame, designs: pd.DataFrame, metric: str = "P@10",
                        x: str = "ARP") -> pd.DataFrame:
    """Each system's list bias (column ``x`` of :func:`list_popularity`) beside its ``metric`` under every
    design (the table of :func:`compare_designs`). Tidy: ``design, system, <x>, value``."""
    part = designs[designs["metric"] == metric]
    if part.empty:
        raise InputError(f"no {metric!r} rows in the designs table (metrics: {sorted(designs['metric'].unique())})")
    missing = sorted(set(part["system"]) - set(bias.index))
    if missing:
        raise InputError(f"systems {missing} have no list bias; compute list_popularity for every system")
    out = part[["design", "system", "value"]].copy()
    out.insert(2, x, bias.loc[out["system"], x].to_numpy())
    return out.reset_index(drop=True)


def bias_by_design(joined: pd.DataFrame, x: str = "ARP") -> pd.DataFrame:
    """Per design (from :func:`bias_beside_designs`): Spearman's ρ over the systems between their list
    bias ``x`` and their metric value (near 1: the design rewards the most popular lists), the system
    with the most popularity-biased lists and its value relative to the design's best value."""
    rows = {}
    for design, g in joined.groupby("design", sort=False):
        top = g.loc[g[x].idxmax()]
        best = g["value"].max()
        rows[design] = {"spearman": g[x].corr(g["value"], method="spearman"), "most_biased": top["system"],
                        "relative": top["value"] / best if best > 0 else np.nan}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("design")
