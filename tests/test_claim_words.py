"""Issue 25 §4-5: checks that test the papers' words, the claims no chapter tested before, and the
set-up every row states (recmetrics.papers.scenario_checks, the new claims of papers 000, 002, 003,
004, the per-row deviations of chapter 08, "same verdict with pool" only when it was computed).
Each claim is decided on constructed evidence: agrees, disagrees, inconclusive."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmetrics import papers
from recmetrics.errors import InputError
from recmetrics.meta import findings
from recmetrics.meta.robustness import Robustness

METRICS = ["P", "Recall", "F1", "AP", "nDCG", "RR", "ERR", "bpref", "infAP"]


def check(paper: str, cid: str, results: dict) -> findings.Evidence:
    claim = next(c for p in (paper,) for c in papers.get(p).CLAIMS if c.id == cid)
    return claim.check({"n_systems": 21, **results})


def rob(curves: dict, n: int = 10, spread: float = 0.01, values: dict | None = None, seed: int = 0) -> Robustness:
    """A Robustness from ``{scenario: {metric: {size: mean τ}}}`` (metrics missing from a scenario get
    τ 0.8 at every size), ``n`` samples per size with sd ``spread`` (not 0: identical samples give an
    unknown se, which decides nothing); ``values``: ``{scenario: {metric:
    {size: mean metric value}}}`` (default: 0.1 · size)."""
    rng = np.random.default_rng(seed)
    rows = []
    for sc, per_metric in curves.items():
        sizes = sorted({s for c in per_metric.values() for s in c} | {1.0}, reverse=True)
        for m in METRICS:
            curve = per_metric.get(m, {s: 0.8 for s in sizes})
            for size in sizes:
                value = ((values or {}).get(sc, {}).get(m, {}).get(size, 0.1 * size))
                if size == 1.0:
                    rows.append((sc, 1.0, 0, f"{m}@100", 1.0, value))
                    continue
                z = rng.standard_normal(n) if spread else np.zeros(n)
                if spread:
                    z = (z - z.mean()) / z.std(ddof=1)
                rows += [(sc, size, r, f"{m}@100", curve[size] + spread * z[r], value) for r in range(n)]
    return Robustness(pd.DataFrame(rows, columns=["scenario", "size", "sample", "metric", "tau", "mean_value"]),
                      pd.DataFrame())


def flat(taus: dict, sizes=(0.5, 0.2)) -> dict:
    return {m: {s: t for s in sizes} for m, t in taus.items()}


# ------------------------------------------------------------------ 000 §6.1: correlation among metrics
def tau_matrix(low: dict | None = None, pairs: dict | None = None, base: float = 0.9) -> pd.DataFrame:
    a = np.full((len(METRICS), len(METRICS)), base)
    ix = {m: i for i, m in enumerate(METRICS)}
    for m, v in (low or {}).items():
        a[ix[m], :] = a[:, ix[m]] = v
    for (x, y), v in (pairs or {}).items():
        a[ix[x], ix[y]] = a[ix[y], ix[x]] = v
    np.fill_diagonal(a, 1.0)
    return pd.DataFrame(a, index=METRICS, columns=METRICS)


def tau_replicates(matrix: pd.DataFrame, n: int = 10, spread: float = 0.02, seed: int = 0) -> list:
    """``n`` τ matrices of the split's replicates: ``matrix`` plus symmetric noise of sd ``spread``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        noise = rng.normal(0.0, spread, matrix.shape)
        noise = (noise + noise.T) / 2
        np.fill_diagonal(noise, 0.0)
        out.append(matrix + noise)
    return out


