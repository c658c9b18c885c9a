"""Ranking metrics (Valcarce et al., IRJ 2020, Sec. 3.2, Eq. 1-11), vectorised over users.

Each kernel takes a :class:`~recmetrics.judged.Judged` and a cut-off ``k`` (None = full list)
and returns one value per user. P, Recall, AP, nDCG, RR, bpref and infAP equal trec_eval's
``P``, ``recall``, ``map_cut``, ``ndcg_cut``, ``recip_rank``, ``bpref`` and ``infAP`` per user
(the last three over the list truncated at ``k``), and Rprec, success_k, num_ret, num_rel and
num_rel_ret equal the trec_eval measures of those names (m_Rprec.c, m_success.c, m_num_*.c).

A kernel's per-hit term does not depend on the cut-off (the precision at a hit, its discounted gain,
its ERR contribution, ...): it is computed once per :class:`~recmetrics.judged.Judged` and memoised
there, so every further cut-off of the same metric costs one sum over the hits above it. The sums
are taken over the same hits in the same order, so the values are those of scoring each cut-off
alone, to the last bit (tested).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .gains import _at, _ideal, _ideal_dcg_prefix, _memo, gain_of, hit_pos, parse_gains, safe_div, seg_exclusive  # noqa: F401  (safe_div re-exported)
from .registry import register

INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


def _count_rel(j, k: int) -> np.ndarray:
    """Relevant items in the top k (|L^k ∩ R|) per user."""
    return j.n_rel_top(k)


@register("P", cutoff="required", aliases=("precision", "prec"), trec_eval="P_k", perfect=None,
          description="Precision@k: relevant items in the top k divided by k (Eq. 1)")
def precision(j, k):
    k = j.cut(k)
    return _count_rel(j, k) / k


@register("Recall", cutoff="required", aliases=("r", "rec"), trec_eval="recall_k",
          description="Recall@k: relevant items in the top k over all of the user's relevant items (Eq. 2)")
def recall(j, k):
    k = j.cut(k)
    return safe_div(_count_rel(j, k), j.n_rel)


@register("F1", cutoff="required", aliases=("f", "f-measure", "fmeasure"), perfect=None,
          description="F1@k: harmonic mean of P@k and Recall@k, 0 when both are 0 (Eq. 3)")
def f1(j, k):
    p, r = precision(j, k), recall(j, k)
    return safe_div(2 * p * r, p + r)


@register("AP", aliases=("map", "averageprecision"), trec_eval="map_cut_k",
          description="Average precision@k: mean of P@i at each relevant rank i <= k, over |R_u| (Eq. 4)")
def average_precision(j, k):
    k = j.cut(k)
    prec = _memo(j, "ap", lambda: (j.rel_before + 1.0) / (j.hits.cols + 1.0))
    return safe_div(j.top_sums("ap", prec, j.hit_rel, k), j.n_rel)


def dcg(gains: np.ndarray, k: int | None = None) -> np.ndarray:
    """DCG of dense gain rows (log2(i+1) discount), truncated at ``k``."""
    g = gains[:, :k] if k is not None else gains
    return (g / np.log2(np.arange(2, g.shape[1] + 2))).sum(axis=1)


NDCG_GAINS = ("grade", "relevant")
DCG_FORMS = ("log2", "exp-log2")  # ir_measures' names: gain g or 2^g - 1, discount log2(i + 1)


def _dcg_setup(name, gain, dcg, gains):
    if gain not in NDCG_GAINS:
        raise InputError(f"{name}: gain must be one of {NDCG_GAINS}, got {gain!r}")
    if dcg not in DCG_FORMS:
        raise InputError(f"{name}: dcg must be one of {DCG_FORMS} (gain g or 2^g - 1), got {dcg!r}")
    if gains and (gain, dcg) != ("grade", "log2"):
        raise InputError(f"{name}: gains (a grade -> gain map) replaces gain= and dcg=; give one or the other")


def _dcg_per_user(j, k, gain, dcg) -> np.ndarray:
    kk = j.cut(k)
    h = j.hits

    def terms():
        relevant_only = gain == "relevant"
        gained = (h.vals >= j.threshold) if relevant_only else (h.vals > 0)   # trec_eval: positive gains
        g = h.vals if dcg == "log2" else np.exp2(np.maximum(h.vals, 0.0)) - 1.0
        return gained, g / np.log2(h.cols + 2.0)

    gained, discounted = _memo(j, ("dcg", gain, dcg), terms)
    return j.top_sums(("dcg", gain, dcg), discounted, gained, kk).copy()


def _dcg_mapped(j, k, gains, name):
    """DCG and ideal DCG with trec_eval's ``level=gain`` map (``-m ndcg.1=3.5,2=9``)."""
    gm = parse_gains(gains, name)
    kk = j.cut(k)
    h = j.hits
    g = gain_of(h.vals, gm)
    got = j.per_user(g / np.log2(h.cols + 2.0), (g != 0) & (h.cols < kk))
    _, _, n_pos, start = _ideal(j, gm)
    # the ideal ranks every judgment of positive gain (trec_eval's m_ndcg.c), cut only by a cut-off,
    # never by the list's or the run's depth
    ideal = _at(_ideal_dcg_prefix(j, gm), start, n_pos if k is None else np.minimum(n_pos, kk))
    return got, ideal


