"""The findings mechanism: claims as data, verdicts computed, saved and gathered."""
import pytest

from recmetrics.errors import InputError
from recmetrics.meta import findings as fd


def _claims():
    return [
        fd.Claim("a-gt-b", "000", "A beats B", "Table 3",
                 check=lambda r: fd.Evidence(fd.holds(r["a"], ">", r["b"]), r["a"] - r["b"], f"A−B = {r['a'] - r['b']:.3f}")),
        fd.Claim("needs-c", "003", "C is large", "Fig. 1",
                 check=lambda r: fd.Evidence(fd.holds(r["c"], ">", 1), r["c"], "c")),
    ]


def test_assess_computes_verdicts_and_marks_missing_results_inconclusive(tmp_path):
    table = fd.assess(_claims(), {"a": 2.0, "b": 3.0}, context={"dataset": "x"})
    assert list(table.verdict) == ["disagrees", "inconclusive"]
    assert table.value.iloc[0] == pytest.approx(-1.0)
    assert "'c'" in table.our_evidence.iloc[1]
    assert set(table.dataset) == {"x"}
    fd.save(table, "05_demo", tmp_path)
    gathered = fd.collect(tmp_path)
    assert list(gathered.chapter) == ["05_demo", "05_demo"]
    assert "**disagrees**" in fd.to_markdown(table)


def test_bad_claims_are_errors():
    with pytest.raises(InputError, match="twice"):
        fd.assess(_claims() + _claims()[:1], {"a": 1, "b": 0, "c": 2})
    with pytest.raises(InputError, match="verdict"):
        fd.Evidence("maybe", 1.0, "x")
    bad = fd.Claim("x", "000", "x", "x", check=lambda r: 1.0)
    with pytest.raises(InputError, match="expected Evidence"):
        fd.assess([bad], {})


def test_order_never_decides_on_ties_or_float_noise():
    assert fd.order(0.5, 0.4) == 1 and fd.order(0.4, 0.5) == -1
    assert fd.order(0.5, 0.5) == 0
    assert fd.order(0.5, 0.5 + 2.2e-16) == 0          # Exp. 3's "lower β is more robust" at 2.2e-16
    assert fd.order(0.50, 0.48, 0.01, 0.01) == 0       # 0.02 < 2·sqrt(2)·0.01
    assert fd.order(0.50, 0.40, 0.01, 0.01) == 1
    assert fd.order(float("nan"), 0.1) == 0


def test_holds_threshold_claims_against_noise():
    assert fd.holds(0.7999999999999998, ">=", 0.8) == "agrees"   # exact value at the threshold
    assert fd.holds(0.79, ">=", 0.8) == "disagrees"
    assert fd.holds(0.79, ">=", 0.8, se=0.01) == "inconclusive"
    assert fd.holds(0.8 + 1e-12, ">", 0.8) == "inconclusive"
    assert fd.holds(0.2, "<", 0.3) == "agrees" and fd.holds(0.4, "<=", 0.3) == "disagrees"
    with pytest.raises(InputError, match="relation"):
        fd.holds(1, "=", 1)


def test_holds_is_stable_under_tiny_perturbations():
    for value in (0.8, 0.5):
        verdicts = {fd.holds(value + e, ">=", 0.8) for e in (-1e-12, 0.0, 1e-12)}
        assert len(verdicts) == 1


def test_best_of_compares_with_every_rival_and_tests_groups_as_worded():
    vals = {"P": 0.90, "F1": 0.89, "nDCG": 0.88, "AP": 0.70, "RR": 0.50}
    assert fd.best_of(vals, ["P"])[0] == "agrees"          # exact values, no noise
    assert fd.best_of(vals, ["P"], {k: 0.01 for k in vals})[0] == "inconclusive"
    assert fd.best_of(vals, ["P", "F1", "nDCG"], {k: 0.01 for k in vals})[0] == "agrees"
    assert fd.best_of(vals, ["AP"])[0] == "disagrees"
    assert fd.best_of(vals, ["RR"], higher=False)[0] == "agrees"
    assert fd.best_of({"P": 1.0, "AP": 1.0}, ["P"])[0] == "inconclusive"  # exact tie
    with pytest.raises(KeyError):
        fd.best_of(vals, ["ERR"])


def test_not_testable_is_a_verdict():
    ev = fd.not_testable("F1 = P · 2n/(n+|R_u|) per user: GF1 ranks as GP")
    assert ev.verdict == "not testable"
    table = fd.assess([fd.Claim("x", "000", "x", "x", check=lambda r: ev)], {})
    assert list(table.verdict) == ["not testable"]


def test_best_of_takes_any_labels():
    assert fd.best_of({5: 0.9, 100: 0.5}, [5]) == ("agrees", "5 beat(s) every other entry beyond 2 standard errors")


def test_an_unknown_uncertainty_decides_nothing():
    nan = float("nan")
    assert fd.holds(0.80, ">=", 0.8, se=nan) == "inconclusive"
    assert fd.order(0.801, 0.8, nan, nan) == 0 and fd.order(0.9, 0.1, None, 0.0) == 1
    assert fd.best_of({"P": 0.801, "AP": 0.8}, ["P"], {"P": nan, "AP": nan})[0] == "inconclusive"