def test_mrr_err_differ_from_the_rest():
    differ = tau_matrix({"RR": 0.5, "ERR": 0.55}, {("RR", "ERR"): 0.95})
    ev = check("000", "mrr-err-differ", {"tau": differ, "tau_replicates": tau_replicates(differ)})
    assert ev.verdict == "agrees" and "within the group τ 0.950" in ev.detail
    other = tau_matrix({"RR": 0.5, "bpref": 0.3})
    assert check("000", "mrr-err-differ", {"tau": other, "tau_replicates": tau_replicates(other)}).verdict \
        == "disagrees"
    # a tie with another metric decides nothing
    tie = tau_matrix({"RR": 0.5, "ERR": 0.5, "bpref": 0.5})
    assert check("000", "mrr-err-differ", {"tau": tie, "tau_replicates": tau_replicates(tie)}).verdict \
        == "inconclusive"
    # a τ of full test sets is an estimate: without the split's replicates to measure its spread it
    # decides nothing (before, 0.8873 against 0.8884 decided 'disagrees' as if the τ were exact)
    for tau in (differ, other):
        ev = check("000", "mrr-err-differ", {"tau": tau})
        assert ev.verdict == "inconclusive" and "within the noise" in ev.detail


def test_map_ndcg_strongly_correlated():
    assert check("000", "map-ndcg-strong", {"tau": tau_matrix(pairs={("AP", "nDCG"): 0.95})}).verdict == "agrees"
    ev = check("000", "map-ndcg-strong", {"tau": tau_matrix(pairs={("AP", "nDCG"): 0.7})})
    assert ev.verdict == "disagrees" and "τ(AP, nDCG) = 0.700" in ev.detail
    assert check("000", "map-ndcg-strong", {"tau": tau_matrix(pairs={("AP", "nDCG"): 0.7}), "n_systems": 3}).verdict \
        == "inconclusive"


def test_tau_thresholds_see_the_step_of_one_swapped_pair():
    from recmetrics.papers.scenario_checks import swap_step

    assert swap_step(6) == pytest.approx(4 / 30) and swap_step(21) == pytest.approx(4 / 420)
    cut = papers.get("003").CLAIMS[0]  # cutoffs-correlate: every pair of cut-offs at τ ≥ 0.9
    perfect = pd.DataFrame(np.ones((3, 3)), index=[5, 10, 100], columns=[5, 10, 100])
    assert cut.check({"cutoff_tau": perfect, "n_systems": 21}).verdict == "agrees"
    # 6 systems: τ moves in steps of 0.133, so 1.0 (and 0.867, one swap) are one pair from 0.9
    ev = cut.check({"cutoff_tau": perfect, "n_systems": 6})
    assert ev.verdict == "inconclusive" and "one pair moves τ by 0.133" in ev.detail
    one_swap = perfect.copy()
    one_swap.loc[5, 100] = one_swap.loc[100, 5] = 1 - 4 / 30
    assert cut.check({"cutoff_tau": one_swap, "n_systems": 6}).verdict == "inconclusive"
    far = perfect.copy()
    far.loc[5, 100] = far.loc[100, 5] = 0.6
    assert cut.check({"cutoff_tau": far, "n_systems": 6}).verdict == "disagrees"
    assert check("000", "map-ndcg-strong", {"tau": tau_matrix(pairs={("AP", "nDCG"): 1.0}), "n_systems": 6}).verdict \
        == "inconclusive"


# ------------------------------------------------------------------ 000 §6.3: robustness scenarios
def test_ratings_half_removed_above_09():
    ok = rob({"ratings": flat({m: 0.95 for m in METRICS}, (0.5, 0.2))})
    assert check("000", "ratings-half-above-09", {"robustness": ok}).verdict == "agrees"
    low = rob({"ratings": {**flat({m: 0.95 for m in METRICS}, (0.5, 0.2)), "RR": {0.5: 0.85, 0.2: 0.5}}})
    ev = check("000", "ratings-half-above-09", {"robustness": low})
    assert ev.verdict == "disagrees" and "lowest RR 0.850" in ev.detail
    noisy = rob({"ratings": {**flat({m: 0.95 for m in METRICS}), "RR": {0.5: 0.89, 0.2: 0.5}}}, spread=0.1)
    assert check("000", "ratings-half-above-09", {"robustness": noisy}).verdict == "inconclusive"


