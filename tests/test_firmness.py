"""Firmness (the chance another split reads a verdict the same) and the family rule's null rate, on
constructed checks whose answer is known in closed form."""
import math

import numpy as np
import pytest
from scipy import stats

from recmetrics.errors import InputError
from recmetrics.meta import findings as fd
from recmetrics.meta import firmness as fm


def _ev(verdict_and_detail):
    v, d = verdict_and_detail if isinstance(verdict_and_detail, tuple) else (verdict_and_detail, "")
    return fd.Evidence(v, None, d)


def _predicted(gap, se, factor, z=fd.NOISE_SE):
    """Closed form for one comparison that agrees: another split's gap ~ N(gap, 2 (factor·se)²) clears z·se."""
    return float(stats.norm.sf((z * se - gap) / (math.sqrt(2) * factor * se)))


@pytest.mark.parametrize("gap", [0.05, 0.07, 0.1])
@pytest.mark.parametrize("factor", [1.0, fm.SPLIT_FACTOR])
def test_firmness_of_one_comparison_matches_its_closed_form(gap, factor):
    se = 0.02
    check = lambda r: _ev(fd.holds(0.5 + gap, ">", 0.5, se))     # noqa: E731
    v = check({}).verdict
    assert v == "agrees"
    f, basis, n = fm.firmness(check, {}, v, key=f"g{gap}", draws=4000, factor=factor)
    expected = _predicted(gap, se, factor)
    assert basis == "simulated" and n >= fm.MIN_DRAWS
    assert abs(f - expected) < 4 * math.sqrt(expected * (1 - expected) / n) + 0.01, (f, expected, n)


def test_firmness_reads_the_split_replicates_paired():
    # two metrics that move together over 30 user groups: their paired difference is steady even
    # though each alone spreads widely; the firmness follows the paired se, not the sum of the two
    rng = np.random.default_rng(1)
    common = rng.normal(0, 0.05, 30)
    a, b = 0.60 + common + rng.normal(0, 0.004, 30), 0.585 + common + rng.normal(0, 0.004, 30)
    check = lambda r: _ev(fd.best_of({"P": a.mean(), "AP": b.mean()}, ["P"], replicates={"P": a, "AP": b}))  # noqa: E731
    assert check({}).verdict == "agrees"
    f, basis, _ = fm.firmness(check, {}, "agrees", key="paired")
    assert basis == "simulated" and f > 0.99
    # the same values read as independent estimates (each with its own spread) are not firm at all
    loose = lambda r: _ev(fd.best_of({"P": a.mean(), "AP": b.mean()}, ["P"],   # noqa: E731
                                     {"P": a.std(ddof=1) / math.sqrt(30), "AP": b.std(ddof=1) / math.sqrt(30)}))
    assert loose({}).verdict == "inconclusive"
    assert fm.firmness(loose, {}, "inconclusive", key="loose")[0] < 0.9


def test_exact_rows_are_firm_by_construction_and_say_so():
    table = fd.assess([fd.Claim("exact", "000", "c", "e", check=lambda r: _ev(fd.holds(0.95, ">=", 0.9))),
                       fd.Claim("nt", "000", "c", "e", check=lambda r: fd.not_testable("the set-up has no α = 0")),
                       fd.Claim("missing", "000", "c", "e", check=lambda r: r["absent"])], {})
    assert list(table.firmness) == [1.0, 1.0, 1.0]
    assert list(table.firmness_basis) == ["exact values", "not testable", "not computed"]


