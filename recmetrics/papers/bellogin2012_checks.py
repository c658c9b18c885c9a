"""The checks of paper 004's claims (Bellogín, thesis ch. 4; chapter ``08_popularity_bias``): they read
the chapter's results (:class:`~recmetrics.protocols.chapter.DesignRun`, sparsity curves, the α sweep,
the random-precision table) and decide the thesis' words. :mod:`recmetrics.papers.bellogin2012` holds the
set-up and the claims as data; this module holds how each is decided.

How each claim's words are decided (all through :mod:`recmetrics.meta.findings`' rule, with a
bootstrap-over-users standard error from :mod:`recmetrics.protocols.uncertainty`, and a one-sided
Wilcoxon test with Holm's correction from :mod:`recmetrics.meta.significance` where the thesis
itself tests significance):

* **lead** of a system in a design: L = (P − E[P_RND]) / (P_pLSA − E[P_RND]), its precision above the
  analytic random precision as a share of pLSA's (the system the thesis says stays best). It makes
  designs with different random levels comparable (Fig. 4.7 mixes 1/t = 0.01 with AR's ~0.001);
  the **popularity bias** a design leaves is Pop's lead.
* "**at / by the level of random**", "**around random**": nearer to random than to the system the
  sentence contrasts it with — L < 1/2 (:data:`NEAR`), i.e. the midpoint between random and the
  contrast (pLSA in Fig. 4.7; popularity in Fig. 4.4), decided with ``holds(L, "<", 0.5, se)``.
* "**closely followed by**" / "**close to the best**": second, and nearer to the best than to the
  third system (the gap below the best smaller than the gap above the third, beyond the noise).
* "**closely matches**": within half the contrast's lead on either side, 1/2 < L/L_Pop < 3/2.
* "**slightly below random**": below random beyond the noise, and nearer to random than to zero:
  1/2 < P/E[P_RND] < 1 (the thesis: 0.0077 vs 0.0100).
* "**X stays the best**": above every other system beyond 2 paired bootstrap standard errors of the
  difference (``order``) and significantly so by a one-sided Wilcoxon test over users, Holm-corrected
  over the rivals, p < :data:`ALPHA` (the thesis' test, §4.3.3).
* analytic identities (Eq. 4.4, 4.5: "random precision is ..."): the measurement within the noise
  of the expectation, and the noise band no wider than ±:data:`IDENTITY_TOLERANCE` of it (else
  ``inconclusive``: the test could not have seen a departure). A check of several such identities
  (designs, systems × sizes) ``disagrees`` only when Holm's step-down over their departures finds
  one (:func:`_identities`): each alone at 2 se, eight at once would read a true identity as
  ``disagrees`` in about a third of the builds.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..meta.findings import NOISE_SE, Comparison, Evidence, combine, compare, family, holds, not_testable, order
from ..protocols.chapter import RANDOM, THESIS_DESIGNS, design_spec

__all__ = ["ROLES", "NEAR", "ALPHA", "IDENTITY_TOLERANCE", "TREC_SINGLE_SHARE", "TREC_TOP_SHARE", "lead"]

#: the roles the checks look systems up by: the thesis' names, as the chapter names its systems
#: (``results["systems"]`` overrides it, e.g. with zoo specs)
ROLES = {"random": "Random", "pop": "Pop", "plsa": "pLSA", "knn": "kNN", "mf": "MF"}
#: "nearer to A than to B": the midpoint of a lead
NEAR = 0.5
#: significance level of the Wilcoxon tests (Holm-corrected over the rivals)
ALPHA = 0.05
#: an identity check agrees only when its noise band is within this share of the expectation
IDENTITY_TOLERANCE = 0.25


def _identities(items) -> tuple[list[str], str]:
    """Several analytic identities ``measured = expected`` checked as one family: ``items`` are
    ``(measured, expected, se)``. Per item ``disagrees`` when Holm's step-down over the departures
    (two-sided, in either direction) rejects it, ``agrees`` when it is within its noise and the band
    ``2 se`` is within ±:data:`IDENTITY_TOLERANCE` of the expectation, else ``inconclusive``; the
    claim ``disagrees`` when one item does, ``agrees`` when all do."""
    comps = []
    for m, e, se in items:
        c = compare(m, e, se, 0.0)
        comps.append(Comparison(label=str(len(comps)), gap=-abs(c.gap), se=c.se, df=c.df, tol=c.tol))
    departs = {int(c.label) for c in family(comps)[2]}
    verdicts = []
    for i, ((m, e, se), c) in enumerate(zip(items, comps)):
        band = NOISE_SE * se / e if e > 0 else np.inf
        verdicts.append("disagrees" if i in departs else
                        "agrees" if c.sign() == 0 and band <= IDENTITY_TOLERANCE else "inconclusive")
    return verdicts, combine(verdicts)


# ---------------------------------------------------------------------------------------------------
# reading the chapter's results

def _role(results, role: str) -> str:
    return dict(results.get("systems") or ROLES)[role]


def _design(run, name: str) -> str:
    spec = design_spec(name, run.info.get("T"))
    if spec not in set(run.table["design"]):
        raise KeyError(f"designs[{name}]")
    return spec


def _value(run, design: str, system: str, metric: str = "P@10") -> float:
    t = run.table
    row = t[(t["design"] == design) & (t["system"] == system) & (t["metric"] == metric)]
    if row.empty:
        raise KeyError(f"designs[{design}, {system}]")
    return float(row["value"].iloc[0])


def _rep(run, design: str, system: str, metric: str = "P@10") -> pd.Series:
    key = (design, system, metric)
    if key not in run.replicates.columns:
        raise KeyError(f"replicates[{design}, {system}]")
    return run.replicates[key]


def lead(run, design: str, system: str, reference: str, metric: str = "P@10") -> tuple[float, float]:
    """(L, se): ``system``'s precision above the analytic random precision as a share of
    ``reference``'s, L = (P_s − E[P_RND]) / (P_ref − E[P_RND]), in ``design`` (a spec of ``run.table``),
    with its bootstrap standard error (the ratio computed on every replicate)."""
    t = run.table
    row = t[(t["design"] == design) & (t["metric"] == metric)]
    if row.empty:
        raise KeyError(f"designs[{design}, {metric}]")
    rnd = float(row["random_expected"].iloc[0])
    x, ref = _value(run, design, system, metric), _value(run, design, reference, metric)
    r = _rep(run, design, RANDOM, metric)
    reps = (_rep(run, design, system, metric) - r) / (_rep(run, design, reference, metric) - r)
    return (x - rnd) / (ref - rnd), float(reps.std(ddof=1))


def _lead(run, name: str, results, system_role: str = "pop") -> tuple[float, float, str]:
    d = _design(run, name)
    value, se = lead(run, d, _role(results, system_role), _role(results, "plsa"))
    return value, se, d



def _readings(check_one: Callable[[str], tuple[str, float | None, str]], names=("P1R", "P1R-train")):
    """Run a check under both P1R readings; a verdict that flips with the reading is inconclusive."""
    parts = [check_one(n) for n in names]
    verdicts = {p[0] for p in parts}
    verdict = parts[0][0] if len(verdicts) == 1 else "inconclusive"
    detail = "; ".join(f"{n}: {p[0]} ({p[2]})" for n, p in zip(names, parts))
    if len(verdicts) > 1:
        detail = "flips with P1R's percentile counts — " + detail
    return verdict, parts[0][1], detail


def _fmt(v: float, se: float) -> str:
    return f"{v:.3f} ± {se:.3f}"


# ---------------------------------------------------------------------------------------------------
# checks

def _random_matches(results, kind: str) -> Evidence:
    t = results["random"]
    t = t[t["design"].str.contains(kind)]
    if t.empty:
        raise KeyError(f"random[{kind}]")
    m = t.groupby("design").agg(measured=("measured", "mean"), expected=("expected", "first"), se=("se", "first"))
    verdicts, verdict = _identities(list(zip(m["measured"], m["expected"], m["se"])))
    parts = []
    for (d, r), v in zip(m.iterrows(), verdicts):
        band = NOISE_SE * r.se / r.expected if r.expected > 0 else np.inf
        parts.append(f"{d}: measured {r.measured:.5f} ± {r.se:.5f} vs expected {r.expected:.5f} ({v}"
                     + (f"; noise band ±{band:.0%} wider than ±{IDENTITY_TOLERANCE:.0%}"
                        if v == "inconclusive" and band > IDENTITY_TOLERANCE else "") + ")")
    worst = float((m["measured"] / m["expected"] - 1).abs().max())
    return Evidence(verdict, worst, "; ".join(parts) + f" (agrees when within {NOISE_SE:g} se and the "
                    f"band is within ±{IDENTITY_TOLERANCE:.0%}; disagrees when Holm over the {len(m)} designs finds "
                    "a departure)")


def _bounds(results) -> Evidence:
    c = results["curves"].table
    w = c.pivot_table(index=["curve", "x", "system"], columns="series", values="value")
    w = w.dropna(subset=["1R", "lower", "upper"])
    if w.empty:
        raise KeyError("curves[1R]")
    ok = [holds(v, ">=", lo) == "agrees" and holds(v, "<=", up) == "agrees"
          for v, lo, up in zip(w["1R"], w["lower"], w["upper"])]
    n_ok = int(sum(ok))
    return Evidence("agrees" if n_ok == len(ok) else "disagrees", n_ok / len(ok),
                    f"Eq. 4.2 holds at {n_ok} of {len(ok)} points (exact: one tie key per item shared by the sets)")


def _sparsity_ar(results) -> Evidence:
    cur = results["curves"]
    reps, t = cur.replicates, cur.table[(cur.table["curve"] == "removed") & (cur.table["series"] == "AR")]
    xs = sorted(t["x"].unique())
    if len(xs) < 2 or RANDOM not in set(t["system"]):
        raise KeyError("curves[removed]")
    val = t.set_index(["system", "x"])["value"]
    verdicts, parts = [], []
    for name in sorted(set(t["system"]) - {RANDOM}):
        sys_v = []
        for x in xs[1:]:
            ratio = val[(name, x)] / val[(name, xs[0])]
            density = val[(RANDOM, x)] / val[(RANDOM, xs[0])]
            rep = (reps[(x, name, "AR")] / reps[(xs[0], name, "AR")]) / (reps[(x, RANDOM, "AR")] / reps[(xs[0], RANDOM, "AR")])
            se = float(rep.std(ddof=1))
            sys_v.append("disagrees" if order(ratio / density, 1.0, se, 0.0) else "agrees")
            if x == xs[-1]:
                falls = order(ratio, 1.0, float((reps[(x, name, "AR")] / reps[(xs[0], name, "AR")]).std(ddof=1)), 0.0)
                sys_v.append("agrees" if falls < 0 else "disagrees" if falls > 0 else "inconclusive")
                parts.append(f"{name}: AR P@10 × {ratio:.2f} at {x:.0%} removed, the relevance density ρ × "
                             f"{density:.2f} (ratio of the two {ratio / density:.2f} ± {se:.2f})")
        verdicts.append(combine(sys_v))
    return Evidence(combine(verdicts), None, "; ".join(parts) + " — 'linearly with density': AR falls beyond the "
                    "noise, and at every removal level in proportion to the density ρ = E[P_RND] of its target sets "
                    f"(Eq. 4.4), within {NOISE_SE:g} se")


def _sparsity_1r(results) -> Evidence:
    cur = results["curves"]
    reps, t = cur.replicates, cur.table[(cur.table["curve"] == "removed") & (cur.table["series"] == "1R")]
    xs = sorted(t["x"].unique())
    if len(xs) < 2:
        raise KeyError("curves[removed]")
    items, parts = [], []
    for name in sorted(set(t["system"]) - {RANDOM}):
        v0 = float(t[(t["system"] == name) & (t["x"] == xs[0])]["value"].iloc[0])
        for x in xs[1:]:
            vx = float(t[(t["system"] == name) & (t["x"] == x)]["value"].iloc[0])
            se = float((reps[(x, name, "1R")] - reps[(xs[0], name, "1R")]).std(ddof=1))
            items.append((vx, v0, se))
            if x == xs[-1]:
                parts.append(f"{name}: 1RP@10 {v0:.4f} → {vx:.4f} (± {se:.4f}) at {x:.0%} removed")
    return Evidence(_identities(items)[1], None, "; ".join(parts) + f" — agrees when every change is within "
                    f"{NOISE_SE:g} paired se and that band within ±{IDENTITY_TOLERANCE:.0%}; disagrees when Holm over "
                    f"the {len(items)} changes finds one")


def _paired(run, d: str, a: str, b: str, t: pd.Series) -> int:
    """+1 if ``a`` is above ``b`` in design ``d`` beyond the paired bootstrap noise, -1 below, 0 undecided."""
    return order(float(t[a] - t[b]), 0.0, float((_rep(run, d, a) - _rep(run, d, b)).std(ddof=1)))


def _close_to_best(results) -> Evidence:
    """'pLSA performs best, closely followed by popularity': in each Fig. 4.1 design pLSA above every
    other system, Pop above every system but pLSA (each beyond the paired noise), and Pop nearer to
    pLSA than to the next system. Pop (or anyone) above pLSA beyond the noise disagrees."""
    run = results["designs"]
    pop, plsa = _role(results, "pop"), _role(results, "plsa")
    verdicts, parts = [], []
    for name in ("1R", "AR-AN"):
        d = _design(run, name)
        t = run.table[(run.table["design"] == d) & (run.table["metric"] == "P@10")].set_index("system")["value"]
        if pop not in t.index or plsa not in t.index or len(t) < 3:
            raise KeyError(f"designs[{name}, Pop and pLSA]")
        rest = t.drop([pop, plsa]).sort_values(ascending=False)
        third = rest.index[0]
        best = [_paired(run, d, plsa, o, t) for o in t.index if o != plsa]       # pLSA first
        second = [_paired(run, d, pop, o, t) for o in rest.index]                 # Pop above the rest
        gap = (_rep(run, d, plsa) - _rep(run, d, pop)) - (_rep(run, d, pop) - _rep(run, d, third))
        g = float((t[plsa] - t[pop]) - (t[pop] - t[third]))
        nearer = order(0.0, g, 0.0, float(gap.std(ddof=1)))  # +1: nearer pLSA than the next system
        signs = best + second + [nearer]
        v = "disagrees" if any(s < 0 for s in signs) else "agrees" if all(s > 0 for s in signs) else "inconclusive"
        verdicts.append(v)
        ranked = t.sort_values(ascending=False)
        parts.append(f"{d}: " + ", ".join(f"{k} {x:.4f}" for k, x in ranked.iloc[:3].items()) + f" ({v})")
    return Evidence(combine(verdicts), None, "; ".join(parts) + " — 'pLSA best, closely followed by popularity': "
                    "pLSA above every system, Pop above every other one (paired bootstrap se, beyond "
                    f"{NOISE_SE:g} se), and Pop nearer to pLSA than to the next system")


def _mf_above_knn(results) -> Evidence:
    run = results["designs"]
    mf, knn = _role(results, "mf"), _role(results, "knn")
    signs, parts = [], []
    for name in ("1R", "AR-AN"):
        d = _design(run, name)
        diff = _value(run, d, mf) - _value(run, d, knn)
        se = float((_rep(run, d, mf) - _rep(run, d, knn)).std(ddof=1))
        signs.append(order(diff, 0.0, se))
        parts.append(f"{d}: MF − kNN = {diff:+.4f} ± {se:.4f}")
    v = "agrees" if all(s > 0 for s in signs) else "disagrees" if all(s < 0 for s in signs) else "inconclusive"
    return Evidence(v, None, "; ".join(parts) + " — 'generally superior': above beyond the noise in both Fig. 4.1 "
                    "designs (below in both: disagrees)")


def _best_in(run, d: str, best: str, results) -> tuple[str, str]:
    from ..meta.significance import pairwise

    pu = run.per_user
    pu = pu[(pu["design"] == d) & (pu["metric"] == "P@10")]
    frame = pu.pivot_table(index="system", columns="user", values="value")
    if best not in frame.index:
        raise KeyError(f"per_user[{d}, {best}]")
    tests = pairwise(frame, test="wilcoxon", baseline=best, alternative="greater", correction="holm")
    signs = {}
    for o in frame.index:
        if o == best:
            continue
        diff = _value(run, d, best) - _value(run, d, o)
        signs[o] = order(diff, 0.0, float((_rep(run, d, best) - _rep(run, d, o)).std(ddof=1)))
    p = dict(zip(tests["b"], tests["p_adj"]))
    if any(s < 0 for s in signs.values()):
        v = "disagrees"
    elif all(s > 0 for s in signs.values()) and all(q < ALPHA for q in p.values()):
        v = "agrees"
    else:
        v = "inconclusive"
    worst = max(p, key=p.get)
    return v, f"{v}, closest rival {worst} (Holm p {p[worst]:.2g})"


def _plsa_best(results) -> Evidence:
    run = results["designs"]
    best = _role(results, "plsa")
    names = [n for n in THESIS_DESIGNS if n != "P1R-train"]
    verdicts, parts = [], []
    for name in names:
        if name == "P1R":
            def one(n):
                verdict, text = _best_in(run, _design(run, n), best, results)
                return verdict, None, text
            v, _, det = _readings(one)
        else:
            v, det = _best_in(run, _design(run, name), best, results)
        verdicts.append(v)
        parts.append(f"{name}: {det}")
    return Evidence(combine(verdicts), float(sum(v == "agrees" for v in verdicts)),
                    f"pLSA best in {sum(v == 'agrees' for v in verdicts)} of {len(names)} designs — " + "; ".join(parts)
                    + f" (best: above each rival beyond {NOISE_SE:g} paired se and one-sided Wilcoxon, Holm, p < {ALPHA})")


def _near_random(name: str, results) -> tuple[str, float, str]:
    L, se, d = _lead(results["designs"], name, results)
    return holds(L, "<", NEAR, se), L, f"Pop's lead {_fmt(L, se)} of pLSA's"


def _level_of_random(results) -> Evidence:
    v1, L1, d1 = _readings(lambda n: _near_random(n, results))
    v2, L2, d2 = _near_random("U1R", results)
    return Evidence(combine([v1, v2]), max(L1, L2), f"P1R — {d1}; U1R: {v2} ({d2}) — 'by the level of random': "
                    f"Pop nearer to random than to pLSA, lead < {NEAR}")


def _lead_any(run, d: str, results, metric: str) -> tuple[float, pd.Series]:
    """Pop's lead over random as a share of pLSA's under ``metric`` and its replicates: random is the
    analytic expectation for P@n, the Random system's measured value for any other metric (nDCG)."""
    pop, plsa = _role(results, "pop"), _role(results, "plsa")
    if metric.startswith("P@"):
        value, _ = lead(run, d, pop, plsa, metric)
        r = _rep(run, d, RANDOM, metric)
    else:
        rnd = _role(results, "random")
        x, ref, base = (_value(run, d, s, metric) for s in (pop, plsa, rnd))
        value = (x - base) / (ref - base)
        r = _rep(run, d, rnd, metric)
    return value, (_rep(run, d, pop, metric) - r) / (_rep(run, d, plsa, metric) - r)