def test_p_falls_slowly_and_linearly():
    sizes = (0.75, 0.5, 0.25)
    curves = {"ratings": flat({m: 0.9 for m in METRICS}, sizes)}
    lin = {m: {1.0: 0.2, **{s: 0.2 * (0.5 + 0.5 * s) for s in sizes}} for m in ["P"]}  # keeps 0.625-0.875
    fast = {m: {1.0: 0.2, **{s: 0.2 * s ** 2 for s in sizes}} for m in METRICS if m != "P"}
    ok = rob(curves, values={"ratings": {**lin, **fast}})
    ev = check("000", "p-falls-slowly-linearly", {"robustness": ok})
    assert ev.verdict == "agrees", ev.detail
    # P falls fast and sublinearly like the others: not linearly
    bent = rob(curves, values={"ratings": {m: {1.0: 0.2, **{s: 0.2 * s ** 2 for s in sizes}} for m in METRICS}})
    assert check("000", "p-falls-slowly-linearly", {"robustness": bent}).verdict == "disagrees"
    # every metric falls linearly alike: P not slower than the others, nothing decided
    same = rob(curves, values={"ratings": {m: lin["P"] for m in METRICS}})
    ev = check("000", "p-falls-slowly-linearly", {"robustness": same})
    assert ev.verdict == "inconclusive" and "within the noise" in ev.detail
    # the scale of "slowly" is open: P small and proportional to the share kept (drop 0.01) vs the others
    # large, keeping 85 % (drop 0.03): slower in absolute terms, faster in relative ones -> flips
    small = {"P": {1.0: 0.02, **{x: 0.02 * x for x in sizes}}}
    big = {m: {1.0: 0.2, **{x: 0.2 * (0.7 + 0.3 * x) for x in sizes}} for m in METRICS if m != "P"}
    ev = check("000", "p-falls-slowly-linearly", {"robustness": rob(curves, values={"ratings": {**big, **small}})})
    assert ev.verdict == "inconclusive" and "flips with the scale" in ev.detail
    curved = {"P": {1.0: 0.2, 0.75: 0.2 * 0.99, 0.5: 0.2 * 0.98, 0.25: 0.2 * 0.6}}
    ev = check("000", "p-falls-slowly-linearly", {"robustness": rob(curves, values={"ratings": {**fast, **curved}})})
    assert ev.verdict == "disagrees" and "largest distance from the straight line" in ev.detail


def test_items_hurt_more_than_ratings_and_random_users_smoother():
    scen = {"ratings": flat({m: 0.9 for m in METRICS}), "random-items": flat({m: 0.8 for m in METRICS}),
            "random-users": flat({m: 0.97 for m in METRICS})}
    r = {"robustness": rob(scen)}
    assert check("000", "items-hurt-more", r).verdict == "agrees"
    assert check("000", "random-users-smoother", r).verdict == "agrees"
    swapped = {"ratings": scen["random-items"], "random-items": scen["ratings"], "random-users": scen["ratings"]}
    r = {"robustness": rob(swapped)}
    assert check("000", "items-hurt-more", r).verdict == "disagrees"
    ev = check("000", "random-users-smoother", r)
    assert ev.verdict == "inconclusive" and "|" in ev.detail  # ties ratings, beats items: not decided
    noisy = {"ratings": flat({m: 0.9 for m in METRICS}), "random-items": flat({m: 0.89 for m in METRICS})}
    assert check("000", "items-hurt-more", {"robustness": rob(noisy, spread=0.1)}).verdict == "inconclusive"


