"""Computations of the chapter "Popularity bias and how to neutralise it" (paper 004, §4.4-4.6),
kept in the library so the notebook only calls, charts and explains.

Every function takes a seed; ``users`` (an int) evaluates a seeded sample of the test users (the
quick profile), ``None`` all of them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .expectations import eq42_bounds, expected_random_precision, uniform_split
from .targets import evaluate, popularity


#: the uniform split the thesis reports (§4.6.2, MovieLens 1M with σ = 0.2, ε = 0.2), shown beside ours
THESIS_UNIFORM_SPLIT = {"data": "MovieLens 1M", "sigma": 0.2, "eps": 0.2, "T": 1703, "eta": 118}


def sample_users(test: pd.DataFrame, users: int | None, seed: int = 0):
    """Ids of ``users`` test users drawn at random (None, i.e. all, when ``users`` is None)."""
    if users is None:
        return None
    ids = np.sort(test["user"].unique())
    if users < 1:
        raise InputError(f"users must be a positive number of test users, got {users}")
    pick = np.random.default_rng([seed, 11]).choice(ids, min(users, len(ids)), replace=False)
    return pick


def fit_all(systems, train):
    """``{spec: fitted system}`` for the zoo specs ``systems``."""
    from .. import recommenders

    return {s: recommenders.create(s).fit(train) for s in systems}


def compare_designs(ratings: pd.DataFrame, systems, designs=("TI-1R-NN(n=100)", "TI-AR-AN", "P1R(m=10,n=50)",
                    "U1R(n=100)", "UAR", "head10"), metrics=("P@10", "nDCG@10"), *, test_size: float = 0.2,
                    sigma: float = 0.2, eps: float = 0.2, users: int | None = None, threshold: float = 4.0,
                    seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Fig. 4.7: every system under every design. U designs use :func:`uniform_split` (σ, ε) and systems
    fitted on its training part; the others a random holdout. Returns a tidy table
    ``design, system, metric, value, random_expected`` and the uniform split's info (|T|, η)."""
    from ..data.splits import holdout

    train, test = holdout(ratings, test_size, seed=seed)
    utrain, utest, info = uniform_split(ratings, sigma, eps, seed=seed)
    fitted, ufitted = fit_all(systems, train), None
    rows = []
    for d in designs:
        uniform = d.upper().startswith(("U1R", "UAR"))
        if uniform and ufitted is None:
            ufitted = fit_all(systems, utrain)
        tr, te = (utrain, utest) if uniform else (train, test)
        who = sample_users(te, users, seed)
        exp = expected_random_precision(tr, te, d, 10, threshold=threshold, seed=seed, users=who)
        for name, system in (ufitted if uniform else fitted).items():
            agg = evaluate(system, tr, te, d, list(metrics), seed=seed, threshold=threshold, users=who).aggregate
            rows += [(d, name, m, float(v), exp) for m, v in agg.items()]
    return pd.DataFrame(rows, columns=["design", "system", "metric", "value", "random_expected"]), info


def sparsity_curves(train, test, systems, *, removed=(0.0, 0.2, 0.4, 0.6, 0.8), sizes=(50, 100, 200, 400),
                    n: int = 10, users: int | None = None, threshold: float = 4.0, seed: int = 0) -> pd.DataFrame:
    """Fig. 4.3 and Fig. 4.2: P@n in AR (TI-AR-AN) and 1R (TI-1R-NN(n=100)) as test ratings are removed
    at random, and 1RP@n with its Eq. 4.2 bounds against |N_u|. ``systems``: ``{name: fitted}``.
    Tidy: ``curve, x, system, series, value`` (series: AR, 1R, lower, upper)."""
    who = sample_users(test, users, seed)
    rng = np.random.default_rng([seed, 13])
    keys = rng.random(len(test))
    rows = []
    for frac in removed:
        te = test[keys >= frac]
        for name, s in systems.items():
            ar = evaluate(s, train, te, "TI-AR-AN", f"P@{n}", seed=seed, threshold=threshold,
                          users=who).aggregate.iloc[0]
            b = eq42_bounds(s, train, te, n, size=100, threshold=threshold, seed=seed, users=who)
            rows += [("removed", frac, name, "AR", ar), ("removed", frac, name, "1R", b["value"]),
                     ("removed", frac, name, "lower", b["lower"]), ("removed", frac, name, "upper", b["upper"])]
    for size in sizes:
        for name, s in systems.items():
            b = eq42_bounds(s, train, test, n, size=size, threshold=threshold, seed=seed, users=who)
            rows += [("size", size + 1, name, "1R", b["value"]), ("size", size + 1, name, "lower", b["lower"]),
                     ("size", size + 1, name, "upper", b["upper"])]
    return pd.DataFrame(rows, columns=["curve", "x", "system", "series", "value"])


