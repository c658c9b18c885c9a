"""Claims of paper 004 (Bellogín's thesis ch. 4) tested by the chapter 08_popularity_bias.

``results`` (given to :func:`recmetrics.meta.findings.assess`) holds the chapter's tables:
``random`` (:func:`~recmetrics.protocols.chapter.random_vs_analytic`), ``designs``
(:func:`~recmetrics.protocols.chapter.compare_designs`), ``sweep``
(:func:`~recmetrics.protocols.chapter.alpha_sweep`), ``curves``
(:func:`~recmetrics.protocols.chapter.sparsity_curves`), ``systems`` (names: random, pop, plsa[, knn]) and
``positive`` (:func:`~recmetrics.protocols.chapter.fig44_side_panels`' ``positive`` table).
"""
from __future__ import annotations

from ..meta.findings import Claim, Evidence, agrees_if

PAPER = "004 Bellogín (2012) thesis ch. 4"


def _random_matches(results, kind: str) -> Evidence:
    t = results["random"]
    t = t[t["design"].str.contains(kind)]
    m = t.groupby("design").agg(measured=("measured", "mean"), expected=("expected", "first"))
    rel = (m["measured"] / m["expected"] - 1).abs()
    worst = float(rel.max())
    return agrees_if(worst <= 0.25, worst, "; ".join(f"{d}: measured {r.measured:.4f} vs expected {r.expected:.4f}"
                                                     for d, r in m.iterrows()) + f" (largest relative gap {worst:.1%})")


def _pop_vs_random(results, design: str, metric: str = "P@10"):
    t = results["designs"]
    t = t[t["design"].str.startswith(design) & (t["metric"] == metric)].set_index("system")["value"]
    if t.empty:
        raise KeyError(f"designs[{design}]")
    s = results["systems"]
    return float(t[s["pop"]]), float(t[s["random"]]), t


def _bias(results) -> Evidence:
    pop, rnd, _ = _pop_vs_random(results, "TI-1R-NN")
    pop_ar, rnd_ar, _ = _pop_vs_random(results, "TI-AR-AN")
    ratio = pop / rnd if rnd > 0 else float("inf")
    return agrees_if(pop > 2 * rnd and pop_ar > 2 * rnd_ar, ratio,
                     f"P@10 Pop {pop:.4f} vs Random {rnd:.4f} in 1R; {pop_ar:.4f} vs {rnd_ar:.4f} in AR")


def _neutralised(results) -> Evidence:
    ratios = {}
    for d in ("TI-1R-NN", "P1R", "U1R"):
        pop, rnd, _ = _pop_vs_random(results, d)
        ratios[d] = pop / rnd if rnd > 0 else float("inf")
    base = ratios["TI-1R-NN"]
    ok = ratios["P1R"] < base and ratios["U1R"] < base
    return agrees_if(ok, min(ratios["P1R"], ratios["U1R"]),
                     "Pop/Random P@10: " + ", ".join(f"{d} {r:.2f}" for d, r in ratios.items()))


def _plsa_best(results) -> Evidence:
    s = results["systems"]
    out, ok = [], True
    for d in ("P1R", "U1R"):
        _, _, t = _pop_vs_random(results, d)
        best = t.idxmax()
        ok &= best == s["plsa"] or t[s["plsa"]] >= t.drop(s["plsa"]).max()
        out.append(f"{d}: best {best} ({t.max():.4f}), pLSA {t[s['plsa']]:.4f}")
    return agrees_if(bool(ok), None, "; ".join(out))


def _alpha(results) -> Evidence:
    t = results["sweep"]
    pop = t[t["system"] == results["systems"]["pop"]].sort_values("alpha")
    rises = bool((pop["value"].diff().dropna() >= 0).all())
    first = pop.iloc[0]
    near = first["value"] <= 1.1 * first["random_expected"]
    return agrees_if(rises and near, float(first["value"] / first["random_expected"]),
                     f"Pop P@10 by α: {', '.join(f'{a:g}: {v:.4f}' for a, v in zip(pop['alpha'], pop['value']))}; "
                     f"random expectation at α={first['alpha']:g}: {first['random_expected']:.4f}")


def _personalised_near_random(results) -> Evidence:
    t = results["sweep"]
    knn = results["systems"].get("knn")
    if knn is None or knn not in set(t["system"]):
        raise KeyError("sweep[knn]")
    k = t[t["system"] == knn].sort_values("alpha")
    ratio = k["value"] / k["random_expected"]
    worst = float(ratio.max())
    return agrees_if(worst <= 2.0, worst, f"{knn} P@10 / random expectation by α: "
                     + ", ".join(f"{a:g}: {r:.2f}" for a, r in zip(k["alpha"], ratio)) + " (agrees if all <= 2)")