def test_large_users_keeps_to_a_lesser_degree():
    tiers = {"RR": 0.95, "ERR": 0.94, "infAP": 0.9, "bpref": 0.89}
    ok = rob({"large-users": flat(tiers)})
    assert check("000", "large-users-utility-best", {"robustness": ok}).verdict == "agrees"
    # all four above the rest but InfAP/Bpref above MRR/ERR: not "to a lesser degree" (the old check agreed)
    reversed_ = rob({"large-users": flat({"RR": 0.9, "ERR": 0.89, "infAP": 0.95, "bpref": 0.94})})
    ev = check("000", "large-users-utility-best", {"robustness": reversed_})
    assert ev.verdict == "disagrees" and "infAP beats RR" in ev.detail
    # the second tier not above the rest
    weak = rob({"large-users": flat({"RR": 0.95, "ERR": 0.94, "infAP": 0.7, "bpref": 0.89})})
    assert check("000", "large-users-utility-best", {"robustness": weak}).verdict == "disagrees"


def test_gp_gndcg_robust_in_every_scenario_but_large_users():
    scen = ("ratings", "random-items", "random-users", "popular-items")
    good = {sc: flat({"P": 0.95, "nDCG": 0.94, "AP": 0.96}) for sc in scen}
    assert check("000", "gp-gndcg-robust", {"robustness_geo": rob(good)}).verdict == "agrees"
    bad = dict(good, **{"popular-items": flat({"P": 0.5, "nDCG": 0.94})})
    ev = check("000", "gp-gndcg-robust", {"robustness_geo": rob(bad)})
    assert ev.verdict == "disagrees" and "popular-items: GP 0.500" in ev.detail
    tied = {sc: flat({m: 0.9 for m in METRICS}) for sc in scen}
    assert check("000", "gp-gndcg-robust", {"robustness_geo": rob(tied)}).verdict == "inconclusive"


# ------------------------------------------------------------------ 003 §7: bpref and infAP low DP
def test_bpref_infap_low_dp():
    dp = pd.Series({m: 1.0 for m in METRICS})
    dp["bpref"], dp["infAP"], dp["ERR"] = 5.0, 3.0, 9.0   # ERR is not among 003's metrics
    assert check("003", "dp-bpref-infap-low-003", {"dp": dp}).verdict == "agrees"
    swapped = dp.copy()
    swapped["bpref"], swapped["infAP"] = 3.0, 5.0
    ev = check("003", "dp-bpref-infap-low-003", {"dp": swapped})
    assert ev.verdict == "disagrees" and "bpref above infAP (-2, exact): reversed" in ev.detail
    low = dp.copy()
    low["bpref"] = 0.5
    assert check("003", "dp-bpref-infap-low-003", {"dp": low}).verdict == "disagrees"
    close = dp.copy()
    close["infAP"] = 1.01
    assert check("003", "dp-bpref-infap-low-003",
                 {"dp": close, "dp_se": pd.Series(0.05, index=METRICS)}).verdict == "inconclusive"


# ------------------------------------------------------------------ 002 §5.3: subtopic metrics worse
def pvalues(logp: dict) -> pd.DataFrame:
    rows = [(fam, m, lvl, 10.0 ** v(lvl)) for fam in ("swap", "redundancy", "aspect") for m, v in logp.items()
            for lvl in range(1, 6)]
    return pd.DataFrame(rows, columns=["family", "metric", "level", "pvalue"])


def test_subtopic_metrics_worse_in_experiment_2():
    claim = next(c for c in papers.get("002").CLAIMS if c.id == "exp2-subtopic-worse")
    good = {"ab-nDCG@100": lambda l: -2.0 * l, "NRBP@100": lambda l: -1.5 * l, "S-Recall@100": lambda l: -0.2 * l,
            "S-RR@100": lambda l: -0.1 * l}
    assert claim.check({"pvalues": pvalues(good)}).verdict == "agrees"
    bad = dict(good, **{"S-RR@100": lambda l: -3.0 * l})
    ev = claim.check({"pvalues": pvalues(bad)})
    assert ev.verdict == "disagrees" and "S-RR" in ev.detail
    tie = dict(good, **{"S-Recall@100": lambda l: -1.5 * l})
    assert claim.check({"pvalues": pvalues(tie)}).verdict == "inconclusive"
    assert findings.assess([claim], {"pshape": pd.DataFrame()}).verdict.iloc[0] == "inconclusive"