@register("nDCG", aliases=("ndcg_cut",), check=lambda params: parse_gains(params["gains"], "nDCG"), trec_eval="ndcg_cut_k", params={"gain": "grade", "dcg": "log2", "gains": ""},
          description="nDCG@k with the rating as gain and log2(i+1) discount; ideal from all judgments (Eq. 5); "
                      "gain=relevant: only grades >= threshold are gain; dcg='exp-log2': gain 2^r - 1")
def ndcg(j, k, gain="grade", dcg="log2", gains=""):
    """Without a cut-off the ideal ranks every judgment (trec_eval's ``ndcg``).

    ``gain="grade"`` (default, trec_eval's ``ndcg``/``ndcg_cut``): every positive grade is gain,
    relevant or not — a run ranking grades 2 then 5 scores 0.823 at k = 2. ``gain="relevant"``:
    only grades at or above the relevance threshold are gain, in the run and in the ideal ranking
    (the same run scores 0.631). ``dcg="exp-log2"`` (ir_measures' name; ranx's ``ndcg_burges``,
    Burges et al. 2005): the gain is 2^r - 1 instead of r. ``gains="1=3.5;2=9"``: trec_eval's
    ``-m ndcg.1=3.5,2=9`` (grades not named keep their grade as gain).

    >>> # nDCG(dcg='exp-log2')@2 of grades [2, 5] with judgments {5, 2}: (3 + 31/log2 3) / (31 + 3/log2 3)
    """
    _dcg_setup("nDCG", gain, dcg, gains)
    if gains:
        return safe_div(*_dcg_mapped(j, k, gains, "nDCG"))
    return safe_div(_dcg_per_user(j, k, gain, dcg), j.ideal_dcg(k, gain == "relevant", dcg == "exp-log2"))


@register("DCG", check=lambda params: parse_gains(params["gains"], "DCG"), bounds=(0.0, np.inf), perfect=None, trec_eval="dcg", params={"gain": "grade", "dcg": "log2", "gains": ""},
          description="DCG@k (unnormalised): sum of gain / log2(i+1) over the top k (Järvelin & Kekäläinen 2002); "
                      "dcg='exp-log2': gain 2^r - 1")
def discounted_cumulative_gain(j, k, gain="grade", dcg="log2", gains=""):
    """The numerator of :func:`ndcg` with the same parameters (ranx ``dcg`` / ``dcg_burges``,
    trec_eval ``dcg``)."""
    _dcg_setup("DCG", gain, dcg, gains)
    if gains:
        return _dcg_mapped(j, k, gains, "DCG")[0]
    return _dcg_per_user(j, k, gain, dcg)


@register("RR", aliases=("mrr", "recip_rank", "reciprocalrank"), trec_eval="recip_rank",
          description="Reciprocal rank of the first relevant item within the top k (Eq. 6)")
def reciprocal_rank(j, k):
    k = j.cut(k)
    first, recip = _memo(j, "rr", lambda: (j.hit_rel & (j.rel_before == 0), 1.0 / (j.hits.cols + 1.0)))
    return j.top_sums("rr", recip, first, k).copy()  # the first relevant hit of each user, if in the top k


@register("ERR", params={"max_rating": 0.0}, perfect=None,
          description="Expected reciprocal rank (Chapelle et al. 2009) with gain (2^r - 1) / 2^r_max (Eq. 7-8)")
