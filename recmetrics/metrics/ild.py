r"""Beyond accuracy: intra-list diversity (ILD) over item aspects.

:math:`\mathrm{ILD@}k = \frac{1}{|L_u|}\sum_{i \in L_u} \frac{\sum_{j \in L_u, j \ne i,\,
d(i,j)\ \text{defined}} d(i, j)}{|\{j \in L_u : j \ne i,\ d(i,j)\ \text{defined}\}|}`
over the top :math:`k` list :math:`L_u` (Smyth & McClave 2001; Ziegler et al. 2005), the form
of RankSys' ``EILD`` (``RankSys-diversity/.../distance/metrics/EILD.java``) without relevance or
rank discount, as its ``MetricExample.java`` runs it. When every listed item has an aspect this is
the mean distance over the :math:`|L_u|(|L_u|-1)` ordered pairs,
:math:`\frac{2}{|L_u|(|L_u|-1)}\sum_{i<j} d(i,j)`.

The distance compares the items' aspect sets :math:`A_i` (``aspects=``, e.g. MovieLens genres,
as the diversity metrics take them) as binary feature vectors: ``distance="cosine"`` (default, the
RankSys example's ``CosineFeatureItemDistanceModel``)
:math:`d = 1 - |A_i\cap A_j|/\sqrt{|A_i||A_j|}`, or ``"jaccard"``
(``JaccardFeatureItemDistanceModel``) :math:`d = 1 - |A_i\cap A_j|/|A_i\cup A_j|`. An item
without an aspect has no distance to anything (RankSys returns NaN and skips the pair): it adds
nothing to the sum but still counts in :math:`|L_u|`. Lists of fewer than 2 items (and users
without a list) score 0. Neither Elliot nor RecBole has ILD.

Example::

    >>> import pandas as pd, recmetrics as rm
    >>> aspects = pd.Series({"a": ("x",), "b": ("x", "y"), "c": ("z",)})
    >>> test = pd.DataFrame({"user": [1], "item": ["a"], "rating": 5.0})
    >>> rm.evaluate(rm.Run.from_lists({1: ["a", "b", "c"]}), rm.Qrels(test), ["ILD@3"], aspects=aspects).per_user
             ILD@3
    user
    1     0.764298
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .registry import register

DISTANCES = ("cosine", "jaccard")
_CHUNK_CELLS = 1 << 22  # users x k x k pair cells per chunk


@register("ILD", aliases=("intra-list-diversity", "eild"), params={"distance": "cosine"}, needs=("aspects",),
          family="diversity", bounds=(0.0, 1.0), perfect=None,
          description="Intra-list diversity: mean aspect distance (cosine or Jaccard) between the listed items")
def ild(j, k, distance="cosine", *, aspects):
    from .diversity import aspect_index

    distance = str(distance).lower()
    if distance not in DISTANCES:
        raise InputError(f"ILD: distance={distance!r} must be one of {DISTANCES}")
    idx = aspect_index(aspects)
    k = j.cut(k)
    n = len(j)
    out = np.zeros(n)
    if k < 2 or idx.n_aspects == 0:
        return out
    lengths = np.minimum(j.lengths, k)
    items = j.items
    step = max(1, _CHUNK_CELLS // (k * k))
    off_diag = ~np.eye(k, dtype=bool)
    for s in range(0, n, step):
        ln = lengths[s:s + step]
        valid = np.arange(k)[None, :] < ln[:, None]
        member = (idx.lookup(items[s:s + step, :k]) & valid[..., None]).astype(np.float64)
        inter = member @ member.transpose(0, 2, 1)                     # |A_i ∩ A_j|
        size = member.sum(axis=2)                                      # |A_i|
        a, b = size[:, :, None], size[:, None, :]
        defined = (a > 0) & (b > 0) & off_diag
        with np.errstate(divide="ignore", invalid="ignore"):
            sim = inter / np.sqrt(a * b) if distance == "cosine" else inter / (a + b - inter)
        dist = np.where(defined, 1.0 - sim, 0.0)
        count = defined.sum(axis=2)
        per_item = np.divide(dist.sum(axis=2), count, out=np.zeros(count.shape), where=count > 0)
        out[s:s + step] = np.divide(per_item.sum(axis=1), ln, out=np.zeros(len(ln)), where=ln > 0)
    return out
