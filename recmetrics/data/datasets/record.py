"""The :class:`Dataset` record: ratings in canonical form plus aspects, rating scale and metadata.

Pickles of a Dataset made before the record moved here name ``recmetrics.data.datasets.Dataset``,
which the package re-exports, so they still load.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["Dataset"]


@dataclass(repr=False)
class Dataset:
    """A ratings dataset in canonical form.

    Attributes
    ----------
    name : registry name (or a free label for custom data).
    ratings : DataFrame with columns ``user, item, rating[, timestamp]``, one row per pair.
    aspects : Series indexed by item id whose values are tuples of aspect labels (e.g. genres;
        an empty tuple when the item has none), or ``None`` when the data have no aspects.
    rating_scale : ``(min, max)`` of the rating scale, e.g. ``(0.5, 5.0)``.
    description : one-paragraph description (source, size, caveats).
    item_info : optional DataFrame indexed by item id with metadata such as ``title``.

    Loaders build it (:func:`recmetrics.datasets.load`, :func:`~recmetrics.datasets.from_frame`),
    so its ratings are validated; the record itself checks nothing.

    >>> import recmetrics as rm
    >>> ds = rm.datasets.from_frame(pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10],
    ...                                           "rating": [4.0, 2.0, 5.0]}), "toy")
    >>> ds
    Dataset('toy': 2 users, 2 items, 3 ratings, scale 2-5, no aspects)
    >>> ds.n_users, ds.n_items, len(ds), ds.has_timestamps
    (2, 2, 3, False)
    """

    name: str
    ratings: pd.DataFrame
    aspects: pd.Series | None
    rating_scale: tuple[float, float]
    description: str = ""
    item_info: pd.DataFrame | None = None

    @property
    def n_users(self) -> int:
        """Number of distinct users with a rating."""
        return int(self.ratings["user"].nunique())

    @property
    def n_items(self) -> int:
        """Number of distinct rated items."""
        return int(self.ratings["item"].nunique())

    @property
    def has_timestamps(self) -> bool:
        """True when the ratings have a ``timestamp`` column."""
        return "timestamp" in self.ratings.columns

    def __len__(self) -> int:
        return len(self.ratings)

    def __repr__(self) -> str:
        lo, hi = self.rating_scale
        if self.aspects is None:
            asp = "no aspects"
        else:
            labels = {a for t in self.aspects for a in t}
            asp = f"{len(labels)} aspect labels"
        ts = ", timestamps" if self.has_timestamps else ""
        return (f"Dataset({self.name!r}: {self.n_users:,} users, {self.n_items:,} items, "
                f"{len(self.ratings):,} ratings, scale {lo:g}-{hi:g}, {asp}{ts})")