def expected_reciprocal_rank(j, k, max_rating=0.0):
    """max_rating = 0 means the qrels' r_max (the maximum rating of the dataset, as 000's Eq. 8
    states). Unjudged items have gain 0, so only judged positions change the cascade.

    The papers' tool differs here: rec_eval's ``err`` (``m_err.c``, github.com/dvalcarce/rec_eval)
    divides 2^r − 1 by 2^(r_max) with r_max the *user's* highest judged grade
    (``num_rel_levels − 1`` of that user's judgments), so for a user whose best test rating is
    below the dataset's maximum every gain is larger (×2 per missing grade) than Eq. 8's; equal
    for the users who rated some test item with the maximum. ``max_rating`` cannot give that
    per-user reading."""
    k = j.cut(k)
    h = j.hits
    rmax = max_rating or j.max_rating
    top = float(h.vals.max()) if len(h.vals) else 0.0
    if max_rating and top > max_rating:
        raise InputError(f"ERR: max_rating={max_rating:g} is below the largest grade in the judged lists ({top:g}); "
                         "the gain (2^r - 1)/2^r_max would exceed 1 (the cascade's probabilities) — give "
                         f"max_rating >= {top:g} or leave it out (the qrels' maximum rating)")

    def terms():
        # negative labels (trec_eval's "pooled, unjudged") carry no gain
        g = (np.exp2(np.maximum(h.vals, 0.0)) - 1.0) / np.exp2(rmax)
        # prod_{p<i} (1 - g_p), summed within the user's own hits (its value depends on its list only)
        reach = np.exp(seg_exclusive(np.log1p(-g), hit_pos(j)))
        return reach * g / (h.cols + 1.0)

    return j.top_sums(("err", float(rmax)), _memo(j, ("err", float(rmax)), terms), None, k).copy()


@register("bpref", trec_eval="bpref",
          description="Bpref (Buckley & Voorhees 2004) over the top k, trec_eval's formulation (Eq. 9)")
def bpref(j, k):
    """Eq. 9 of Valcarce et al. (IRJ 2020; Eq. 6 of RecSys 2018), trec_eval's ``bpref``:

    bpref_u@n = 1/|R_u| · Σ_{k ≤ n, L[k] ∈ R_u} (1 − min(|L^k ∩ N_u|, |R_u|) / min(|N_u|, |R_u|))

    Only *judged* non-relevant items (N_u) above a relevant one count; unrated items are ignored,
    whether they are read as outside the pool (trec_eval's default) or as pooled-but-unjudged (the
    papers' reading, see :func:`inferred_ap`), so bpref has no ``unjudged`` parameter: both readings
    give the same value (tested against trec_eval with every unrated item labelled −1).

    >>> import recmetrics as rm, pandas as pd
    >>> q = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b", "c"], "rating": [5, 1, 4]}))
    >>> run = rm.Run.from_lists({1: ["x", "b", "a", "c"]})
    >>> float(rm.evaluate(run, q, ["bpref"]).aggregate["bpref"])  # a: 1 − 1/1, c: 1 − 1/1
    0.0
    """
    k = j.cut(k)

    def terms():
        rows = j.hits.rows
        r = j.n_rel[rows]
        denom = np.minimum(j.n_nonrel, j.n_rel)[rows]
        return 1.0 - safe_div(np.minimum(j.nonrel_before, r), denom)

    return safe_div(j.top_sums("bpref", _memo(j, "bpref", terms), j.hit_rel, k), j.n_rel)


#: readings of an unrated item for infAP: ``nonrelevant`` (trec_eval: outside the pool, so it
#: counts as non-relevant through the judged-fraction factor) or ``pooled`` (the papers' reading:
#: pooled but unjudged, so it is ignored — Eq. 11 of Valcarce et al. as printed)
INFAP_UNJUDGED = ("nonrelevant", "pooled")


@register("infAP", trec_eval="infAP", params={"unjudged": "nonrelevant"},
          description="Inferred AP (Yilmaz & Aslam 2008) over the top k (Eq. 10-11); unjudged=nonrelevant: "
                      "trec_eval's m_infAP.c (the default); unjudged=pooled: every unrated item pooled but "
                      "unjudged, Eq. 11 as printed")
