"""The simulated dataset ``powerlaw``: ratings with power-law item popularity shaped like a
registered dataset (paper 004 §4.5.2; the simulator is :mod:`recmetrics.data.simulate`).
"""
from __future__ import annotations

from .record import Dataset
from .registry import DEFAULT, load, register
from .validate import _finish

__all__ = ["powerlaw"]


@register("powerlaw", aliases=("power-law", "simulated"), source="simulated: recmetrics.data.simulate",
          description="Simulated ratings with power-law item popularity r(i_k) = c1 + β(c2 + k)^-α and the sizes "
                      "and rating distribution of a reference dataset (paper 004 §4.5.2).")
def powerlaw(alpha: float = 1.4, like: str = DEFAULT, seed: int = 0, c1: float = 1.0, c2: float | None = None) -> Dataset:
    """Power-law simulated dataset shaped like the registered dataset ``like`` (no preference structure).

    Item k (popularity rank) gets r(i_k) = c1 + β(c2 + k)^-α ratings, β set so that the counts sum
    to the reference's number of ratings (Bellogín's thesis §4.5.2, Fig. 4.4); the users, items,
    ratings and rating-value distribution are those of ``like`` (default ``movielens-small``),
    raters are drawn uniformly. ``alpha`` (default 1.4, ≈ MovieLens 1M; 0 is uniform), ``c1``
    (default 1), ``c2`` (default ``None``: fitted to the reference) and ``seed`` (default 0) go
    to :func:`recmetrics.data.simulate.like`. No aspects, no timestamps.

    >>> import recmetrics as rm
    >>> sim = rm.datasets.load("powerlaw", alpha=0.5, like="insteval")
    >>> sim.name, len(sim) == len(rm.datasets.load("insteval")), sim.rating_scale
    ('powerlaw(alpha=0.5,like=insteval)', True, (1.0, 5.0))
    """
    from .. import simulate

    ref = load(like)
    frame = simulate.like(ref, alpha, c1=c1, c2=c2, seed=seed)
    desc = f"Simulated like {ref.name} with power-law popularity alpha={alpha:g} (c1={c1:g}, c2={c2}, seed={seed})."
    return _finish(f"powerlaw(alpha={alpha:g},like={ref.name})", frame, None, ref.rating_scale, desc)