def positive_ratio(ratings: pd.DataFrame, *, segments: int = 100, threshold: float = 4.0) -> pd.DataFrame:
    """Fig. 4.6: pr(i)/r(i) (positive share of an item's ratings) against popularity rank, averaged over
    ``segments`` equal segments of the rank. Columns ``segment, rank, ratio, popularity``."""
    r = popularity(ratings)
    pr = ratings[ratings["rating"] >= threshold]["item"].value_counts().reindex(r.index, fill_value=0)
    seg = np.minimum(np.arange(len(r)) * segments // len(r), segments - 1)
    frame = pd.DataFrame({"segment": seg, "rank": np.arange(1, len(r) + 1), "ratio": pr.to_numpy() / r.to_numpy(),
                          "popularity": r.to_numpy()})
    return frame.groupby("segment", as_index=False).mean()


def alpha_sweep(like: str, systems, *, alphas=(0.0, 0.5, 1.0, 1.5, 2.0), design: str = "TI-AR-AN",
                metric: str = "P@10", users: int | None = None, test_size: float = 0.2, threshold: float = 4.0,
                seed: int = 0) -> pd.DataFrame:
    """Fig. 4.4 (centre): ``metric`` of each system on power-law data shaped like ``like`` for each α,
    beside the analytic random expectation. Tidy: ``alpha, system, value, random_expected``."""
    from ..data import datasets
    from ..data.splits import holdout

    rows = []
    for a in alphas:
        ds = datasets.load("powerlaw", alpha=a, like=like, seed=seed)
        train, test = holdout(ds.ratings, test_size, seed=seed)
        who = sample_users(test, users, seed)
        exp = expected_random_precision(train, test, design, threshold=threshold, seed=seed, users=who)
        for name, s in fit_all(systems, train).items():
            v = evaluate(s, train, test, design, metric, seed=seed, threshold=threshold, users=who).aggregate.iloc[0]
            rows.append((a, name, float(v), exp))
    return pd.DataFrame(rows, columns=["alpha", "system", "value", "random_expected"])


def random_vs_analytic(train, test, designs=("TI-1R-NN(n=100)", "TI-AR-AN", "TI-AR-NN(n=100)", "P1R(m=10,n=50)"),
                       *, seeds=(0, 1, 2), users: int | None = None, threshold: float = 4.0, seed: int = 0) -> pd.DataFrame:
    """Measured P@10 of seeded Random recommenders beside E[P_RND@10] (Eq. 4.4 / 4.5) per design."""
    from .. import recommenders

    who = sample_users(test, users, seed)
    rows = []
    for d in designs:
        exp = expected_random_precision(train, test, d, threshold=threshold, seed=seed, users=who)
        for s in seeds:
            rnd = recommenders.create("Random", seed=s).fit(train)
            v = evaluate(rnd, train, test, d, "P@10", seed=s, threshold=threshold, users=who).aggregate.iloc[0]
            rows.append((d, s, float(v), exp))
    return pd.DataFrame(rows, columns=["design", "seed", "measured", "expected"])


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

    sims = {f"α = {a:g}": registry.load("powerlaw", alpha=a, like=like, seed=seed).ratings for a in alphas}
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