def inferred_ap(j, k, unjudged="nonrelevant"):
    """Inferred average precision, Eq. 10-11 of Valcarce et al. (IRJ 2020; Eq. 7-8 of RecSys 2018):

    infAP_u@n = 1/|R_u| · Σ_{k ≤ n, L[k] ∈ R_u} E[P@k],
    E[P@k] = 1/k + (k−1)/k · f · (|L^{k−1} ∩ R_u| + ε) / (|L^{k−1} ∩ R_u| + |L^{k−1} ∩ N_u| + 2ε),

    ε = 1e-5, E[P@1] = 1. The open choice is how an item the user did not rate (no test rating) is
    read, which sets the pooled fraction ``f`` of the k−1 items above:

    * ``unjudged="nonrelevant"`` (default, trec_eval's ``m_infAP.c``; what ``rm.evaluate`` and the
      command line compute): an unrated item is outside the pool, i.e. non-relevant, so
      ``f = pooled above / (k−1)`` with "pooled" = judged items plus items labelled −1 in the qrels
      (trec_eval's "pooled but unjudged"). Without −1 labels infAP then *equals* AP.
    * ``unjudged="pooled"``: every unrated item is pooled but unjudged ("Bpref and InfAP ignore
      unjudged documents", 000 §6.3.1), so ``f = 1``: Eq. 11 exactly as the papers print it, which
      omits trec_eval's factor. Equal to trec_eval's infAP on qrels where every unrated item of the
      list is labelled −1 (tested). A relevant item with nothing judged above it scores
      1/k + (k−1)/k · ½ (the ε/2ε of Eq. 11). This is the measure the papers' tool computes:
      rec_eval's ``infAP2`` (``m_infap2.c``, github.com/dvalcarce/rec_eval; its geometric
      ``gm_infAP2`` floors at 1e-5) counts an item outside the pool ("document not in pool ->
      unjudged") with the pooled-but-unjudged ones, so its pooled fraction is 1.

    The two readings agree when nothing unrated is ranked above a relevant item.

    >>> import recmetrics as rm, pandas as pd
    >>> q = rm.Qrels(pd.DataFrame({"user": 1, "item": ["a", "b"], "rating": [5, 1]}))
    >>> run = rm.Run.from_lists({1: ["x", "a"]})
    >>> ev = rm.evaluate(run, q, ["AP", "infAP", "infAP(unjudged=pooled)"])
    >>> [round(float(v), 4) for v in ev.aggregate]  # AP = trec_eval's infAP = 1/2; Eq. 11: 1/2 + 1/2 · 1/2
    [0.5, 0.5, 0.75]
    """
    if unjudged not in INFAP_UNJUDGED:
        raise InputError(f"infAP: unjudged must be one of {INFAP_UNJUDGED}, got {unjudged!r}")
    k = j.cut(k)

    def terms():
        i = j.hits.cols.astype(np.float64)  # 0-based rank, trec_eval's j (= k − 1 of Eq. 11)
        judged_before = j.rel_before + j.nonrel_before
        if unjudged == "pooled":
            pooled_before = i                              # everything above is in the pool: f = 1
        else:
            pooled_before = judged_before + j.unjudged_before  # negative labels: pooled but unjudged
        with np.errstate(divide="ignore", invalid="ignore"):  # i = 0 is set to 1 below
            # m_infap.c's operations in its order, so the values agree to the last bit
            term = 1.0 / (i + 1.0) + (i / (i + 1.0)) * (pooled_before / i) * (
                (j.rel_before + INFAP_EPSILON) / (judged_before + 2 * INFAP_EPSILON))
        return np.where(i == 0, 1.0, term)

    term = _memo(j, ("infap", unjudged), terms)
    return safe_div(j.top_sums(("infap", unjudged), term, j.hit_rel, k), j.n_rel)


# ---------------------------------------------------------------- trec_eval's counting measures
@register("Rprec", cutoff="none", aliases=("r-precision", "rprecision"), trec_eval="Rprec",
          description="R-Precision: relevant items in the top R over R = the user's relevant items (m_Rprec.c)")
def r_precision(j, k):
    r = j.n_rel[j.hits.rows]
    return safe_div(j.per_user(1.0, j.hit_rel & (j.hits.cols < r)), j.n_rel)


@register("success", cutoff="required", aliases=("hitrate", "hit", "success_k"), trec_eval="success_k",
          description="Success@k (HitRate@k): 1 if a relevant item is in the top k, else 0 (m_success.c)")
def success(j, k):
    return (_count_rel(j, j.cut(k)) > 0).astype(np.float64)


@register("num_ret", cutoff="optional", aliases=("numret",), bounds=(0.0, np.inf), perfect=None, trec_eval="num_ret", better=None,
          description="Number of items in the user's list (top k); summed, not averaged, by trec_eval")
def num_ret(j, k):
    return np.minimum(j.lengths, j.cut(k)).astype(np.float64)


@register("num_rel", cutoff="none", aliases=("numrel",), bounds=(0.0, np.inf), perfect=None, trec_eval="num_rel", better=None,
          description="Number of relevant judgments of the user; summed, not averaged, by trec_eval")
def num_rel(j, k):
    return j.n_rel.astype(np.float64)


@register("num_rel_ret", cutoff="optional", aliases=("hits", "numrelret"), bounds=(0.0, np.inf), perfect=None, trec_eval="num_rel_ret",
          description="Number of relevant items in the list (top k); summed, not averaged, by trec_eval")
def num_rel_ret(j, k):
    return _count_rel(j, j.cut(k))