def _bias_order(results, lower: str, higher: str, metric: str = "P@10") -> tuple[str, float, str]:
    """Pop's lead is lower in design ``lower`` than in ``higher`` beyond the noise (paired replicates)."""
    run = results["designs"]
    vals, reps = {}, {}
    for n in (lower, higher):
        vals[n], reps[n] = _lead_any(run, _design(run, n), results, metric)
    se = float((reps[lower] - reps[higher]).std(ddof=1))
    s = order(vals[higher], vals[lower], 0.0, se)
    v = "agrees" if s > 0 else "disagrees" if s < 0 else "inconclusive"
    return v, vals[lower], f"Pop's lead {lower} {vals[lower]:.3f} vs {higher} {vals[higher]:.3f} (± {se:.3f})"


def _neutralised(results) -> Evidence:
    parts, verdicts = [], []
    v, _, d = _readings(lambda n: _bias_order(results, n, "1R"))
    verdicts.append(v); parts.append(f"P1R vs 1R: {d}")
    for low, high in (("U1R", "1R"), ("UAR", "AR")):
        v, _, d = _bias_order(results, low, high)
        verdicts.append(v); parts.append(f"{low} vs {high}: {v} ({d})")
    return Evidence(combine(verdicts), None, "; ".join(parts) + " — popularity bias = Pop's lead over random "
                    "as a share of pLSA's")


