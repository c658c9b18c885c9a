"""The findings mechanism: claims as data, verdicts computed, saved and gathered."""
import pytest

from recmetrics.errors import InputError
from recmetrics.meta import findings as fd


def _claims():
    return [
        fd.Claim("a-gt-b", "000", "A beats B", "Table 3",
                 check=lambda r: fd.agrees_if(r["a"] > r["b"], r["a"] - r["b"], f"A−B = {r['a'] - r['b']:.3f}")),
        fd.Claim("needs-c", "003", "C is large", "Fig. 1",
                 check=lambda r: fd.agrees_if(r["c"] > 1, r["c"], "c")),
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
