"""Non-personalised baselines: Random and Popularity."""
from __future__ import annotations

import numpy as np

from .base import Recommender
from .registry import register


@register("Random")
class RandomRecommender(Recommender):
    """Uniformly random scores; user ``u``'s scores come from a generator seeded with
    ``(seed, u's training index)``, so they do not depend on which other users are scored."""

    family = "non-personalised (random)"
    source = "numpy"
    reference = "Bellogín 2011 (ch. 4)"

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def _score(self, uidx):
        n = len(self.items_)
        return np.stack([np.random.default_rng([self.seed, int(u)]).random(n) for u in uidx]) if len(uidx) \
            else np.zeros((0, n))


@register("Pop", aliases=("popularity", "mostpopular"))
class Popularity(Recommender):
    """Items ranked by the number of training ratings they received (``relevant_only``: by the
    number of ratings >= ``threshold``)."""

    family = "non-personalised (popularity)"
    source = "numpy"
    reference = "Cremonesi et al. 2010; Bellogín 2011 (ch. 4)"

    def __init__(self, relevant_only: bool = False, threshold: float = 4.0):
        self.relevant_only = bool(relevant_only)
        self.threshold = float(threshold)

    def _fit(self):
        R = self.R_
        counted = (R >= self.threshold) if self.relevant_only else (R != 0)
        self.popularity_ = np.asarray(counted.sum(axis=0)).ravel().astype(np.float64)

    def _score(self, uidx):
        return np.broadcast_to(self.popularity_, (len(uidx), len(self.popularity_))).copy()
