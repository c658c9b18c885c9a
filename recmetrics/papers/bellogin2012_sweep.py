"""The checks of paper 004's claims about the simulated α sweep (Bellogín, thesis §4.5.2, Fig. 4.4;
chapter ``08_popularity_bias``): popularity's precision as the test ratings' popularity skew α grows,
and the leads of kNN, MF and pLSA over random as a share of Pop's. The rest of the thesis' claims are
decided in :mod:`recmetrics.papers.bellogin2012_checks`, whose readings ("nearer to random", "closely
matches") these share."""
from __future__ import annotations

from ..meta.firmness import replay_cached
from ..meta.findings import Evidence, Verdict, compare, decide, holds, jointly, not_testable
from ..protocols.chapter import RANDOM
from .bellogin2012_checks import NEAR, _against, _fmt, _role

__all__ = ["_alpha_rises", "_alpha0_below", "_knn_mf_sim", "_plsa_sim"]


def _sweep_rows(results, role: str):
    sw = results["sweep"]
    t = sw.table[sw.table["system"] == _role(results, role)].sort_values("alpha")
    if t.empty:
        raise KeyError(f"sweep[{role}]")
    return sw, t


def _alpha_rises(results) -> Evidence:
    sw, t = _sweep_rows(results, "pop")
    comps = [compare(b.value, a.value, b.se, a.se, label=f"α {b.alpha:g} − {a.alpha:g}")
             for a, b in zip(t.iloc[:-1].itertuples(), t.iloc[1:].itertuples())]
    return Evidence(decide(comps), float(t["value"].iloc[-1] / t["random_expected"].iloc[-1]),
                    f"Pop {sw.design} P@10 by α: " + ", ".join(f"{a:g}: {x:.4f} ± {s:.4f}" for a, x, s in
                                                             zip(t["alpha"], t["value"], t["se"]))
                    + " — agrees when every step up in α raises it beyond the noise (independent data sets; the steps "
                    "one family, Holm)" + _against(comps))


def _alpha0_below(results) -> Evidence:
    sw, t = _sweep_rows(results, "pop")
    first = t.iloc[0]
    if first["alpha"] != 0:
        return not_testable(f"the sweep has no α = 0 (smallest: {first['alpha']:g})")
    ratio = float(first["value"] / first["random_expected"])
    se = float(first["se"] / first["random_expected"])
    below, above_half = holds(ratio, "<", 1.0, se), holds(ratio, ">", NEAR, se)
    return Evidence(jointly([below, above_half]), ratio,
                    f"Pop/random at α = 0: {_fmt(ratio, se)} (P@10 {first['value']:.4f} vs {first['random_expected']:.4f}; "
                    "the thesis 0.0077 vs 0.0100) — 'slightly below': below 1 and above 1/2 beyond the noise. "
                    f"The simulated data have {sw.ratings_per_item:.0f} ratings per item (MovieLens 1M: 270); the "
                    "fewer, the more r_train and r_test anti-correlate when r(i) is uniform (§4.5.1)")


@replay_cached
def _pop_by_alpha(sw, system: str, pop: str) -> list[tuple]:
    """Per α of the sweep ``sw``: ``(α, random's expectation, Pop's value, Pop's se)``; a KeyError
    when ``system`` or Pop is missing at an α."""
    out = []
    for a in sorted(sw.table["alpha"].unique()):
        row = sw.table[sw.table["alpha"] == a].set_index("system")
        row.loc[system]
        p = row.loc[pop]
        out.append((a, float(p["random_expected"]), float(p["value"]), float(p["se"])))
    return out


@replay_cached
def _sim_lead(sw, a, system: str, pop: str) -> tuple[float, float]:
    """``(L, se)``: ``system``'s lead over random as a share of Pop's at α = ``a``, and its bootstrap se."""
    r = sw.replicates[(a, RANDOM)] if (a, RANDOM) in sw.replicates.columns else None
    row = sw.table[sw.table["alpha"] == a].set_index("system")
    x, p = row.loc[system], row.loc[pop]
    rnd = float(p["random_expected"])
    reps = (sw.replicates[(a, system)] - r) / (sw.replicates[(a, pop)] - r)
    return (float(x["value"]) - rnd) / (float(p["value"]) - rnd), float(reps.std(ddof=1))


def _sim_leads(results, role: str):
    sw, pop, system = results["sweep"], _role(results, "pop"), _role(results, role)
    out = []
    for a, rnd, pop_value, pop_se in _pop_by_alpha(sw, system, pop):
        pop_lead = holds(pop_value, ">", rnd, pop_se)
        if pop_lead != "agrees":
            out.append((a, None, None, f"α = {a:g}: Pop not above random beyond the noise, no contrast"))
            continue
        L, se = _sim_lead(sw, a, system, pop)
        out.append((a, L, se, f"α = {a:g}: lead {_fmt(L, se)} of Pop's"))
    return out


def _knn_mf_sim(results) -> Evidence:
    verdicts, parts = [], []
    for role, label in (("knn", "kNN"), ("mf", "MF")):
        rows = _sim_leads(results, role)
        vs = [holds(L, "<", NEAR, se, label=f"{label} α {a:g}: lead {L:.3f} < {NEAR}") for a, L, se, _ in rows
              if L is not None]
        verdicts += vs or [Verdict("inconclusive")]
        parts.append(f"{label} ({_role(results, role)}): " + ", ".join(r[3] for r in rows))
    comps = [c for v in verdicts for c in v.comparisons]
    return Evidence(jointly(verdicts), None, "; ".join(parts) + f" — 'around random': nearer to random than to "
                    f"Pop (lead < {NEAR}) wherever Pop is above random; one family (Holm)" + _against(comps))


def _plsa_sim(results) -> Evidence:
    rows = _sim_leads(results, "plsa")
    vs = [v for _, L, se, _ in rows if L is not None for v in (holds(L, ">", 1 - NEAR, se), holds(L, "<", 1 + NEAR, se))]
    comps = [c for v in vs for c in v.comparisons]
    return Evidence(jointly(vs) if vs else Verdict("inconclusive"), None, ", ".join(r[3] for r in rows)
                    + f" — 'closely matches': pLSA's lead within {1 - NEAR:g}..{1 + NEAR:g} of Pop's (one family, Holm)"
                    + _against(comps))