# ------------------------------------------------------------------ "(same verdict with pool = mean)"
def test_same_verdict_with_pool_only_when_the_pool_entered_the_results():
    good = rob({"ratings": flat({"P": 0.95, "F1": 0.94, "nDCG": 0.93})})
    claims = [c for c in papers.get("000").CLAIMS if c.id in ("p-most-robust-ratings", "dp-ndcg-top")]
    dp = pd.Series({m: 1.0 + i for i, m in enumerate(METRICS)})
    dp["nDCG"] = 0.1
    t = papers.assess_choices(claims, {"concat": {"robustness": good, "dp": dp, "n_systems": 21},
                                       "mean": {"robustness": good, "dp": dp * 1.5, "n_systems": 21}}).set_index("id")
    # robustness pools folds one way for both readings: the pool did not enter, nothing "same" to claim
    row = t.loc["p-most-robust-ratings"]
    assert row.verdict == "agrees" and "same verdict with pool" not in row.our_evidence
    assert "(pool does not enter these results)" in row.our_evidence and row.pool_verdicts == "any: agrees"
    # DP was computed under both poolings: the row says so
    row = t.loc["dp-ndcg-top"]
    assert row.verdict == "agrees" and "(same verdict with pool = mean)" in row.our_evidence
    assert row.pool_verdicts == "concat: agrees; mean: agrees"


# ------------------------------------------------------------------ 004: new claims
def test_004_new_claims_on_constructed_evidence():
    from test_protocols_thesis import KNN, MF, PLSA, POP, RND, designs, fake_run, verdict
    from recmetrics.protocols.chapter import Curves

    run = fake_run(designs())
    # TI ≈ AI: the same run under both AR policies orders every pair alike
    assert verdict("ti-ai", {"designs": run}).verdict == "agrees"
    swapped = fake_run(designs(AR_AI={MF: 0.035, KNN: 0.050}))
    ev = verdict("ti-ai", {"designs": swapped})
    assert ev.verdict == "disagrees" and "reversed" in ev.detail
    assert verdict("ti-ai", {"designs": fake_run(designs(AR_AI={MF: 0.040}))}).verdict == "inconclusive"
    # Fig. 4.7's patterns under nDCG: the fake run's nDCG rows are absent -> not computed
    assert findings.assess([c for c in papers.get("004").CLAIMS if c.id == "ndcg-patterns"],
                           {"designs": run}).verdict.iloc[0] == "inconclusive"

    def curves(widths: dict) -> Curves:
        rows = []
        for name, ws in widths.items():
            for x, w in ws.items():
                rows += [("size", x, name, "lower", 0.05, np.nan), ("size", x, name, "upper", 0.05 + w, np.nan),
                         ("size", x, name, "1R", 0.05 + w / 2, np.nan)]
        return Curves(pd.DataFrame(rows, columns=["curve", "x", "system", "series", "value", "se"]), pd.DataFrame())

    narrowing = curves({PLSA: {50: 0.04, 100: 0.03, 200: 0.01}, KNN: {50: 0.02, 100: 0.01, 200: 0.005}})
    assert verdict("eq42-narrows", {"curves": narrowing}).verdict == "agrees"
    widening = curves({PLSA: {50: 0.04, 100: 0.05, 200: 0.01}, KNN: {50: 0.02, 100: 0.01, 200: 0.005}})
    assert verdict("eq42-narrows", {"curves": widening}).verdict == "disagrees"
    flat_ = curves({PLSA: {50: 0.04, 100: 0.04, 200: 0.04}})
    assert verdict("eq42-narrows", {"curves": flat_}).verdict == "inconclusive"
    assert {POP, RND}  # roles used by the fake runs


