"""Seeded resampling weights shared by the meta-evaluation and the evaluation designs.

:func:`bootstrap_weights` draws users with replacement as count vectors, so a bootstrap mean over
``n`` users is one matrix product ``W @ x / n`` per chunk of replicates. The paired bootstrap test
and the confidence intervals of :mod:`recmetrics.meta.significance` use it, and so do the
bootstrap standard errors of :mod:`recmetrics.protocols.uncertainty`, which sits below ``meta``;
it therefore lives below both.
"""
from __future__ import annotations

import numpy as np

__all__ = ["bootstrap_weights"]


def bootstrap_weights(n: int, n_boot: int, seed: int, chunk: int):
    """Yield (chunk, n) float64 resampling counts (multinomial: users drawn with replacement).

    The draws depend on ``seed``, ``n`` and the chunk sizes only (``numpy.random.default_rng(seed)``).

    >>> W = np.vstack(list(bootstrap_weights(4, 5, 0, 2)))
    >>> W.shape, W.sum(axis=1).tolist()
    ((5, 4), [4.0, 4.0, 4.0, 4.0, 4.0])
    """
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_boot:
        k = min(chunk, n_boot - done)
        yield rng.multinomial(n, np.full(n, 1.0 / n), size=k).astype(np.float64)
        done += k