def _p1r_beyond_u1r(results) -> Evidence:
    v, L, d = _readings(lambda n: _bias_order(results, n, "U1R"))
    return Evidence(v, L, d + " — 'residual bias higher in U1R than P1R'")


def _more_effective_1r(results) -> Evidence:
    v, L, d = _bias_order(results, "U1R", "UAR")
    return Evidence(v, L, d + " — the uniform split leaves less popularity bias in 1R (U1R) than in AR (UAR)")


def _uar_pop_above_knn(results) -> Evidence:
    run = results["designs"]
    d = _design(run, "UAR")
    pop, knn = _role(results, "pop"), _role(results, "knn")
    diff = _value(run, d, pop) - _value(run, d, knn)
    se = float((_rep(run, d, pop) - _rep(run, d, knn)).std(ddof=1))
    s = order(diff, 0.0, se)
    v_above = "agrees" if s > 0 else "disagrees" if s < 0 else "inconclusive"
    v_red, _, det = _bias_order(results, "UAR", "AR")
    return Evidence(combine([v_above, v_red]), diff, f"UAR: Pop − kNN = {diff:+.4f} ± {se:.4f} ({v_above}); "
                    f"decreases from AR: {v_red} ({det})")


def _ai_uar(results) -> Evidence:
    v, L, d = _bias_order(results, "UAR", "AI-UAR")
    return Evidence(v, L, d + " — without the TI policy (AI-UAR) a higher popularity bias remains")


