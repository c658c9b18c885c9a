"""The metric reference generated from the registry (issue 19 §4)."""
import subprocess
import sys

import pytest

import recmetrics as rm
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.metrics import reference
from recmetrics.report import results
from recmetrics.report.reference_pages import write_reference_pages


def test_every_registered_metric_has_a_reference_entry():
    missing = [n for n in rm.metrics.names() if n not in reference.ENTRIES]
    assert missing == []
    stale = [n for n in reference.ENTRIES if n not in rm.metrics.names()]
    assert stale == []


def test_peer_names_are_claimed_only_with_a_test_that_checks_them():
    for name, e in reference.ENTRIES.items():
        if e.ir_measures or e.ranx or rm.metrics.get(name).trec_eval:
            assert e.proof, name


def test_describe_comes_from_the_registry():
    text = reference.describe("ndcg_cut")  # an alias resolves
    d = rm.metrics.get("nDCG")
    assert text.splitlines()[0] == f"nDCG — {d.description}"
    assert "gain='grade'" in text and "trec_eval ndcg_cut_k" in text and "[0, 1]" in text
    with pytest.raises(UnknownNameError):
        reference.describe("nope")


def test_pages_carry_formulas_in_math_and_the_chapters_numbers(tmp_path):
    results.save("dp", {"nDCG@100": 2.5, "P@100": float("nan")}, "movielens-small", directory=tmp_path / "results")
    results.save("axioms", {"ab-nDCG@10": {"Pri": "satisfied", "Deep": "violated"}}, directory=tmp_path / "results")
    loaded = results.load(tmp_path / "results")
    assert loaded["dp"]["movielens-small"] == {"nDCG": 2.5}  # NaN dropped, base names
    pages = write_reference_pages(tmp_path)
    assert [p.name.split("_", 2)[2] for p in pages] == [f"{f}.md" for f in reference.families()]
    ranking = pages[0].read_text()
    assert "| discriminative power (DP, lower = more discriminative), movielens-small | 2.5 |" in ranking
    for line in ranking.splitlines():
        if line.startswith("| formula |"):
            assert line.count("|") == 3 and line.count("$") == 2  # no bare | inside the math cell
    diversity = next(p for p in pages if p.name.endswith("diversity.md")).read_text()
    assert "| axioms (chapter 3) | Pri: satisfied, Deep: violated |" in diversity
    with pytest.raises(InputError, match="kind"):
        results.save("speed", {"P": 1.0}, directory=tmp_path)


def test_cli_describes_metrics_and_rejects_unknown_names_before_printing():
    ok = subprocess.run([sys.executable, "-m", "recmetrics.cli", "metrics", "AP", "ERR-IA"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("AP — ") and "ERR-IA — " in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "recmetrics.cli", "metrics", "AP", "nope"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and "nope" in bad.stderr