def test_an_inconclusive_resting_on_an_unknown_uncertainty_has_no_firmness_and_is_borderline():
    # τ = 1 in every bootstrap sample: an se of 0 from samples is unknown, so nothing is decided here,
    # while another split, whose τ spreads, may decide it; no replay can say how likely that is
    perfect = lambda r: _ev(fd.holds(1.0, ">=", 0.99, fd.SE(0.0, n=200)))     # noqa: E731
    assert perfect({}).verdict == "inconclusive"
    assert _nan_unknown(fm.firmness(perfect, {}, "inconclusive", key="tau1"))
    # entries tied at the Monte Carlo floor: a gate no redraw moves
    from recmetrics.papers.checks import dp_best
    results = {"dp": {"P@10": 0.001, "nDCG@10": 0.001, "AP@10": 0.2}, "dp_floor": 0.001,
               "dp_se": {"P@10": 0.0, "nDCG@10": 0.0, "AP@10": 0.01}}
    check = dp_best(["nDCG"])
    assert check(results).verdict == "inconclusive"
    table = fd.assess([fd.Claim("floor", "003", "c", "e", check=check)], results)
    assert _nan_unknown((table.firmness[0], table.firmness_basis[0], 0))
    assert fm.firm_label(table.firmness[0], table.firmness_basis[0]) == "borderline"
    assert "borderline (uncertainty unknown): another split may read this differently" in fd.to_markdown(table)
    # a perfect τ in every bootstrap resample agrees (the se of 0 is read as found), but says nothing of
    # another split: its firmness is unknown too
    from recmetrics.papers import parapar2021 as pp
    import pandas as pd
    tau = pd.DataFrame({"family": ["swap", "redundancy", "aspect"], "metric": ["ab-nDCG@10"] * 3,
                        "tau": [1.0, 1.0, 1.0], "n_systems": 51, "tau_se": [0.0, 0.0, 0.0]})
    row = fd.assess([c for c in pp.EXPERIMENT_CLAIMS if c.id == "exp1-ab-ndcg-perfect"], {"tau": tau})
    assert row.verdict[0] == "agrees" and row.firmness_basis[0] == fm.UNKNOWN
    # the same for a τ between two metrics' rankings (agreement_se of 0: the rankings never differed in
    # a resample) — 6 systems, τ = 1 within one swapped pair of 0.9: inconclusive, once "exact values"
    from recmetrics.papers.scenario_checks import all_at_least, tau_pair_at_least
    names = ["AP", "nDCG", "P"]
    tau = pd.DataFrame([[1.0, 1.0, 0.6], [1.0, 1.0, 0.6], [0.6, 0.6, 1.0]], index=names, columns=names)
    se = pd.DataFrame([[0.0, 0.0, 0.05], [0.0, 0.0, 0.05], [0.05, 0.05, 0.0]], index=names, columns=names)
    results = {"tau": tau, "tau_se": se, "n_systems": 6}
    table = fd.assess([fd.Claim("pair", "002", "c", "e", check=tau_pair_at_least("tau", "AP", "nDCG", 0.9)),
                       fd.Claim("apart", "002", "c", "e", check=tau_pair_at_least("tau", "AP", "P", 0.9)),
                       fd.Claim("all", "002", "c", "e", check=all_at_least("tau", 0.9, "τ"))], results)
    assert list(table.verdict) == ["inconclusive", "disagrees", "disagrees"]
    assert table.firmness_basis[0] == fm.UNKNOWN and table.firmness_basis[1] == "simulated"
    assert table.firmness_basis[2] == fm.UNKNOWN      # a gate counts for any verdict of the check
    # a decided verdict beside an unknown comparison keeps its simulated firmness
    mixed = lambda r: _ev(fd.holds_all([0.2, 1.0], ">=", 0.5, [0.01, fd.SE(0.0, n=200)]))   # noqa: E731
    assert mixed({}).verdict == "disagrees"
    f, basis, _ = fm.firmness(mixed, {}, "disagrees", key="mixed")
    assert basis == "simulated" and f == 1.0


def _nan_unknown(result):
    firm, basis, n = result
    return math.isnan(firm) and basis == fm.UNKNOWN and n == 0


def test_assess_reports_firmness_and_its_label():
    claims = [fd.Claim("near", "000", "c", "e", check=lambda r: _ev(fd.holds(0.545, ">", 0.5, 0.02))),
              fd.Claim("far", "000", "c", "e", check=lambda r: _ev(fd.holds(0.7, ">", 0.5, 0.02)))]
    table = fd.assess(claims, {})
    near, far = table.set_index("id").firmness
    assert 0.3 < near < 0.8 and far == 1.0
    assert [fm.firm_label(x) for x in (near, far, float("nan"))] == ["borderline", "firm", ""]
    assert fd.assess(claims, {}, draws=0).firmness.isna().all()


def test_firmness_is_reproducible():
    check = lambda r: _ev(fd.holds(0.545, ">", 0.5, 0.02))   # noqa: E731
    assert fm.firmness(check, {}, "agrees", key="x") == fm.firmness(check, {}, "agrees", key="x")