def _head10(results) -> Evidence:
    v1, L, d1 = _bias_order(results, "head10", "1R")
    v2, _, d2 = _readings(lambda n: _bias_order(results, n, "head10"))
    v3, _, d3 = _bias_order(results, "U1R", "head10")
    return Evidence(combine([v1, v2, v3]), L, f"reduces: {v1} ({d1}); less effective than P1R: {v2} ({d2}); "
                    f"than U1R: {v3} ({d3})")


def _sweep_rows(results, role: str):
    sw = results["sweep"]
    t = sw.table[sw.table["system"] == _role(results, role)].sort_values("alpha")
    if t.empty:
        raise KeyError(f"sweep[{role}]")
    return sw, t


def _alpha_rises(results) -> Evidence:
    sw, t = _sweep_rows(results, "pop")
    signs = [order(b.value, a.value, b.se, a.se) for a, b in zip(t.iloc[:-1].itertuples(), t.iloc[1:].itertuples())]
    v = "agrees" if all(s > 0 for s in signs) else "disagrees" if any(s < 0 for s in signs) else "inconclusive"
    return Evidence(v, float(t["value"].iloc[-1] / t["random_expected"].iloc[-1]),
                    f"Pop {sw.design} P@10 by α: " + ", ".join(f"{a:g}: {x:.4f} ± {s:.4f}" for a, x, s in
                                                             zip(t["alpha"], t["value"], t["se"]))
                    + " — agrees when every step up in α raises it beyond the noise (independent data sets)")