def test_004_ndcg_patterns_read_ndcg_rows():
    from test_protocols_thesis import POP, designs, fake_run, verdict
    from recmetrics.protocols.chapter import DesignRun

    def with_ndcg(values):
        p = fake_run(values)
        # nDCG rows: the same per-user values under another metric name (the patterns then hold as under P)
        t = p.table.assign(metric="nDCG@10", random_expected=np.nan)
        reps = p.replicates.copy()
        reps.columns = pd.MultiIndex.from_tuples([(d, s, "nDCG@10") for d, s, _ in reps.columns])
        pu = p.per_user.assign(metric="nDCG@10")
        return DesignRun(pd.concat([p.table, t], ignore_index=True), p.info,
                         pd.concat([p.replicates, reps], axis=1), pd.concat([p.per_user, pu], ignore_index=True), {})

    base = designs(P1R={POP: 0.012}, P1R_train={POP: 0.012}, U1R={POP: 0.020}, UAR={POP: 0.050},
                   AI_UAR={POP: 0.060}, head10={POP: 0.040}, AR={POP: 0.065})
    assert verdict("ndcg-patterns", {"designs": with_ndcg(base)}).verdict == "agrees"
    worse = dict(base, **{"AI-UAR": dict(base["AI-UAR"], **{POP: 0.015})})
    ev = verdict("ndcg-patterns", {"designs": with_ndcg(worse)})
    assert ev.verdict == "disagrees" and "UAR vs AI-UAR: disagrees" in ev.detail


# ------------------------------------------------------------------ §4: chapter 08's rows state their deviations
def test_chapter08_rows_state_their_deviations():
    p004 = papers.get("004")
    ran = {"dataset": "movielens-small", "users": 150, "designs": ["1R", "AR-AN", "AR", "P1R", "U1R"],
           "systems": {n: p004.SYSTEMS[n] for n in p004.SYSTEMS}, "data_size": (610, 9724, 100836),
           "alphas": [0.0, 1.0, 2.0], "removed": [0.0, 0.4, 0.8], "sizes": [49, 99, 199],
           "test_size": 0.2, "threshold": 5.0}
    d = p004.deviations(ran)
    assert set(d) == {c.id for c in p004.CLAIMS}
    for cid, lines in d.items():
        text = "; ".join(lines)
        assert "movielens-small (the thesis: MovieLens 1M and Last.fm" in text and "150 sampled test users" in text
    assert any("TI-AR-AN only" in x for x in d["pop-close-to-best"]) and \
        not any("TI-AR-AN only" in x for x in d["alpha-rises"])
    sim = "; ".join(d["alpha-rises"])
    assert "simulated data of movielens-small's size (610 users, 9,724 items, 100,836 ratings)" in sim
    assert "6,040" in sim and "α grid: 0, 1, 2" in sim
    assert any("re-implemented" in x for x in d["plsa-best"]) and not any("re-implemented" in x for x in d["random-1r"])
    # running AI-AN too removes the Fig. 4.1 deviation; the thesis' own sizes remove the simulated one
    d2 = p004.deviations({**ran, "designs": ["AR-AN", "AR-AI"], "data_size": (6040, 3706, 1000209),
                          "dataset": "movielens-1m", "users": None})
    assert not any("only" in x and "AR" in x for x in d2["pop-close-to-best"])
    assert not any("simulated" in x for x in d2["alpha-rises"])
    assert d2["random-ar"] == ["Last.fm not run (not available to the project); MovieLens 1M only"]
    with pytest.raises(InputError, match="mapping"):
        p004.deviations(["movielens-small"])


def test_row_deviations_fill_each_row_and_refuse_a_row_without():
    c = findings.Claim("a", "004", "x", "y", lambda r: findings.Evidence("agrees", 1.0, "z"))
    c2 = findings.Claim("b", "004", "x", "y", lambda r: findings.Evidence("agrees", 1.0, "z"))
    t = findings.assess([c, c2], {}, context={"seed": 3})
    out = papers.row_deviations(t, {"a": ["one", "two"], "b": []})
    assert list(out.deviations) == ["one; two", ""] and list(t.deviations) == ["", ""]
    with pytest.raises(InputError, match="'b'"):
        papers.row_deviations(t, {"a": ["one"]})