def _bounds(results) -> Evidence:
    c = results["curves"]
    w = c.pivot_table(index=["curve", "x", "system"], columns="series", values="value")
    ok = ((w["lower"] <= w["1R"] + 1e-12) & (w["1R"] <= w["upper"] + 1e-12))
    return agrees_if(bool(ok.all()), float(ok.mean()), f"Eq. 4.2 holds at {int(ok.sum())} of {len(ok)} points")


def _sparsity(results) -> Evidence:
    c = results["curves"]
    c = c[c["curve"] == "removed"]
    change = {}
    for series in ("AR", "1R"):
        t = c[c["series"] == series].pivot_table(index="x", columns="system", values="value")
        change[series] = float((t.iloc[-1] / t.iloc[0]).mean())
    ok = change["AR"] < 0.8 and abs(change["1R"] - 1) < abs(change["AR"] - 1)
    return agrees_if(ok, change["AR"], f"mean ratio of P@10 after/before removing test ratings: "
                                      f"AR {change['AR']:.2f}, 1R {change['1R']:.2f}")


#: §4.5.2's TREC statistics (30 tracks aggregated): share of documents relevant to one query, and the
#: share of the queries the most judged document is relevant to
TREC_SINGLE_SHARE, TREC_TOP_SHARE = 0.872, 0.036


def _long_tail(results) -> Evidence:
    t = results["positive"]
    if len(t) == 0:
        raise KeyError("positive")
    ok = bool(((t["top_share_users"] > TREC_TOP_SHARE) & (t["single_share"] < TREC_SINGLE_SHARE)).all())
    return agrees_if(ok, float(t["top_share_users"].min()), "; ".join(
        f"{r.data}: most liked item liked by {r.top_share_users:.1%} of users, {r.single_share:.1%} of the "
        f"{r.items:,} liked items liked once, top {r.head:.0%} hold {r.head_share:.1%} of the positive ratings"
        for r in t.itertuples()) + f" (TREC: {TREC_TOP_SHARE:.1%} and {TREC_SINGLE_SHARE:.1%}; agrees if every "
        "data set is above the first and below the second)")


CLAIMS = [
    Claim("random-ar", PAPER, "Random precision in AR is σ·δ (Eq. 4.4).",
          "Eq. 4.4, derived analytically; Fig. 4.3 shows it tracking test sparsity.",
          lambda r: _random_matches(r, "AR")),
    Claim("random-1r", PAPER, "Random precision in 1R is 1/t (Eq. 4.5).", "Eq. 4.5, derived analytically.",
          lambda r: _random_matches(r, "1R")),
    Claim("eq42-bounds", PAPER, "1R precision lies between the AR-based bounds of Eq. 4.2.",
          "Lemma with proof; Fig. 4.2 (pLSA, kNN on MovieLens 1M).", _bounds),
    Claim("sparsity-ar", PAPER, "AR precision falls with test sparsity while 1R is much less sensitive to it.",
          "Fig. 4.3 (precision vs removed test ratings).", _sparsity),
    Claim("popularity-bias", PAPER, "Popularity scores far above random in both AR and 1R.",
          "Fig. 4.1 (MovieLens 1M: Pop among the best systems).", _bias),
    Claim("alpha", PAPER, "Popularity's precision rises with the skew α and is about random (slightly below) at α = 0.",
          "Fig. 4.4: 0.0077 vs random 0.0100 at α = 0.", _alpha),
    Claim("knn-sim", PAPER, "On simulated data without preference structure kNN stays around random precision.",
          "Fig. 4.4 (centre): kNN and MF stay essentially around random.", _personalised_near_random),
    Claim("neutralised", PAPER, "P1R and U1R bring Popularity closer to Random than 1R does.",
          "Fig. 4.7 (MovieLens 1M).", _neutralised),
    Claim("plsa-best", PAPER, "pLSA stays the best system under P1R and U1R.", "Fig. 4.7 (MovieLens 1M).", _plsa_best),
    Claim("positive-long-tail", PAPER, "Positive ratings in recommendation data are long-tailed over items, unlike "
          "TREC relevance judgments, which are close to uniform.",
          "§4.5.2, Fig. 4.4 (right): the most liked item is liked by 20.1% (Netflix), 32.7% (MovieLens), 73% "
          "(Last.fm) of users; in TREC 87.2% of documents are relevant to one query, the most judged to 3.6% of "
          "the queries.", _long_tail),
]