def _alpha0_below(results) -> Evidence:
    sw, t = _sweep_rows(results, "pop")
    first = t.iloc[0]
    if first["alpha"] != 0:
        return not_testable(f"the sweep has no α = 0 (smallest: {first['alpha']:g})")
    ratio = float(first["value"] / first["random_expected"])
    se = float(first["se"] / first["random_expected"])
    below, above_half = holds(ratio, "<", 1.0, se), holds(ratio, ">", NEAR, se)
    return Evidence(combine([below, above_half]), ratio,
                    f"Pop/random at α = 0: {_fmt(ratio, se)} (P@10 {first['value']:.4f} vs {first['random_expected']:.4f}; "
                    "the thesis 0.0077 vs 0.0100) — 'slightly below': below 1 and above 1/2 beyond the noise. "
                    f"The simulated data have {sw.ratings_per_item:.0f} ratings per item (MovieLens 1M: 270); the "
                    "fewer, the more r_train and r_test anti-correlate when r(i) is uniform (§4.5.1)")


def _sim_leads(results, role: str):
    sw = results["sweep"]
    pop = _role(results, "pop")
    out = []
    for a in sorted(sw.table["alpha"].unique()):
        r = sw.replicates[(a, RANDOM)] if (a, RANDOM) in sw.replicates.columns else None
        row = sw.table[sw.table["alpha"] == a].set_index("system")
        x = row.loc[_role(results, role)]
        p = row.loc[pop]
        rnd = float(p["random_expected"])
        pop_lead = holds(float(p["value"]), ">", rnd, float(p["se"]))
        if pop_lead != "agrees":
            out.append((a, None, None, f"α = {a:g}: Pop not above random beyond the noise, no contrast"))
            continue
        reps = (sw.replicates[(a, _role(results, role))] - r) / (sw.replicates[(a, pop)] - r)
        L = (float(x["value"]) - rnd) / (float(p["value"]) - rnd)
        out.append((a, L, float(reps.std(ddof=1)), f"α = {a:g}: lead {_fmt(L, float(reps.std(ddof=1)))} of Pop's"))
    return out