def test_findings_page_files_project_checks_apart(tmp_path):
    from recmetrics.papers import schroeder2011 as sc
    from recmetrics.report.findings_page import write_findings_page

    gen = tmp_path / "generated"
    toy = findings.Claim("t1", "001", "toy claim", "Fig. 2", lambda r: findings.Evidence("agrees", 1.0, "ok"))
    ident = findings.Claim("i1", sc.PROJECT, "an identity", "derived", lambda r: findings.Evidence("agrees", 1.0, "ok"))
    findings.save(findings.assess([toy, ident], {}, context={"dataset": "toy", "profile": "paper", "seed": 2}),
                  "04_choosing_a_metric", gen / "findings")
    page = write_findings_page(gen).read_text(encoding="utf-8")
    assert "(1 claims of the papers: 1 agrees" in page
    assert "and 1 of the project's own checks, not counted as the papers' claims: 1 agrees" in page
    assert "## The project's own checks" in page and "split seed 2" in page


def test_tau_thresholds_decide_against_the_bootstrap_se():
    """A τ of full test sets is an estimate: with its bootstrap se (results[key + "_se"]) a τ of 0.85
    against 0.9 no longer disagrees when the se is 0.04 (the old check read it as exact)."""
    low = {"tau": tau_matrix(pairs={("AP", "nDCG"): 0.85}), "n_systems": 12}
    assert check("000", "map-ndcg-strong", low).verdict == "disagrees"
    wide = pd.DataFrame(0.04, index=METRICS, columns=METRICS)
    ev = check("000", "map-ndcg-strong", {**low, "tau_se": wide})
    assert ev.verdict == "inconclusive" and "0.850 ± 0.040 (bootstrap se over users)" in ev.detail
    narrow = pd.DataFrame(0.01, index=METRICS, columns=METRICS)
    assert check("000", "map-ndcg-strong", {**low, "tau_se": narrow}).verdict == "disagrees"
    assert check("000", "map-ndcg-strong", {**low, "tau_se": narrow.where(narrow < 0)}).verdict == "inconclusive"
    cut = papers.get("003").CLAIMS[0]
    tau = pd.DataFrame(np.ones((3, 3)), index=[5, 10, 100], columns=[5, 10, 100])
    tau.loc[5, 100] = tau.loc[100, 5] = 0.95
    se = pd.DataFrame(0.03, index=tau.index, columns=tau.columns)
    assert cut.check({"cutoff_tau": tau, "n_systems": 21}).verdict == "agrees"
    ev = cut.check({"cutoff_tau": tau, "cutoff_tau_se": se, "n_systems": 21})
    assert ev.verdict == "inconclusive" and "0.950 ± 0.030" in ev.detail


def with_replicates(r: Robustness, shift: dict, n: int = 10, spread: float = 0.2, seed: int = 1) -> Robustness:
    """``r`` with data-split replicates: every sample's τ on replicate k is its τ plus a per-(scenario,
    replicate) offset of sd ``spread`` (users that move every metric alike), a per-(scenario, replicate,
    metric) one of sd 0.01, and ``shift[scenario][metric]`` on half of the replicates and minus it on
    the other half (a difference that changes with the users)."""
    rng = np.random.default_rng(seed)
    rows = []
    s = r.samples[r.samples["size"] < 1.0]
    for k in range(n):
        off = {sc: rng.normal(0, spread) for sc in s["scenario"].unique()}
        sign = 1 if k % 2 else -1
        own = {key: rng.normal(0, 0.01) for key in set(zip(s["scenario"], s["metric"]))}
        d = s.assign(replicate=k, tau=s["tau"] + s["scenario"].map(off)
                     + np.array([own[key] for key in zip(s["scenario"], s["metric"])])
                     + sign * np.array([shift.get(sc, {}).get(m.split("@")[0], 0.0) for sc, m in zip(s["scenario"], s["metric"])]))
        rows.append(d[["scenario", "size", "sample", "replicate", "metric", "tau"]])
    return Robustness(r.samples, r.full, r.grids, r.tie_break, replicate_samples=pd.concat(rows, ignore_index=True))


