"""A tiny LRU cache keyed by object identity.

It holds the parsed aspect indexes (:mod:`.aspects`, keyed by ``id(aspects)``) and the greedy
ideal gains (:mod:`.ideal`, keyed by ``id(qrels)`` and the users): each entry keeps its key
objects alive, so an ``id()`` cannot be reused by another object while the entry exists.
"""
from __future__ import annotations

from collections import OrderedDict

_CACHE_SIZE = 16


class _LRU:
    """A tiny LRU cache; entries keep their key objects alive so ``id()`` keys stay unique."""

    def __init__(self, size: int = _CACHE_SIZE):
        self.size = size
        self.data: OrderedDict = OrderedDict()

    def get(self, key):
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
            return hit[1]
        return None

    def put(self, key, keep, value):
        self.data[key] = (keep, value)
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)
        return value