def _knn_mf_sim(results) -> Evidence:
    verdicts, parts = [], []
    for role, label in (("knn", "kNN"), ("mf", "MF")):
        rows = _sim_leads(results, role)
        vs = [holds(L, "<", NEAR, se) for _, L, se, _ in rows if L is not None]
        verdicts.append(combine(vs) if vs else "inconclusive")
        parts.append(f"{label} ({_role(results, role)}): " + ", ".join(r[3] for r in rows))
    return Evidence(combine(verdicts), None, "; ".join(parts) + f" — 'around random': nearer to random than to "
                    f"Pop (lead < {NEAR}) wherever Pop is above random")


def _plsa_sim(results) -> Evidence:
    rows = _sim_leads(results, "plsa")
    vs = [combine([holds(L, ">", 1 - NEAR, se), holds(L, "<", 1 + NEAR, se)]) for _, L, se, _ in rows if L is not None]
    return Evidence(combine(vs) if vs else "inconclusive", None, ", ".join(r[3] for r in rows)
                    + f" — 'closely matches': pLSA's lead within {1 - NEAR:g}..{1 + NEAR:g} of Pop's")


def _bounds_narrow(results) -> Evidence:
    """'The bounding interval reduces progressively as |T_u| is increased' (Fig. 4.2 right): for each
    system, upper − lower of Eq. 4.2 falls at every step up in |T_u| (exact bounds: any rise disagrees)."""
    c = results["curves"].table
    w = c[c["curve"] == "size"].pivot_table(index=["system", "x"], columns="series", values="value")
    if w.empty or not {"lower", "upper"} <= set(w.columns):
        raise KeyError("curves[size]")
    verdicts, parts = [], []
    for name, g in (w["upper"] - w["lower"]).groupby(level="system"):
        g = g.droplevel("system").sort_index()
        if len(g) < 2:
            raise KeyError(f"curves[size, {name}]")
        steps = [order(a, b) for a, b in zip(g.iloc[:-1], g.iloc[1:])]  # +1: narrower at the larger |T_u|
        verdicts.append("agrees" if all(x > 0 for x in steps) else "disagrees" if any(x < 0 for x in steps)
                        else "inconclusive")
        parts.append(f"{name}: width " + ", ".join(f"{v:.4f} (|T_u| {int(x)})" for x, v in g.items()))
    return Evidence(combine(verdicts), None, "; ".join(parts) + " — agrees when the Eq. 4.2 interval narrows at every "
                    "step up in |T_u| for every system (exact bounds)")