def test_scenario_and_tier_checks_decide_against_the_split_replicates():
    """Issue 25 §1: the scenario checks (items-hurt-more, random-users-smoother, large-users-utility-best,
    ratings-half-above-09) read the data-split replicates; a difference that reverses between user
    groups no longer decides (the old checks saw the Monte Carlo noise only)."""
    scen = {"ratings": flat({m: 0.9 for m in METRICS}), "random-items": flat({m: 0.8 for m in METRICS}),
            "random-users": flat({m: 0.97 for m in METRICS})}
    steady = with_replicates(rob(scen), {}, spread=0.0)
    assert check("000", "items-hurt-more", {"robustness": steady}).verdict == "agrees"
    # P's items-vs-ratings gap changes sign between user groups: not decided
    torn = with_replicates(rob(scen), {"random-items": {"P": 0.3}}, spread=0.0)
    ev = check("000", "items-hurt-more", {"robustness": torn})
    assert ev.verdict == "inconclusive" and "P 0.800 vs 0.900 (within the noise" in ev.detail
    assert "data-split replicates" in ev.detail
    tiers = {"RR": 0.95, "ERR": 0.94, "infAP": 0.9, "bpref": 0.89}
    ok = with_replicates(rob({"large-users": flat(tiers)}), {}, spread=0.0)
    assert check("000", "large-users-utility-best", {"robustness": ok}).verdict == "agrees"
    torn = with_replicates(rob({"large-users": flat(tiers)}), {"large-users": {"RR": 0.5}}, spread=0.0)
    ev = check("000", "large-users-utility-best", {"robustness": torn})
    assert ev.verdict == "inconclusive" and "replicates" in ev.detail
    half = rob({"ratings": flat({m: 0.95 for m in METRICS}, (0.5, 0.2))})
    assert check("000", "ratings-half-above-09", {"robustness": half}).verdict == "agrees"
    torn = with_replicates(half, {"ratings": {"nDCG": 0.4}}, spread=0.0)
    assert check("000", "ratings-half-above-09", {"robustness": torn}).verdict == "inconclusive"


def test_dp_and_003_robustness_words_read_the_split_replicates():
    """dp_worst reads results["dp_replicates"] and least_robust_words the robustness replicates:
    a lead that reverses between user groups decides nothing (the old checks saw Monte Carlo only)."""
    dp = pd.Series({m: 1.0 for m in METRICS})
    dp["bpref"], dp["infAP"], dp["ERR"] = 5.0, 3.0, 9.0
    rng = np.random.default_rng(0)
    steady = pd.DataFrame({m: dp[m] + rng.normal(0, 0.1, 10) for m in METRICS})
    assert check("003", "dp-bpref-infap-low-003", {"dp": dp, "dp_replicates": steady}).verdict == "agrees"
    torn = steady.copy()
    torn["infAP"] = 1.0 + np.where(np.arange(10) % 2, 4.0, -3.0) + rng.normal(0, 0.1, 10)  # above P in half
    ev = check("003", "dp-bpref-infap-low-003", {"dp": dp, "dp_replicates": torn})
    assert ev.verdict == "inconclusive" and "per replicate" in ev.detail
    scen = {"ratings": flat({**{m: 0.95 for m in METRICS}, "bpref": 0.5, "infAP": 0.6, "RR": 0.7}),
            "popular-items": flat({**{m: 0.9 for m in METRICS}, "RR": 0.3})}
    ok = with_replicates(rob(scen), {}, spread=0.0)
    assert check("003", "mrr-least-robust-003", {"robustness": ok}).verdict == "agrees"
    torn = with_replicates(rob(scen), {"popular-items": {"RR": 0.9}}, spread=0.0)
    assert check("003", "mrr-least-robust-003", {"robustness": torn}).verdict == "inconclusive"
