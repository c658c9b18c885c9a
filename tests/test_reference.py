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


def test_every_equals_claim_comes_from_a_parity_check_a_test_consumes():
    """The "equals" row is generated from rm.metrics.peers.PEER_CHECKS only; each check names a test
    function that exists and reads the table (so a claim without a test cannot appear)."""
    from pathlib import Path

    from recmetrics.metrics import peers

    root = Path(__file__).resolve().parents[1]
    for c in peers.PEER_CHECKS:
        assert c.peer in peers.PEERS and c.metric in rm.metrics.names(), c
        path, func = c.test.split("::")
        text = (root / path).read_text()
        assert f"def {func}(" in text and "peers." in text, c
        rm.metrics.parse(c.ours.format(k=1))  # the spec parses (k: a cut-off, a recall level or a multiple of R)
    for name in rm.metrics.names():
        row = dict(reference._rows(name))["equals"]
        made = peers.claims(name)
        assert (row == "—") == (not made), name
        for claim in made:
            assert claim in row, (name, claim)
        for peer in peers.PEERS:  # no peer named without a check
            assert (f"{peer} " in row) == bool(peers.checks(peer, name)), (name, peer)


def test_rbp_default_is_not_claimed_equal_to_ranx():
    """Default RBP scales grades by the user's top grade; ranx's rbp.p uses the raw grade."""
    row = dict(reference._rows("RBP"))["equals"]
    assert "ranx rbp.8 = RBP(p=0.8,gain='grade')" in row and "ranx rbp.p," not in row and "ranx rbp.p " not in row


def test_ir_measures_count_names_parse():
    for text, name in (("NumRet", "num_ret"), ("NumRel", "num_rel"), ("NumRelRet", "num_rel_ret")):
        assert rm.metrics.parse(text).name == name


def test_efd_formula_and_aplt_citation_match_the_code():
    import re

    from recmetrics.metrics import popularity

    assert r"p(L_u[i]|\text{seen})" in reference.ENTRIES["EFD"].formula  # p(i|seen), as the code and RankSys
    assert r"p(\text{seen}|" not in reference.ENTRIES["EFD"].formula
    doc_year = re.search(r"\*\*APLT\*\*.*?Abdollahpouri et\s+al\. (\d{4})", popularity.__doc__, re.S).group(1)
    assert doc_year in reference.ENTRIES["APLT"].citation


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


def test_saved_results_keep_full_names_when_base_names_would_collide(tmp_path):
    results.save("dp", {"nDCG@10": 0.9, "nDCG@100": 0.1, "infAP": 0.5}, "x", directory=tmp_path)
    assert results.load(tmp_path)["dp"]["x"] == {"nDCG@10": 0.9, "nDCG@100": 0.1, "infAP": 0.5}
