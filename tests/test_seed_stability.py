"""Books built at several split seeds: the firmness figures tested against them, and the replicated
build's verdicts on the Findings page."""
import math

import pandas as pd
import pytest

from recmetrics.errors import InputError
from recmetrics.meta import findings as fd
from recmetrics.report import stability as st


def test_predicted_changes_is_the_mean_chance_of_a_different_verdict():
    assert st.predicted_changes([1.0, 0.5, 0.8], [1.0, 0.7, 0.8]) == pytest.approx(0 + 0.4 + 0.2)
    with pytest.raises(InputError, match="no firmness"):
        st.predicted_changes([1.0, math.nan], [1.0, 1.0])


def test_honesty_counts_firm_rows_kept_and_changes_against_the_prediction():
    v = pd.DataFrame({"6": ["agrees", "agrees", "inconclusive", "disagrees"],
                      "7": ["agrees", "inconclusive", "inconclusive", "disagrees"],
                      "8": ["agrees", "agrees", "agrees", "disagrees"]})
    f = pd.DataFrame({"6": [1.0, 0.6, 0.5, 0.95], "7": [1.0, 0.5, 0.7, 0.92], "8": [0.99, 0.55, 0.4, 1.0]})
    h = st.honesty(v, f)
    # firm rows (≥ 0.9) per seed: rows a, d under each seed; each reads the same under every other seed
    assert h["firm_kept"] == 1.0 and h["firm_rows"] == 2 * 6
    assert h["firm_share"] == pytest.approx(0.5)
    obs = {p["seeds"]: p["observed"] for p in h["pairs"]}
    assert obs == {("6", "7"): 1, ("6", "8"): 1, ("7", "8"): 2}
    pred = {p["seeds"]: p["predicted"] for p in h["pairs"]}
    assert pred[("6", "7")] == pytest.approx(sum(1 - (a + b) / 2 for a, b in zip(f["6"], f["7"])))
    assert h["ratio"] == pytest.approx(4 / sum(pred.values())) and h["opposite"] == 0
    assert h["unknown"] == 0


def test_rows_of_unknown_firmness_predict_nothing_and_are_counted_apart():
    v = pd.DataFrame({"6": ["agrees", "inconclusive", "inconclusive"],
                      "7": ["agrees", "agrees", "inconclusive"]})
    f = pd.DataFrame({"6": [1.0, math.nan, 0.8], "7": [0.95, 0.97, 0.6]})
    h = st.honesty(v, f)
    assert h["unknown"] == 1 and h["unknown_changed"] == 1
    assert h["observed"] == 0 and h["predicted"] == pytest.approx(1 - 0.975 + 1 - 0.7)
    # an unknown firmness is not firm: rows firm are a (both seeds) and b under seed 7 only
    assert h["firm_share"] == pytest.approx((1 / 3 + 2 / 3) / 2) and h["firm_rows"] == 3


@pytest.mark.parametrize("seeds, overrides, match", [
    ([0], None, "at least two distinct"), ([0, 0], None, "at least two distinct"), ([0, -1], None, "integers >= 0"),
    ("0,1", None, "a list of split seeds"), ([0, 1.5], None, "integers >= 0"), ([0, 1], {"seed": 3}, "once"),
])
def test_check_seeds_refuses_what_cannot_be_replicated(seeds, overrides, match):
    with pytest.raises(InputError, match=match):
        st.check_seeds(seeds, overrides)


def test_replicated_verdict():
    assert st.replicated_verdict(["agrees", "agrees"]) == "agrees"
    assert st.replicated_verdict(["inconclusive", "inconclusive"]) == "inconclusive"
    assert st.replicated_verdict(["agrees", "inconclusive", "agrees"]) == "borderline"


def test_findings_page_shows_every_seed_and_the_replicated_verdict(tmp_path):
    from recmetrics.report.findings_page import write_findings_page

    def claims(res):
        return [fd.Claim(c, "000", f"claim {c}", "x", check=lambda r, c=c: fd.Evidence(r[c], None, "d")) for c in res]

    generated = tmp_path / "generated"
    per_seed = {"0": dict(a="agrees", b="inconclusive"), "1": dict(a="agrees", b="agrees"),
                "2": dict(a="agrees", b="inconclusive")}
    fd.save(fd.assess(claims(per_seed["0"]), per_seed["0"], {"seed": 0}), "06_x", generated / "findings")
    for s in ("1", "2"):
        fd.save(fd.assess(claims(per_seed[s]), per_seed[s], {"seed": int(s)}), "06_x",
                generated / "replicated" / f"seed-{s}")
    page = write_findings_page(generated).read_text(encoding="utf-8")
    assert "replicated over split seeds 0, 1, 2: 1 agrees, 1 borderline" in page
    assert "by split seed — 0: inconclusive, 1: agrees, 2: inconclusive; replicated: <strong>borderline</strong>" in page
    assert "firm 1.00" in page or "firm exact values" in page


def test_replicated_build_arguments_are_refused_before_anything_runs(capsys, monkeypatch):
    from recmetrics import cli

    def refuse(*a, **k):
        raise AssertionError("a chapter was executed before the arguments were checked")

    monkeypatch.setattr("recmetrics.report.book.execute_plan", refuse)
    for args, words in ((["--seeds", "0"], "at least two distinct"), (["--seeds", "0", "0"], "at least two distinct"),
                        (["--seeds", "0", "1", "-p", "seed=3"], "give the split seed once"),
                        (["--seeds", "0", "1", "--no-execute"], "needs the chapters executed"),
                        (["--seeds", "0", "1", "--qrels", "q", "--runs", "r"], "--seeds replicates")):
        rc = cli.main(["report", *args])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and words in err and len(err.splitlines()) == 1, (args, err)