def test_nine_thresholds_as_one_family_keep_the_null_rate():
    """"τ > 0.9 at half the test set" for 9 metrics whose true τ is exactly 0.9 (se 0.033): read as
    nine separate 2-se verdicts joined by "any disagrees" it said disagrees in about 19 % of draws;
    as one family (Holm) at most the rule's level."""
    taus = {m: 0.9 for m in "P Recall F1 AP nDCG RR ERR bpref infAP".split()}

    def check(r):
        return _ev(fd.jointly(fd.holds(t, ">=", 0.9, 0.033) for t in taus.values()))

    rate, size = fm.null_rate(check, {}, key="nine", draws=2000)
    assert size == 9 and rate <= 0.05

    def separately(r):   # the old reading, for contrast: any part reversed at 2 se
        vs = [fd.holds(t, ">=", 0.9, 0.033) for t in taus.values()]
        return _ev(fd.Verdict("disagrees") if "disagrees" in vs else fd.Verdict("inconclusive"))

    old, _ = fm.null_rate(separately, {}, key="nine", draws=2000)
    assert 0.15 < old < 0.25


def test_group_claim_null_rate_within_the_level():
    vals = {m: 0.5 for m in ["P", "AP", "nDCG", "RR", "ERR"]}
    se = {m: 0.01 for m in vals}
    check = lambda r: _ev(fd.best_of(vals, ["P", "AP"], se))   # noqa: E731
    rate, size = fm.null_rate(check, {}, key="group", draws=2000)
    assert size == 6 and rate <= 0.05


def test_jointly_needs_the_parts_comparisons():
    with pytest.raises(InputError, match="without the comparisons"):
        fd.jointly(["agrees", fd.holds(0.95, ">", 0.9)])
    assert fd.jointly([fd.holds(0.95, ">", 0.9), fd.Verdict("inconclusive")]) == "inconclusive"
    assert fd.jointly([fd.holds(0.95, ">", 0.9), fd.holds(0.5, "<", 0.9)]) == "agrees"
    assert fd.jointly([fd.holds(0.95, ">", 0.9), fd.holds(0.95, "<", 0.9)]) == "disagrees"


def test_a_flipped_reading_decides_nothing_in_a_family():
    v, _ = fd.threshold_reading(0.93, ">=", 0.9, 0.05, name="'high' τ")
    assert v == "inconclusive" and all(math.isnan(c.se) for c in v.comparisons)
    assert fd.jointly([v, fd.holds(0.95, ">", 0.9)]) == "inconclusive"


@pytest.mark.parametrize("call, match", [
    (lambda: fd.best_of({"P": 0.9, "AP": 0.8, "RR": 0.5}, ["P", "P"]), "names 'P' twice"),
    (lambda: fd.best_of({"P": 0.52, "AP": 0.50, "nDCG": 0.49}, ["P"], {"P": 0.001}), "se covers 1 of the 3"),
    (lambda: fd.best_of({"P": 0.52, "AP": 0.50}, ["P"], replicates={"P": [0.5, 0.6, 0.55]}), "replicates covers 1"),
    (lambda: fd.best_of({"P": 0.52, "AP": 0.50}, ["ERR"]), "names 'ERR', which has no value"),
])
def test_rule_refuses_what_it_would_read_wrongly(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_printed_margin_names_effect_se_and_z():
    c = fd.compare(0.56, 0.50, 0.02, 0.0, label="P vs AP")
    assert c.text() == "P vs AP (+0.06 ± 0.02, z +3.0)"
    r = fd.compare(0.52, 0.50, reps_a=[0.60, 0.40, 0.62, 0.45, 0.63], reps_b=[0.5] * 5)
    assert r.text() == "0.52 vs 0.5 (+0.02 ± 0.0479 with the split, z +0.4)"
    assert fd.compare(0.5, 0.4).margin() == "+0.1, exact"


def test_an_open_choice_read_alike_under_every_reading_keeps_its_null_rate():
    """The readings of an open choice make the same comparisons on (nearly) the same data: replayed at
    the null they read the same draws, so a claim whose readings agree has the null rate of one."""
    from recmetrics.papers.choices import joint_check

    vals = {m: 0.5 for m in ["P", "AP", "nDCG", "RR", "ERR"]}
    results = {"v": vals, "se": {m: 0.01 for m in vals}}
    claim = fd.Claim("g", "000", "c", "e", check=lambda r: _ev(fd.best_of(r["v"], ["P", "AP"], r["se"])))
    one, size = fm.null_rate(claim.check, results, key="g", draws=2000)
    both, size2 = fm.null_rate(joint_check(claim, {"concat": results, "mean": results}), {}, key="g", draws=2000)
    assert size == size2 == 6 and one == both and 0.0 < one <= 0.05


def test_the_guide_states_the_split_factor_the_code_uses():
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "book" / "guide" / "conventions.md").read_text(encoding="utf-8")
    assert f"√2 · {fm.SPLIT_FACTOR:g} times its se" in guide


