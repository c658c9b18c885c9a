"""Ranking metrics (Valcarce et al., IRJ 2020, Sec. 3.2, Eq. 1-11), vectorised over users.

Each kernel takes a :class:`~recmetrics.judged.Judged` and a cut-off ``k`` (None = full list)
and returns one value per user. P, Recall, AP, nDCG, RR, bpref and infAP equal trec_eval's
``P``, ``recall``, ``map_cut``, ``ndcg_cut``, ``recip_rank``, ``bpref`` and ``infAP`` per user
(the last three over the list truncated at ``k``).
"""
from __future__ import annotations

import numpy as np

from .registry import register

INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def _hits(j, k: int) -> np.ndarray:
    """Relevant items in the top k (|L^k ∩ R|)."""
    return j.cum_rel[:, k - 1] if k > 0 else np.zeros(len(j))


@register("P", cutoff="required", aliases=("precision", "prec"), trec_eval="P_k",
          description="Precision@k: relevant items in the top k divided by k (Eq. 1)")
def precision(j, k):
    k = j.cut(k)
    return _hits(j, k) / k


@register("Recall", cutoff="required", aliases=("r", "rec"), trec_eval="recall_k",
          description="Recall@k: relevant items in the top k over all of the user's relevant items (Eq. 2)")
def recall(j, k):
    k = j.cut(k)
    return _safe_div(_hits(j, k), j.n_rel)


@register("F1", cutoff="required", aliases=("f", "f-measure", "fmeasure"),
          description="F1@k: harmonic mean of P@k and Recall@k, 0 when both are 0 (Eq. 3)")
def f1(j, k):
    p, r = precision(j, k), recall(j, k)
    return _safe_div(2 * p * r, p + r)


@register("AP", aliases=("map", "averageprecision"), trec_eval="map_cut_k",
          description="Average precision@k: mean of P@i at each relevant rank i <= k, over |R_u| (Eq. 4)")
def average_precision(j, k):
    k = j.cut(k)
    ranks = np.arange(1, k + 1)
    prec_at_rel = np.where(j.rel[:, :k], j.cum_rel[:, :k] / ranks, 0.0)
    return _safe_div(prec_at_rel.sum(axis=1), j.n_rel)


def _discount(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2))


def dcg(gains: np.ndarray, k: int) -> np.ndarray:
    g = gains[:, :k]
    return g @ _discount(g.shape[1])


@register("nDCG", aliases=("ndcg_cut",), trec_eval="ndcg_cut_k",
          description="nDCG@k with the rating as gain and log2(i+1) discount; ideal from all judgments (Eq. 5)")
def ndcg(j, k):
    k = j.cut(k)
    gains = np.where(j.gains > 0, j.gains, 0.0)  # trec_eval counts positive gains only
    return _safe_div(dcg(gains, k), dcg(j.ideal, k))


@register("RR", aliases=("mrr", "recip_rank", "reciprocalrank"), trec_eval="recip_rank",
          description="Reciprocal rank of the first relevant item within the top k (Eq. 6)")
def reciprocal_rank(j, k):
    k = j.cut(k)
    rel = j.rel[:, :k]
    first = rel.argmax(axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1), 0.0)


@register("ERR", params={"max_rating": 0.0},
          description="Expected reciprocal rank (Chapelle et al. 2009) with gain (2^r - 1) / 2^r_max (Eq. 7-8)")
def expected_reciprocal_rank(j, k, max_rating=0.0):
    """max_rating = 0 means the qrels' r_max (the maximum rating of the dataset)."""
    k = j.cut(k)
    rmax = max_rating or j.max_rating
    g = (np.exp2(j.gains[:, :k]) - 1.0) / np.exp2(rmax)
    not_stopped = np.cumprod(1.0 - g, axis=1)
    reach = np.concatenate([np.ones((len(j), 1)), not_stopped[:, :-1]], axis=1)
    return (reach * g / np.arange(1, k + 1)).sum(axis=1)


@register("bpref", trec_eval="bpref",
          description="Bpref (Buckley & Voorhees 2004) over the top k, trec_eval's formulation (Eq. 9)")
def bpref(j, k):
    k = j.cut(k)
    nonrel_before = j.cum_nonrel[:, :k] - j.nonrel[:, :k]
    r = j.n_rel[:, None]
    denom = np.minimum(j.n_nonrel, j.n_rel)[:, None]
    penalty = _safe_div(np.minimum(nonrel_before, r), np.broadcast_to(denom, nonrel_before.shape))
    contrib = np.where(j.rel[:, :k], 1.0 - penalty, 0.0)
    return _safe_div(contrib.sum(axis=1), j.n_rel)


@register("infAP", trec_eval="infAP",
          description="Inferred AP (Yilmaz & Aslam 2008) over the top k, trec_eval's formulation (Eq. 10-11)")
def inferred_ap(j, k):
    """Unjudged (non-pool) items above a relevant one count as non-relevant through the factor
    judged_above / (i-1), as in trec_eval's m_infAP.c; Eq. 11 of the paper omits that factor,
    which only matters when unjudged items are ranked above a relevant one."""
    k = j.cut(k)
    rel_before = (j.cum_rel[:, :k] - j.rel[:, :k]).astype(np.float64)
    judged_before = rel_before + j.cum_nonrel[:, :k] - j.nonrel[:, :k]
    i = np.arange(k, dtype=np.float64)[None, :]  # 0-based rank j of trec_eval
    term = 1.0 / (i + 1) + (judged_before / (i + 1)) * (
        (rel_before + INFAP_EPSILON) / (judged_before + 2 * INFAP_EPSILON))
    term[:, 0] = 1.0
    return _safe_div(np.where(j.rel[:, :k], term, 0.0).sum(axis=1), j.n_rel)