def _orders_alike(run, d1: str, d2: str) -> tuple[str, str]:
    """Every pair of systems decided (paired bootstrap se) in one design is decided the same way in the other."""
    t = run.table[run.table["metric"] == "P@10"]
    vals = {d: t[t["design"] == d].set_index("system")["value"] for d in (d1, d2)}
    names = sorted(set(vals[d1].index) & set(vals[d2].index))
    reversed_, one_sided, same = [], [], 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            s1, s2 = (_paired(run, d, a, b, vals[d]) for d in (d1, d2))
            if s1 * s2 < 0:
                reversed_.append(f"{a}/{b}")
            elif s1 != s2:
                one_sided.append(f"{a}/{b}")
            elif s1:
                same += 1
    v = "disagrees" if reversed_ else "inconclusive" if one_sided or not same else "agrees"
    return v, (f"{same} pairs ordered alike beyond the noise" + (f"; reversed: {', '.join(reversed_)}" if reversed_ else "")
               + (f"; decided in one design only: {', '.join(one_sided)}" if one_sided else ""))


def _ti_ai(results) -> Evidence:
    run = results["designs"]
    ti, ai = _design(run, "AR-AN"), _design(run, "AR-AI")
    v, det = _orders_alike(run, ti, ai)
    return Evidence(v, None, f"{ti} vs {ai}: {det} — 'TI ≈ AI': no pair of systems reversed beyond {NOISE_SE:g} paired "
                    "se, and every pair decided in one decided the same way in the other")