def test_a_replicates_redraw_moves_them_as_numpy_means_read_them():
    """A redraw of an estimate with replicates: the resampled mean's departure (numpy's means, the
    same floats through the shortcut), shared by every estimate of one size; NaN replicates skipped;
    replicates that all read the same, or fewer than two finite, are not moved."""
    import math

    from recmetrics.meta.firmness import Predictive

    rng = np.random.default_rng(3)
    for n in (2, 3, 5, 9, 20):
        for _ in range(20):
            reps = rng.normal(size=n)
            if n > 3:
                reps[rng.integers(n)] = np.nan
            redraw, twin = Predictive(np.random.default_rng(n)), np.random.default_rng(n)
            x, moved = redraw._one(0.5, None, reps)
            idx = twin.integers(0, n, size=n)
            ok = np.isfinite(reps)
            sample = reps[idx][np.isfinite(reps[idx])]
            k = int(ok.sum())
            depart = (float(sample.mean()) - float(reps[ok].mean())) * math.sqrt(k / (k - 1)) if sample.size else 0.0
            assert x == 0.5 + redraw.scale * depart
            assert np.array_equal(moved, reps + redraw.scale * depart, equal_nan=True)
    for flat in ([0.2, 0.2, 0.2], [0.2, np.nan, np.nan]):
        assert Predictive(np.random.default_rng(0))._one(0.5, None, flat) == (0.5, flat)


def test_replay_memo_keys_read_plain_sequences_as_their_values():
    """The memo's key of an argument: plain values as themselves, sequences by type and content
    (nested or not), other objects by identity."""
    from recmetrics.meta.firmness import _key

    obj = object()
    assert _key(("a", 1, 2.5, None, True)) == ("tuple", "a", 1, 2.5, None, True)
    assert _key(["a", ("b", [obj])]) == ("list", "a", ("tuple", "b", ("list", ("id", id(obj)))))
    assert _key({"k": [1, 2]}) == ("dict", ("k", ("list", 1, 2)))
    assert _key(["a"]) != _key(("a",)) and _key([np.float64(0.5)]) == ("list", 0.5)


def test_the_other_reading_of_the_geometric_mean_is_left_out_of_replays():
    """A claim decided under one reading of the geometric mean's zeros names the other reading's verdict
    in its detail; a replay (firmness, null rate) reads the verdict only, so the other reading is not
    computed there: its comparisons neither draw noise nor count as the verdict's."""
    from recmetrics.papers.agreement_checks import under_geometric_reading

    seen = []

    def inner(results):
        seen.append(results["geometric_reading"])
        c = fd.compare(results["a"], 0.0, 0.01)
        return fd.Evidence("agrees" if c.holds() else "inconclusive", results["a"], c.text())

    check = under_geometric_reading(inner)
    results = {"geometric_reading": "rec_eval", "a": 0.1,
               "other_reading_results": {"a": 0.001}}
    ev = check(results)
    assert ev.verdict == "agrees" and seen == ["rec_eval", "trec_eval"]
    assert "Under trec_eval's reading: inconclusive" in ev.detail
    seen.clear()
    firm, basis, n = fm.firmness(check, results, "agrees", key="x")
    assert basis == "simulated" and n >= fm.MIN_DRAWS and seen == ["rec_eval"] * n
    seen.clear()
    rate, size = fm.null_rate(check, results, key="x", draws=50)
    assert size == 1 and seen == ["rec_eval"] * 50
