"""trec_eval's standard measures beyond the ranking set, vectorised over users.

Each kernel equals, per user, the trec_eval 10.0 measure named in its description (the
``m_<name>.c`` file of trec_eval's source), including its treatment of short lists, users without
relevant items and unjudged items; the command line's ``-m all_trec`` prints them under trec_eval's
names (``recmetrics.trec_measures``).

* interpolated precision at recall levels and their average (``iprec_at_recall``, ``11pt_avg``);
* precision at multiples of R (``Rprec_mult``), relative precision (``relative_P``);
* the set measures over the whole list (``set_P``, ``set_recall``, ``set_relative_P``, ``set_map``,
  ``set_F``) and the contingency-table ``utility``;
* the gain measures ``G``, ``binG``, ``ndcg_rel`` and ``Rndcg`` (trec_eval's "experimental"
  measures), whose gain is the grade unless a ``gains`` map (``'1=3.5;2=9'``) says otherwise;
* the counts ``num_nonrel_judged_ret`` and the unjudged share ``unj``.

Sums are added in rank order from zero for each user, the order trec_eval adds them, so the
values agree with its output to the last bit or nearly (the ``log2`` of the C library and of
numpy may differ in the last place).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .gains import _at, _ideal, _ideal_dcg_prefix, _memo, gain_of, hit_pos, parse_gains, safe_div, seg_cumsum  # noqa: F401
from .registry import register

# trec_eval's default cut-offs of iprec_at_recall and 11pt_avg (m_iprec_at_recall.c, m_11pt_avg.c)
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


# ---------------------------------------------------------------- shared helpers (in .gains)
def _max_per_user(j, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = np.zeros(len(j))
    idx = np.flatnonzero(mask)
    np.maximum.at(out, j.hits.rows[idx], values[idx])
    return out


def _gains_param(gains: str, owner: str) -> dict[int, float]:
    return parse_gains(gains, owner) if gains else {}


# ---------------------------------------------------------------- interpolated precision
def _iprec(j, recall: float) -> np.ndarray:
    return _memo(j, ("iprec", recall), lambda: _iprec_values(j, recall))  # shared by IPrec and IPrec_avg


def _iprec_values(j, recall: float) -> np.ndarray:
    rel = j.hit_rel
    nth = j.rel_before + 1.0                  # the hit is the nth relevant item of its list
    prec = nth / (j.hits.cols + 1.0)
    x = recall * j.n_rel.astype(np.float64)   # lround(recall * R): half away from zero
    cut = np.floor(x)
    cut = cut + (x - cut >= 0.5)
    need = np.maximum(cut, 1.0)[j.hits.rows]  # max precision from the cut-th relevant item on
    return _max_per_user(j, prec, rel & (nth >= need))


def _check_real(owner: str, name: str, value, low: float, high: float = math.inf, low_open: bool = False) -> None:
    """A parameter that must be a real number in [low, high] (``low_open``: (low, high]), checked
    when the spec is parsed, before any file is read."""
    v = float(value)
    if not math.isfinite(v) or v < low or v > high or (low_open and v == low):
        rng = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise InputError(f"{owner}: {name} must be a finite number in {rng}, got {name}={value!r}")


def _check_points(params) -> None:
    for level in parse_points(params["points"], "IPrec_avg"):
        _check_real("IPrec_avg", "points", level, 0.0, 1.0)


def _check_gains(owner: str):
    return lambda params: parse_gains(params["gains"], owner)


def _check_utility(params) -> None:
    for name in ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed"):
        _check_real("utility", name, params[name], -math.inf)
    _check_real("utility", "n_docs", params["n_docs"], 0.0)


@register("IPrec", cutoff="none", check=lambda params: _check_real("IPrec", "recall", params["recall"], 0.0, 1.0), params={"recall": 0.0}, trec_eval="iprec_at_recall_x", aliases=("iprec_at_recall",),
          description="Interpolated precision at a recall level: the best precision at or after the "
                      "round(recall*R)-th relevant item (m_iprec_at_recall.c)")
def interpolated_precision(j, k, recall=0.0):
    """IPrec(recall=x) = max_{i >= c} i / rank_i over the relevant items retrieved, c = round(x R)
    (at least 1); 0 when fewer than c relevant items are retrieved. trec_eval 10 rounds x R half
    away from zero (lround), where versions 9 and earlier added 0.9 and truncated.

    >>> # relevant at ranks 1 and 4 of 3 relevant: IPrec(recall=0.5) = max(1/1, 2/4) = 1
    """
    if not 0.0 <= recall <= 1.0:
        raise InputError(f"IPrec: recall must be in [0, 1], got {recall:g}")
    return _iprec(j, recall)


def parse_points(points: str, owner: str) -> tuple[float, ...]:
    if not points:
        return RECALL_POINTS
    try:
        out = tuple(sorted(float(p) for p in str(points).split(";") if p.strip()))
    except ValueError:
        raise InputError(f"{owner}: points must be recall levels separated by ';', e.g. '0.2;0.5;0.8', "
                         f"got {points!r}") from None
    if not out:
        raise InputError(f"{owner}: at least one recall level is needed, got {points!r}")
    return out


@register("IPrec_avg", cutoff="none", check=_check_points, params={"points": ""}, trec_eval="11pt_avg",
          description="Interpolated precision averaged over recall levels (default the 11 points 0, 0.1, ..., 1; "
                      "m_11pt_avg.c)")
def interpolated_precision_average(j, k, points=""):
    """Mean of IPrec over ``points`` ('0.2;0.5;0.8'; empty: the 11 standard levels), added from the
    highest level down as trec_eval adds them."""
    levels = parse_points(points, "IPrec_avg")
    total = np.zeros(len(j))
    for level in reversed(levels):
        total = total + _iprec(j, level)
    return total / len(levels)


@register("Rprec_mult", cutoff="none", check=lambda params: _check_real("Rprec_mult", "mult", params["mult"], 0.0,
                                                                    low_open=True), params={"mult": 1.0}, trec_eval="Rprec_mult_x",
          description="Precision at a multiple of R: P@c with c = int(mult * R + 0.9) (m_Rprec_mult.c)")
def r_precision_multiple(j, k, mult=1.0):
    """P@c with c = ⌊mult·R + 0.9⌋ (trec_eval's rounding); a list shorter than c counts as padded with
    non-relevant items; 0 when c is 0 (no relevant item)."""
    if mult <= 0:
        raise InputError(f"Rprec_mult: mult must be positive, got {mult:g}")
    c = np.trunc(mult * j.n_rel.astype(np.float64) + 0.9)
    hits = j.per_user(1.0, j.hit_rel & (j.hits.cols < c[j.hits.rows]))
    return safe_div(hits, c)


@register("relative_P", cutoff="required", trec_eval="relative_P_k",
          description="Relative precision@k: relevant items in the top k over min(k, R) (m_rel_P.c)")
def relative_precision(j, k):
    """|L^k ∩ R| / min(k, |R|): precision up to R, recall after it; 0 without relevant items."""
    k = j.cut(k)
    return safe_div(j.n_rel_top(k), np.minimum(k, j.n_rel))


# ---------------------------------------------------------------- set measures (whole list)
def _set_counts(j, k):
    kk = j.cut(k)
    return np.minimum(j.lengths, kk).astype(np.float64), j.n_rel_top(kk), j.n_rel.astype(np.float64)


@register("set_P", aliases=("setp",), trec_eval="set_P", perfect=None,
          description="Set precision: relevant items retrieved over items retrieved (no padding; m_set_P.c)")
def set_precision(j, k):
    ret, rel_ret, _ = _set_counts(j, k)
    return safe_div(rel_ret, ret)


@register("set_recall", aliases=("setr",), trec_eval="set_recall",
          description="Set recall: relevant items retrieved over relevant items (m_set_recall.c)")
def set_recall(j, k):
    _, rel_ret, rel = _set_counts(j, k)
    return safe_div(rel_ret, rel)


@register("set_relative_P", aliases=("setrelp",), trec_eval="set_relative_P", perfect=None,
          description="Relative set precision: relevant retrieved over min(retrieved, R) (m_set_rel_P.c)")
def set_relative_precision(j, k):
    ret, rel_ret, rel = _set_counts(j, k)
    return safe_div(rel_ret, np.minimum(ret, rel))


@register("set_map", aliases=("setap",), trec_eval="set_map", perfect=None,
          description="Set AP: relevant retrieved squared over (retrieved x R) (m_set_map.c)")
def set_map(j, k):
    ret, rel_ret, rel = _set_counts(j, k)
    return safe_div(rel_ret * rel_ret, ret * rel)


@register("set_F", aliases=("setf",), check=lambda params: _check_real("set_F", "weight", params["weight"], 0.0), params={"weight": 1.0}, trec_eval="set_F", perfect=None,
          description="Set F: (x+1) P R / (x P + R) over the whole list, x = weight of recall (m_set_F.c)")
def set_f(j, k, weight=1.0):
    """trec_eval's x is β² of van Rijsbergen's F_β (x = 1: F1). 0 when nothing relevant is retrieved."""
    if weight < 0:
        raise InputError(f"set_F: weight must be >= 0, got {weight:g}")
    ret, rel_ret, rel = _set_counts(j, k)
    p, r = safe_div(rel_ret, ret), safe_div(rel_ret, rel)
    return np.where(rel_ret > 0, safe_div((weight + 1.0) * p * r, weight * p + r), 0.0)


@register("utility", cutoff="none", check=_check_utility, bounds=(-np.inf, np.inf), perfect=None, trec_eval="utility",
          params={"rel_ret": 1.0, "nonrel_ret": -1.0, "rel_missed": 0.0, "nonrel_missed": 0.0, "n_docs": 0},
          description="Set utility: a*relevant retrieved + b*non-relevant retrieved + c*relevant missed "
                      "+ d*non-relevant missed (m_utility.c)")
def utility(j, k, rel_ret=1.0, nonrel_ret=-1.0, rel_missed=0.0, nonrel_missed=0.0, n_docs=0):
    """The four coefficients in trec_eval's order (``-m utility.1,-1,0,0``); ``n_docs`` is its ``-N``
    (collection size), needed only when ``nonrel_missed`` is not 0."""
    ret = j.lengths.astype(np.float64)
    rr = j.n_rel_top(j.depth)
    rel = j.n_rel.astype(np.float64)
    return (rel_ret * rr + nonrel_ret * (ret - rr) + rel_missed * (rel - rr)
            + nonrel_missed * (n_docs + rr - ret - rel))


# ---------------------------------------------------------------- gain measures
@register("binG", cutoff="none", trec_eval="binG",
          description="Binary G: mean over relevant items of 1/log2(2 + non-relevant items above it) (m_binG.c)")
def binary_g(j, k):
    h = j.hits
    term = 1.0 / np.log2(2.0 + h.cols - j.rel_before)
    return safe_div(j.per_user(term, j.hit_rel), j.n_rel)


@register("G", cutoff="none", params={"gains": ""}, check=_check_gains("G"), trec_eval="G",
          description="Normalised gain G: each item's gain over log2(2 + ideal cost - gain so far) (m_G.c)")
def normalised_gain(j, k, gains=""):
    """G = Σ_i g_i / log2(2 + C_i - S_i) / Σ ideal gains, with S_i the run's gain and C_i the ideal
    gain (each position costing at least 1) through rank i. Gain = grade unless ``gains`` maps
    grades ('1=2;2=5', trec_eval's ``-m G.1=2,2=5``)."""
    gm = _gains_param(gains, "G")
    h = j.hits
    g = gain_of(h.vals, gm)
    got = seg_cumsum(g, hit_pos(j))
    ig, pos, n_pos, start = _ideal(j, gm)
    cost = seg_cumsum(np.maximum(ig, 1.0), pos)
    npr = n_pos[h.rows]
    m = np.minimum(h.cols + 1, npr)
    sum_cost = _at(cost, start[h.rows], m) + np.maximum(h.cols + 1 - npr, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = g / np.log2(2.0 + sum_cost - got)
    rows_ideal = np.repeat(np.arange(len(j)), n_pos)
    total_ideal = np.bincount(rows_ideal, weights=ig, minlength=len(j))
    return safe_div(j.per_user(term, g != 0), total_ideal)


def _dcg_parts(j, gm):
    h = j.hits
    g = gain_of(h.vals, gm)
    disc = np.where(g != 0, g / np.log2(h.cols + 2.0), 0.0)
    return g, disc, seg_cumsum(disc, hit_pos(j))


@register("nDCG_rel", cutoff="none", params={"gains": ""}, check=_check_gains("nDCG_rel"), trec_eval="ndcg_rel",
          description="nDCG averaged over the relevant items: nDCG at each one's rank, DCG/IDCG at the end "
                      "for those not retrieved (m_ndcg_rel.c)")
def ndcg_rel(j, k, gains=""):
    """Mean over the n items of positive gain of nDCG@rank(item) (the item retrieved) or DCG/IDCG of
    the whole list (the item missed); 0 when no gain is retrieved."""
    gm = _gains_param(gains, "nDCG_rel")
    h = j.hits
    g, disc, dcg = _dcg_parts(j, gm)
    ig, pos, n_pos, start = _ideal(j, gm)
    idcg = _ideal_dcg_prefix(j, gm)
    npr = n_pos[h.rows]
    pos_gain = g > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = dcg / _at(idcg, start[h.rows], np.minimum(h.cols + 1, npr))
        total = j.per_user(term, pos_gain)
        full = _at(idcg, start, n_pos)
        total = total + (n_pos - j.per_user(1.0, pos_gain)) * j.per_user(disc, g != 0) / full
        return np.where(total > 0, total / np.maximum(n_pos, 1), 0.0)


@register("Rndcg", cutoff="none", params={"gains": ""}, check=_check_gains("Rndcg"), trec_eval="Rndcg",
          description="nDCG averaged at the R levels: where the ideal gain drops, and at the list's end "
                      "(m_Rndcg.c)")
def r_ndcg(j, k, gains=""):
    """Mean of nDCG@b over the ranks b where the ideal ranking's gain changes (5 items of grade 3,
    3 of grade 2, 10 of grade 1: b = 5, 8, 18), plus DCG/IDCG of the whole list when the list goes
    on past b_max + 1; 0 for users without relevant items."""
    gm = _gains_param(gains, "Rndcg")
    h = j.hits
    g, disc, dcg = _dcg_parts(j, gm)
    ig, pos, n_pos, start = _ideal(j, gm)
    idcg = _ideal_dcg_prefix(j, gm)
    # ranks b (1-based count of ideal items before the change) where the ideal gain changes
    last = pos == np.repeat(n_pos, n_pos) - 1
    change = last.copy()
    change[:-1] |= ig[:-1] != ig[1:]
    b_idx = np.flatnonzero(change)
    b_row = np.repeat(np.arange(len(j)), n_pos)[b_idx]
    b = pos[b_idx] + 1
    # DCG of the run's top b: the cumulative DCG of the last hit above rank b
    width = j.depth + 1
    keys = h.rows * width + h.cols
    at = np.searchsorted(keys, b_row * width + np.minimum(b, j.depth)) - 1
    ok = (at >= 0) & (h.rows[np.maximum(at, 0)] == b_row) if len(keys) else np.zeros(len(b), bool)
    dcg_b = np.where(ok, dcg[np.maximum(at, 0)] if len(dcg) else 0.0, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.bincount(b_row, weights=dcg_b / idcg[b_idx], minlength=len(j))
        count = np.bincount(b_row, minlength=len(j)).astype(np.float64)
        full = _at(idcg, start, n_pos)
        extra = (j.lengths > n_pos + 1) & (full > 0)  # m_Rndcg.c adds the list's end only when ideal_dcg > 0
        total = total + np.where(extra, j.per_user(disc, g != 0) / full, 0.0)
    count = count + extra
    return np.where(j.n_rel > 0, safe_div(np.nan_to_num(total), count), 0.0)


# ---------------------------------------------------------------- counts and coverage
@register("num_nonrel_judged_ret", bounds=(0.0, np.inf), perfect=None, trec_eval="num_nonrel_judged_ret", better=None,
          description="Judged non-relevant items in the list (top k); summed, not averaged, by trec_eval")
def num_nonrel_judged_ret(j, k):
    return j.per_user(1.0, j.hit_nonrel & (j.hits.cols < j.cut(k)))


@register("unj", cutoff="required", aliases=("unjudged",), perfect=None, trec_eval="unj_k", better=None,
          description="Unjudged share of the top k: items without a judgment (or pooled but unjudged) "
                      "over k, a short list padded with judged items (m_unjudged.c)")
def unjudged(j, k):
    k = j.cut(k)
    judged = j.per_user(1.0, (j.hits.vals >= 0) & (j.hits.cols < k))
    return (np.minimum(j.lengths, k) - judged) / k


@register("Judged", perfect=None, better=None,
          description="Judged share of the top k: items with a judgment (any grade, pooled-unjudged included) over "
                      "min(k, list length) (ir_measures' Judged@k)")
def judged_share(j, k):
    """ir_measures' ``Judged@k``: a list shorter than k is measured over its own length; 0 for an
    empty list. Unlike ``unj``, a negative grade ("in the pool, unjudged") counts as judged, as
    ir_measures counts every qrels entry."""
    k = j.cut(k)
    return safe_div(j.per_user(1.0, j.hits.cols < k), np.minimum(j.lengths, k))