def _ndcg_patterns(results) -> Evidence:
    """Fig. 4.7's patterns under nDCG@10: the popularity-bias orderings (P1R, U1R < 1R; UAR < AR < ...;
    UAR < AI-UAR; head10 < 1R) and pLSA above every system, each as under P@10."""
    run = results["designs"]
    metric = "nDCG@10"
    pairs = [("U1R", "1R"), ("UAR", "AR"), ("UAR", "AI-UAR"), ("head10", "1R")]
    verdicts, parts = [], []
    v, _, d = _readings(lambda n: _bias_order(results, n, "1R", metric))
    verdicts.append(v)
    parts.append(f"P1R vs 1R: {v}")
    for low, high in pairs:
        v, _, d = _bias_order(results, low, high, metric)
        verdicts.append(v)
        parts.append(f"{low} vs {high}: {v} ({d})")
    plsa = _role(results, "plsa")
    t = run.table[run.table["metric"] == metric]
    best = []
    for name in ("1R", "AR", "P1R", "U1R", "UAR"):
        dd = _design(run, name)
        vals = t[t["design"] == dd].set_index("system")["value"]
        signs = [_paired_metric(run, dd, plsa, o, vals, metric) for o in vals.index if o != plsa]
        best.append("agrees" if all(x > 0 for x in signs) else "disagrees" if any(x < 0 for x in signs)
                    else "inconclusive")
    verdicts.append(combine(best))
    parts.append(f"pLSA above every system in 1R, AR, P1R, U1R, UAR: {combine(best)}")
    return Evidence(combine(verdicts), None, "; ".join(parts) + " — nDCG@10, Pop's lead over the Random system as a "
                    "share of pLSA's; 'the analysed patterns hold just the same'")


def _paired_metric(run, d: str, a: str, b: str, t: pd.Series, metric: str) -> int:
    return order(float(t[a] - t[b]), 0.0, float((_rep(run, d, a, metric) - _rep(run, d, b, metric)).std(ddof=1)))


#: §4.5.2's TREC statistics (30 tracks aggregated): share of documents relevant to one query, and the
#: share of the queries the most judged document is relevant to
TREC_SINGLE_SHARE, TREC_TOP_SHARE = 0.872, 0.036


def _long_tail(results) -> Evidence:
    t = results["positive"]
    if len(t) == 0:
        raise KeyError("positive")
    vs = [combine([holds(r.top_share_users, ">", TREC_TOP_SHARE), holds(r.single_share, "<", TREC_SINGLE_SHARE)])
          for r in t.itertuples()]
    return Evidence(combine(vs), float(t["top_share_users"].min()), "; ".join(
        f"{r.data}: most liked item liked by {r.top_share_users:.1%} of users, {r.single_share:.1%} of the "
        f"{r.items:,} liked items liked once, top {r.head:.0%} hold {r.head_share:.1%} of the positive ratings"
        for r in t.itertuples()) + f" (TREC: {TREC_TOP_SHARE:.1%} and {TREC_SINGLE_SHARE:.1%}; exact counts: agrees "
        "if every data set is above the first and below the second)")
