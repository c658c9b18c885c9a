"""The report: notebook smoke run, book build, and the built book rendering offline in Chromium.

The book is built once per run (conftest's ``main_book``: into a temporary copy of ``book/``, with
the ``quick`` profile), and tests of every test process read it at once. Headless Chromium then
opens the chapter from disk (``file://``) with DNS resolution disabled (``--host-resolver-rules``),
driven through the DevTools protocol over a pipe, and the test checks that no request left the
machine and that charts, formulas and widgets rendered and react to input. A screenshot is kept
in the test's temporary folder (``chapter.png``).
"""
from __future__ import annotations

import base64
import html
import json
import math
import pickle
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest

from browser import DevTools, chromium, render_problems
from published import files_with_paths
from recmetrics import report
from recmetrics.errors import InputError

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "notebooks" / "01_dataset_overview.ipynb"
CHAPTER = "generated/01_dataset_overview.html"
DATASET = "movielens-small"
CDN_WORDS = ("https://cdn", "unpkg", "jsdelivr", "cdnjs")


# ----------------------------------------------------------------------------------- helpers
def _outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield cell, cell.get("outputs", [])


# ------------------------------------------------------------------------------------- tests
def test_import_is_cheap():
    code = ("import sys, recmetrics.report, recmetrics.viz; "
            "heavy = [m for m in ('papermill', 'altair', 'jupyter_book', 'nbformat', 'sphinx', 'pandas') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_profiles_and_parameters():
    declared = ["dataset", "seed", "cutoffs", "test_size"]
    quick = report.notebook_parameters("quick", "movielens-small", NOTEBOOK, declared)
    paper = report.notebook_parameters("paper", "movielens-small", NOTEBOOK, declared)
    assert set(quick) == set(paper) == set(declared)
    assert quick["dataset"] == paper["dataset"] == "movielens-small"
    assert max(quick["cutoffs"]) < max(paper["cutoffs"]) == 100
    assert "profile" not in quick  # not declared by this notebook -> not injected
    # parameters read from the notebook itself (it records the profile with its findings)
    assert set(report.notebook_parameters("quick", "x", NOTEBOOK)) == set(declared) | {"profile"}
    with pytest.raises(ValueError, match="unknown report profile 'quik'.*quick"):
        report.notebook_parameters("quik", "movielens-small", NOTEBOOK, declared)
    with pytest.raises(ValueError, match="unknown report profile"):
        report.build(profile="nope")


def test_altair_html_is_rewritten_to_local_bundle():
    import altair as alt
    import nbformat
    import pandas as pd

    chart = alt.Chart(pd.DataFrame({"a": [1, 2]})).mark_bar().encode(x="a", tooltip=["a"])
    with alt.renderers.enable("html"):
        html_bundle = chart._repr_mimebundle_()
    html_bundle = html_bundle[0] if isinstance(html_bundle, tuple) else html_bundle
    assert "jsdelivr" in html_bundle["text/html"]  # Altair's own loader: CDN
    spec = chart.to_dict()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("c", outputs=[
        nbformat.v4.new_output("display_data", data=dict(html_bundle)),
        nbformat.v4.new_output("execute_result", data={"application/vnd.vegalite.v6+json": spec,
                                                        "text/plain": "<Chart>"}, execution_count=1),
        nbformat.v4.new_output("display_data", data={"text/html": "<b>not a chart</b>"}),
    ])])
    assert report.offline_outputs(nb) == 2
    outs = nb.cells[0].outputs
    for out in outs[:2]:
        html = out.data["text/html"]
        assert "window.vegaEmbed" in html and not any(w in html for w in CDN_WORDS)
        payload = re.search(r"\}\)\((\{.*\}), \{", html, re.S).group(1)
        assert json.loads(payload)["datasets"] == spec["datasets"]
    assert outs[1].data["application/vnd.vegalite.v6+json"] == spec  # JupyterLab can still render it
    assert outs[2].data["text/html"] == "<b>not a chart</b>"
    # a script-closing sequence inside the data cannot end the inline script
    html = report.embed_html({"data": {"values": [{"a": "</script><script>alert(1)"}]}})
    assert html.count("</script>") == 1


def test_executed_parameters_are_shown_under_the_title(tmp_path):
    import nbformat

    values = report.executed_parameters(NOTEBOOK, {"dataset": "insteval"})
    import papermill

    declared = papermill.inspect_notebook(str(NOTEBOOK))  # every name of its parameters cell
    assert set(values) == set(declared) and values["dataset"] == "insteval"
    assert set(report.notebook_parameters("quick", "x", NOTEBOOK)) <= set(values)
    assert isinstance(values["cutoffs"], list)  # the notebook's literal default, evaluated
    with_profile = report.executed_parameters(NOTEBOOK, {"dataset": "insteval", "profile": "paper"}, profile="paper")
    assert list(with_profile)[0] == "profile" and with_profile["profile"] == "paper"
    assert "| `profile` | `'paper'` |" in report.parameters_markdown(with_profile)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    n = len(nb.cells)
    report.show_parameters(nb, values)
    report.show_parameters(nb, values)  # idempotent: one table, replaced
    assert len(nb.cells) == n + 1
    shown = [c for c in nb.cells if "recmetrics-parameters" in c.metadata.get("tags", [])]
    assert nb.cells.index(shown[0]) == 1 and "| `dataset` | `'insteval'` |" in shown[0].source
    # shown once: the code cells holding the same values (papermill's and the notebook's) are removed
    injected = nbformat.v4.new_code_cell("dataset = 'insteval'", metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(3, injected)
    report.show_parameters(nb, values)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags):
            assert "remove-cell" in tags and tags.count("remove-cell") == 1, tags


def _executed_chapter(path: Path, title: str, params: dict, sections: dict, table_md: str) -> None:
    """A minimal executed chapter: title, the parameters table, labelled sections, a claims table output."""
    import nbformat

    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nText.")]
    tagged = nbformat.v4.new_markdown_cell(report.parameters_markdown(params))
    tagged.metadata["tags"] = ["recmetrics-parameters"]
    cells.append(tagged)
    for label, heading in sections.items():
        cells.append(nbformat.v4.new_markdown_cell(f"({label})=\n## {heading}\n\nMore text."))
    code = nbformat.v4.new_code_cell("findings.to_markdown(table)", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/markdown": table_md, "text/plain": "<IPython.core.display.Markdown object>"},
        execution_count=1)])
    cells.append(code)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))


def test_findings_page_groups_links_counts_and_warns(tmp_path):
    """The Findings page: grouped by paper, each row linked to where its chapter computes it, the
    profile and dataset of every row (from the chapter's parameters when the row lacks them), a
    warning on rows of a small profile, counts and check boxes for all four verdicts."""
    from recmetrics.meta import findings

    def check(r):
        if r["x"] is None:
            return findings.not_testable("no such effect here")
        return findings.Evidence(findings.holds(r["x"], ">", r["y"]), r["x"], f"x = {r['x']} | `a|b`")

    claims = [findings.Claim("c1", "000", "X beats Y", "Table 3", check=check),
              findings.Claim("c2", "003", "Z ties", "Fig. 2", check=check)]
    # chapter 05: its rows carry no profile (as chapters 05-07 today); the chapter's parameters do
    t5 = findings.assess(claims, {"x": 2.0, "y": 1.0}, {"dataset": "d", "systems": 6, "folds": 2,
                                                         "samples": 5, "permutations": 2000, "seed": 1,
                                                         "replicates": 10})
    findings.save(t5, "05_a", tmp_path / "findings", section={"c1": "sec-a"})
    _executed_chapter(tmp_path / "05_a.ipynb", "Chapter A", {"profile": "quick", "dataset": "d", "folds": 2},
                      {"sec-a": "Where A computes c1", "sec-b": "The claims"}, findings.to_markdown(t5))
    t6 = findings.assess(claims, {"x": None, "y": 1.0}, {"dataset": "e", "profile": "paper"})
    findings.save(t6, "06_b", tmp_path / "findings")
    _executed_chapter(tmp_path / "06_b.ipynb", "Chapter B", {"profile": "paper", "dataset": "e"},
                      {"sec-c": "Checked"}, findings.to_markdown(t6))
    with pytest.raises(InputError, match="not in the table"):
        findings.save(t6, "06_b", tmp_path / "elsewhere", section={"nope": "sec-c"})
    with pytest.raises(InputError, match="MyST target label"):
        findings.save(t6, "06_b", tmp_path / "elsewhere", section="has space")

    page = report.write_findings_page(tmp_path)
    text = page.read_text(encoding="utf-8")
    # grouped by paper, in id order, with the papers' citations
    assert text.index("## 000: Valcarce et al., IRJ 2020") < text.index("## 003: Valcarce et al., RecSys 2018")
    assert "4 claims of the papers: 2 agrees, 0 disagrees, 0 inconclusive, 2 not testable" in text
    # a check box and a count for each of the four verdicts
    for verdict, n in (("agrees", 2), ("disagrees", 0), ("inconclusive", 0), ("not testable", 2)):
        assert (f'data-verdict="{verdict}" checked> {verdict} <span class="rm-findings-n">{n}</span>') in text
    rows = re.findall(r"<tr data-verdict=.*?</tr>", text)
    assert len(rows) == 4
    c1_a, c1_b = [r for r in rows if "<code>c1</code>" in r]
    c2_a, c2_b = [r for r in rows if "<code>c2</code>" in r]
    # links: the section the chapter named, else the claim's row in the chapter's claims table
    assert 'href="05_a.html#sec-a"' in c1_a and "§ Where A computes c1" in c1_a
    assert 'href="05_a.html#claim-c2"' in c2_a and "§ The claims" in c2_a
    assert 'href="06_b.html#claim-c1"' in c1_b and '<span id="claim-c1"></span>' in findings.to_markdown(t6)
    # profile, dataset and set-up stated once per chapter group (chapter 05's rows take the profile
    # from its parameters); the small profile is flagged on its group, not on the paper profile's
    groups = dict(re.findall(r'<tbody class="rm-findings-group" data-chapter="([^"]+)">(.*?)</tbody>', text))
    head_a = re.search(r'<tr class="rm-findings-group-head">.*?</tr>', groups["05_a"]).group(0)
    head_b = re.search(r'<tr class="rm-findings-group-head">.*?</tr>', groups["06_b"]).group(0)
    assert "profile <code>quick</code>" in head_a and "dataset <code>d</code>" in head_a
    assert "6 systems, 2 folds, 5 samples, 2,000 permutations, 10 replicates, split seed 1" in head_a
    assert "profile <code>paper</code>" in head_b and "dataset <code>e</code>" in head_b
    # once per (paper, chapter) group, plus once in the small-profile warning's list of set-ups
    n_groups_a = text.count('<tbody class="rm-findings-group" data-chapter="05_a">')
    assert n_groups_a == 2
    assert text.count("6 systems, 2 folds, 5 samples, 2,000 permutations") == n_groups_a + 1
    assert "profile <code>nan</code>" not in text and "unknown" not in text
    assert "rm-small-profile" in head_a and "rm-small-profile" not in head_b
    assert 'class="rm-small"' in c1_a and 'class="rm-small"' not in c1_b
    assert ":::{warning}\n2 of the 4 verdicts were computed with the `quick` profile" in text
    # cell text is escaped, code spans kept; the filter is inline JavaScript, nothing remote
    assert "x = 2.0 | <code>a|b</code>" in c1_a
    assert "<script>" in text and "src=" not in text and "http" not in text
    # the front page's glance: the verdicts per paper and the chapters testing them, computed
    from recmetrics.report.findings_page import findings_glance

    glance = findings_glance(tmp_path)
    assert ('| Valcarce et al., IRJ 2020 (2) | 1 | 0 | 0 | 1 | 2 / 0 | [5](generated/05_a "Chapter A"), '
            '[6](generated/06_b "Chapter B") |') in glance.splitlines()   # both firm: exact, not testable
    assert not re.search(r"\b00[0-4]\b", glance)        # papers are named, not numbered
    assert "all 4 claims" in glance and "provisional" in glance
    for f in (tmp_path / "findings").glob("*.json"):
        f.unlink()
    assert report.write_findings_page(tmp_path) is None and not page.exists()
    assert findings_glance(tmp_path) == "No chapter of this copy tested a claim of the papers."


def test_findings_page_states_deviations_once_per_group(tmp_path):
    """The deviations a chapter's rows share are stated once, in the chapter's group head; a row
    adds only its own (an item holding "; " inside brackets stays whole); "1 fold", not "1 folds"."""
    from recmetrics.meta import findings
    from recmetrics.report.findings_page import split_deviations

    def check(r):
        return findings.Evidence(findings.holds(r["x"], ">", 1.0), r["x"], f"x = {r['x']}")

    shared = ["dataset: movielens-small (the paper's: ML-1M)",
              "systems: 6 of the paper's 21 (missing: A, B; not in the paper: C)"]
    claims = [findings.Claim(f"c{i}", "000", f"claim {i}", "Table 3", check=check) for i in range(5)]
    t = findings.assess(claims[:4], {"x": 2.0}, {"dataset": "movielens-small", "folds": 1}, deviations=shared)
    t = pd.concat([t, findings.assess(claims[4:], {"x": 2.0}, {"dataset": "movielens-small", "folds": 1},
                                      deviations=shared + ["cut-offs: [10] (the paper: [5, 10])"])])
    findings.save(t, "05_a", tmp_path / "findings")
    _executed_chapter(tmp_path / "05_a.ipynb", "Chapter A", {"profile": "paper", "dataset": "movielens-small"},
                      {}, findings.to_markdown(t))
    text = report.write_findings_page(tmp_path).read_text(encoding="utf-8")
    assert split_deviations(t.deviations.iloc[0]) == shared
    for item in shared:
        assert text.count(html.escape(item)) == 1, item
    assert text.count("cut-offs: [10] (the paper: [5, 10])") == 1
    rows = re.findall(r"<tr data-verdict=.*?</tr>", text)
    assert len(rows) == 5 and ["Also differs" in r for r in rows] == [False] * 4 + [True]
    assert "1 fold" in text and "1 folds" not in text


def test_metric_reference_values_name_their_context(tmp_path):
    """A DP or robustness value on the metric reference says what it was computed with: cut-off,
    systems, folds, pooling, the profile of the chapter that computed it, and that chapter."""
    from recmetrics.report import results
    from recmetrics.report.reference_pages import write_reference_pages

    _executed_chapter(tmp_path / "06_x.ipynb", "Comparing metrics", {"profile": "quick", "dataset": "d"}, {}, "")
    results.save("dp", {"P@100": 0.66, "Recall@100": 0.01}, "d", directory=tmp_path / "results",
                 context={"chapter": "06_x", "cutoff": 100, "systems": 6, "folds": 1, "pool": "concat",
                          "permutations": 2000})
    results.save("robustness", {"P@100": 0.9}, "d", directory=tmp_path / "results")   # no context: as before
    pages = write_reference_pages(tmp_path)
    text = next(p for p in pages if p.name.endswith("_ranking.md")).read_text(encoding="utf-8")
    where = ("cut-off 100, 6 systems, 1 fold, 2,000 permutations, `concat` pooling, quick profile, "
             "[Comparing metrics](06_x)")
    assert f"| discriminative power (DP, lower = more discriminative), d ({where}) | 0.66 |" in text
    assert f"d ({where}) | 0.01 |" in text
    assert "| robustness (mean τ over the reduced sizes), d | 0.9 |" in text


def test_browser_check_flags_a_chart_scaled_below_readable_size():
    """The page check fails on a chart the column scales below MIN_CHART_SCALE of its drawn size
    (its labels unreadable), not only on one that overflows the column."""
    import browser

    state = {"prose": "", "outputs": [], "cut": [], "wideWidgets": [], "wideTables": [], "math": 0, "typeset": 0,
             "mathErrors": 0, "scaled": [[0, 1600, 760, 0.475]]}
    assert list(browser.page_problems(state)) == ["chart scaled below readable size ([chart, drawn px, shown px, scale])"]
    assert browser.page_problems({**state, "scaled": []}) == {}
    assert "scale < %s" in browser.CLEAN_PROBE and 0.5 < browser.MIN_CHART_SCALE < 1


def test_markdown_tables_escape_their_cells():
    """Chapter tables printed as Markdown render as tables whatever their cells hold."""
    import pandas as pd
    from recmetrics import viz
    from recmetrics.meta import findings

    table = viz.markdown_table(pd.DataFrame({"a": ["p(i|C) for $2", "`x|y` <b>"], "b": [None, float("nan")]}))
    assert table.splitlines() == ["| a | b |", "|---|---|", "| p(i\\|C) for \\$2 |  |", "| `x\\|y` &lt;b> |  |"]
    t = pd.DataFrame({"id": ["c", "c"], "claim": ["A", "A"], "paper": ["000"] * 2, "paper_evidence": ["e"] * 2,
                      "our_evidence": ["o", "o"], "verdict": ["agrees", "not testable"],
                      "deviations": ["", "2 folds, not 5"]})
    md = findings.to_markdown(t)
    assert '<span id="claim-c"></span>A' in md and '<span id="claim-c-2"></span>A' in md
    assert md.count("Set-up differs from the paper: 2 folds, not 5") == 1 and "**not testable**" in md


def test_notebook_runs_with_quick_profile(tmp_path):
    """Smoke run of the notebook under papermill with the quick profile's (small) parameters."""
    import nbformat

    params = report.notebook_parameters("quick", DATASET, NOTEBOOK)
    beside_source = NOTEBOOK.parent / "findings" / f"{NOTEBOOK.stem}.json"
    before = beside_source.stat().st_mtime_ns if beside_source.exists() else None
    t0 = time.perf_counter()
    out = report.execute_notebook(NOTEBOOK, tmp_path / NOTEBOOK.name, params)
    elapsed = time.perf_counter() - t0
    # the kernel works where the output was asked to go: the chapter's findings are written there,
    # and nothing beside the notebook it was read from
    assert (tmp_path / "findings" / f"{NOTEBOOK.stem}.json").is_file()
    assert (beside_source.stat().st_mtime_ns if beside_source.exists() else None) == before
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "cutoffs = [5, 10, 20]" in injected[0].source
    errors = [o for _, outs in _outputs(nb) for o in outs if o.output_type == "error"]
    assert not errors
    text = json.dumps([o for _, outs in _outputs(nb) for o in outs])
    assert "Traceback" not in text and "MaxRowsError" not in text
    charts = [o for _, outs in _outputs(nb) for o in outs if "window.vegaEmbed" in o.get("data", {}).get("text/html", "")]
    assert len(charts) == 3, "rating distribution, long tail, metric lines"
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    models = {m["model_name"] for m in state.values()}
    assert {"DropdownModel", "StackModel", "LinkModel", "HTMLModel"} <= models
    assert elapsed < 120


def test_book_builds_with_vendored_assets(built_book):
    site: Path = built_book["site"]
    chapter = site / CHAPTER
    assert built_book["index"].is_file() and chapter.is_file()
    for rel in (report.VEGA_BUNDLE, report.REQUIRE_JS, report.WIDGETS_JS, report.MATHJAX_JS):
        assert (site / "_static" / rel).is_file(), rel
    # MathJax's CHTML fonts and the widget manager's icon fonts come along
    assert list((site / "_static/vendor/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
    assert list((site / "_static/vendor/html-manager").glob("*.woff2"))
    html = chapter.read_text(encoding="utf-8")
    tags = re.findall(r"<(?:script|link)\b[^>]*>", html)
    for tag in tags:
        for attr in re.findall(r"\b(?:src|href)\s*=\s*[\"']([^\"']+)", tag):
            assert not any(w in attr for w in CDN_WORDS), tag
            assert not re.match(r"^(https?:)?//", attr), tag
    assert report.external_assets(site) == {}
    assert "_static/vendor/vega/vega-bundle.js" in html
    assert "_static/vendor/mathjax/tex-mml-chtml.js" in html
    assert "application/vnd.jupyter.widget-state+json" in html
    assert html.count('class="recmetrics-vega"') == 3
    # the executed notebooks went into book/generated (not into the repository's book/)
    assert (built_book["book"] / "generated" / NOTEBOOK.name).is_file()
    # every chapter shows the parameters it ran with; the chapters' findings are gathered on one page
    chapters = [page for page in sorted((site / "generated").glob("[0-9]*.html"))
                if (built_book["book"] / "generated" / f"{page.stem}.ipynb").is_file()]  # not the generated pages
    assert len(chapters) == len(list((built_book["book"] / "generated").glob("[0-9]*.ipynb")))
    for page in chapters:       # once: the table, not the same values again as code
        text = page.read_text(encoding="utf-8")
        assert text.count("This chapter was computed with these parameters") == 1, page
        assert "tag_injected-parameters" not in text and "tag_parameters" not in text, page
    # the metric reference: one generated page per family
    from recmetrics.metrics import reference

    assert len(list((site / "generated").glob("9[0-8]_metrics_*.html"))) == len(reference.families())
    if list((built_book["book"] / "generated" / "findings").glob("*.json")):
        assert "Findings: the papers" in (site / "generated" / "99_findings.html").read_text(encoding="utf-8")


def test_rebuild_without_execution_is_incremental(built_book, tmp_path):
    # a copy of the built book and its site, rebuilt: the tests reading the shared one meanwhile
    # never see its site replaced, and this test never waits for them
    book, site = tmp_path / "book", tmp_path / "site"
    shutil.copytree(built_book["book"], book, symlinks=True)
    shutil.copytree(built_book["site"], site, symlinks=True)
    executed = {p.name: p.read_bytes() for p in (book / "generated").glob("0[1-9]_*.ipynb")}
    chapters = sorted(executed)
    t0 = time.perf_counter()
    index = report.build(profile="quick", dataset=DATASET, book_dir=book, out=site, execute=False, log=None)
    assert index == site / built_book["index"].relative_to(built_book["site"])
    assert time.perf_counter() - t0 < 60
    assert len(chapters) == 9 and {p: (book / "generated" / p).read_bytes() for p in chapters} == executed
    assert sorted(p.name for p in (site / "generated").glob("0[1-9]_*.html")) == [
        c.replace(".ipynb", ".html") for c in chapters]


def test_chapter_renders_offline_in_chromium(built_book, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    chapter = built_book["site"] / CHAPTER
    url = chapter.resolve().as_uri()
    t0 = time.perf_counter()
    cdp = DevTools(binary, tmp_path / "profile",
                   # no name resolves, and any URL (even an IP literal) goes to a dead loopback proxy
                   ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                    "--proxy-bypass-list=<-loopback>"])
    try:
        cdp.open_page()
        cdp.send("Page.navigate", {"url": url})
        cdp.wait_event("Page.loadEventFired", timeout=60)
        probe = """(() => ({
            charts: document.querySelectorAll('.recmetrics-vega').length,
            marks: document.querySelectorAll('.recmetrics-vega svg.marks, .recmetrics-vega canvas.marks').length,
            chartErrors: Array.from(document.querySelectorAll('.recmetrics-vega .error')).map(e => e.textContent),
            views: Array.from(document.querySelectorAll('.recmetrics-vega')).filter(e => e.vegaView).length,
            bindings: document.querySelectorAll('.recmetrics-vega .vega-bindings select').length,
            math: document.querySelectorAll('mjx-container').length,
            mathErrors: document.querySelectorAll('mjx-merror').length,
            dropdowns: document.querySelectorAll('.widget-dropdown select').length,
        }))()"""
        state = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            state = cdp.evaluate(probe)
            if (state["marks"] >= 3 and state["views"] >= 3 and state["math"] >= 4
                    and state["dropdowns"] >= 1 or state["chartErrors"]):
                break
            time.sleep(0.25)
        rendered_at = time.perf_counter() - t0
        shot = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        (tmp_path / "chapter.png").write_bytes(base64.b64decode(shot["data"]))

        # (b) everything rendered: 3 Vega-Lite charts, MathJax formulas, the saved widget
        assert not state["chartErrors"], state
        assert state["charts"] == 3 and state["marks"] >= 3 and state["views"] == 3, state
        assert state["bindings"] >= 1, state  # the metric drop-down bound to the Vega-Lite param
        assert state["math"] >= 4 and state["mathErrors"] == 0, state
        assert state["dropdowns"] >= 1, state

        # interactivity without a kernel: the Vega-Lite drop-down drives a signal ...
        signal = cdp.evaluate("""(() => {
            const el = Array.from(document.querySelectorAll('.recmetrics-vega'))
                .find(e => e.querySelector('.vega-bindings select'));
            const sel = el.querySelector('.vega-bindings select');
            sel.value = sel.options[sel.options.length - 1].value;
            sel.dispatchEvent(new Event('change', {bubbles: true}));
            sel.dispatchEvent(new Event('input', {bubbles: true}));
            return [sel.value, el.vegaView.signal('metric_pick')];
        })()""")
        assert signal[0] == signal[1] == "AP", signal
        # ... a hover shows a Vega tooltip ...
        boxes = cdp.evaluate("""(() => {
            const el = document.querySelectorAll('.recmetrics-vega')[0];
            const r = el.querySelector('.marks').getBoundingClientRect();
            const v = el.vegaView, o = v.origin(), pad = v.padding();
            window.scrollTo(0, r.top + window.scrollY - 50);
            const r2 = el.querySelector('.marks').getBoundingClientRect();
            return [r2.left + o[0] + (pad.left || 0), r2.top + o[1] + (pad.top || 0), v.width(), v.height()];
        })()""")
        x0, y0, w, h = boxes
        tooltip = False
        for i in range(40):
            x, y = x0 + w * (i + 0.5) / 40, y0 + h - 3
            cdp.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
            time.sleep(0.05)
            if cdp.evaluate("!!document.querySelector('#vg-tooltip-element.visible')"):
                tooltip = True
                break
        assert tooltip, "no Vega tooltip appeared when hovering the bars"
        # ... and the saved ipywidgets (Dropdown jslinked to a Stack) switch pages.
        # (a Stack renders as a plain box after the drop-down inside the VBox)
        stack_text = ("(() => { const d = document.querySelector('.widget-vbox > .widget-dropdown');"
                      " const s = d && d.nextElementSibling; return s ? s.innerText : null; })()")
        before = cdp.evaluate(stack_text)
        switched = cdp.evaluate("""(() => {
            const sel = document.querySelector('.widget-dropdown select');
            sel.selectedIndex = 2;
            sel.dispatchEvent(new Event('change', {bubbles: true}));
            return sel.value;
        })()""")
        time.sleep(0.5)
        after = cdp.evaluate(stack_text)
        assert switched == "nDCG" and before and after and before != after, (switched, before, after)

        # (a) no request left the machine: every request the page made is file: / data: / blob:
        requests = [ev["params"]["request"]["url"] for ev in cdp.events
                    if ev.get("method") == "Network.requestWillBeSent"]
        assert requests and requests[0] == url
        remote = [u for u in requests if urlparse(u).scheme not in ("file", "data", "blob", "about")]
        assert not remote, remote
        by_id = {ev["params"]["requestId"]: ev["params"]["request"]["url"] for ev in cdp.events
                 if ev.get("method") == "Network.requestWillBeSent"}
        failed = [(by_id.get(ev["params"]["requestId"]), ev["params"].get("errorText"))
                  for ev in cdp.events if ev.get("method") == "Network.loadingFailed"]
        assert not failed, failed  # every vendored file was found
        exceptions = [
            (d.get("url"), d.get("lineNumber"), (d.get("exception") or {}).get("description", d.get("text")))
            for d in (ev["params"]["exceptionDetails"] for ev in cdp.events
                      if ev.get("method") == "Runtime.exceptionThrown")
        ]
        # (sphinx-thebe used to declare `const THEBE_JS_URL` twice on every page: the book drops
        # that extension, book/_config.yml) -- no exception at all is tolerated
        assert not exceptions, exceptions

        # control: the recorder does see a request to another host, and the browser blocks it
        probe_url = "https://cdn.jsdelivr.net/npm/vega@6"
        outcome = cdp.evaluate(f"fetch({probe_url!r}).then(() => 'loaded', e => 'blocked: ' + e)",
                               await_promise=True)
        assert outcome.startswith("blocked"), outcome
        deadline = time.monotonic() + 10
        while not any(ev.get("method") == "Network.requestWillBeSent"
                      and ev["params"]["request"]["url"] == probe_url for ev in list(cdp.events)):
            assert time.monotonic() < deadline, "the request recorder missed a remote request"
            time.sleep(0.1)
        print(f"chromium: rendered in {rendered_at:.1f}s, {len(requests)} local requests, "
              f"{time.perf_counter() - t0:.1f}s in all; screenshot {tmp_path / 'chapter.png'}")
    finally:
        cdp.close()


def test_no_chart_overflows_the_text_column(built_book, tmp_path):
    """Every chapter in Chromium: each rendered chart fits inside the article's text column."""
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    pages = sorted((built_book["site"] / "generated").glob("[0-9]*.html"))
    cdp = DevTools(binary, tmp_path / "profile",
                   ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                    "--proxy-bypass-list=<-loopback>"])
    probe = """((url) => {
        const column = (document.querySelector('article.bd-article') || document.querySelector('main article') || document.querySelector('main'));
        if (location.href !== url || document.readyState !== 'complete' || !column) return null;
        const limit = column.getBoundingClientRect().right + 1;
        const charts = Array.from(document.querySelectorAll('.recmetrics-vega'));
        const drawn = charts.filter(e => e.querySelector('svg.marks, canvas.marks'));
        const wide = drawn.map((e, i) => [i, e.querySelector('svg.marks, canvas.marks').getBoundingClientRect().right])
                          .filter(([i, right]) => right > limit);
        return {charts: charts.length, drawn: drawn.length, wide: wide, limit: limit};
    })(%s)"""
    try:
        cdp.open_page()
        for page in pages:
            url = page.resolve().as_uri()
            cdp.send("Page.navigate", {"url": url})
            # the DevTools event buffer keeps earlier pages' load events: poll until this page is loaded
            deadline = time.monotonic() + 60
            state = cdp.evaluate(probe % json.dumps(url))
            while (state is None or state["drawn"] < state["charts"]) and time.monotonic() < deadline:
                time.sleep(0.25)
                state = cdp.evaluate(probe % json.dumps(url))
            assert state is not None, (page.name, "page did not load")
            assert state["drawn"] == state["charts"], (page.name, state)
            assert not state["wide"], (page.name, state)
    finally:
        cdp.close()


def test_zoo_descriptions_have_no_raw_rst():
    """The zoo table showed docstrings' raw RST (````x````, ``:meth:``); it now carries Markdown."""
    from recmetrics.recommenders import rst_to_markdown, zoo

    assert rst_to_markdown("see ``p(i|C)`` and :meth:`predict`, :class:`~a.B`") == "see `p(i|C)` and `predict()`, `a.B`"
    descriptions = " ".join(zoo(["Random", "SVD"]).description)
    assert "``" not in descriptions and ":meth:" not in descriptions


def test_every_page_renders_cleanly(built_book, tmp_path):
    """Every page of the book in Chromium: no raw Markdown table text, no unrendered ``$`` or TeX,
    no ``{...}`` placeholder, no Python repr or warning among the outputs, no table cut with
    "...", no table or widget running past the text column (a wide table scrolls in its own box),
    every formula typeset, no console error."""
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    site = built_book["site"]
    pages = [site / "intro.html", *sorted((site / "generated").glob("[0-9]*.html")),
             *sorted((site / "guide").glob("*.html"))]
    assert len(pages) >= 9 and (site / "generated" / "99_findings.html") in pages
    assert (site / "guide" / "metrics.html") in pages
    found = render_problems(binary, site, pages, tmp_path / "profile")
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_site_works_from_a_sub_path_of_a_web_server(built_book, tmp_path):
    """The built folder published as it is: served by a plain web server under a sub-path (as
    GitHub Pages serves a project site), the front page, the Guide, the Findings page and a chapter
    with charts, formulas and widgets render cleanly, with no request leaving that server."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    site = built_book["site"]
    assert (site / ".nojekyll").is_file()   # GitHub Pages serves _static/ as it is
    assert f"Copyright {time.strftime('%Y')}" in (site / "intro.html").read_text(encoding="utf-8")
    root = tmp_path / "www"
    shutil.copytree(site, root / "owner.github.io" / "recmetrics")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        pages = [site / "intro.html", site / "guide" / "index.html", site / "generated" / "99_findings.html", site / CHAPTER]
        found = render_problems(binary, site, pages, tmp_path / "profile",
                                base_url=f"http://127.0.0.1:{server.server_port}/owner.github.io/recmetrics/")
    finally:
        server.shutdown()
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_findings_page_filters_and_links(built_book, tmp_path):
    """The Findings page in Chromium: grouped by paper, counts per verdict, a filter that hides a
    verdict's rows without a network, every row linked to an element of its chapter, chapters 01
    and 02 included, every row stating its dataset and profile."""
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    site = built_book["site"]
    page = site / "generated" / "99_findings.html"
    html_text = page.read_text(encoding="utf-8")
    # every row's link resolves to an element of the chapter it names; each chapter group's head
    # links to its chapter's page
    tables = re.findall(r'<table class="rm-findings">.*?</table>', html_text, re.S)
    rows = [r for t in tables for r in re.findall(r"<tr data-verdict=.*?</tr>", t, re.S)]
    heads = [h for t in tables for h in re.findall(r'<tr class="rm-findings-group-head">.*?</tr>', t, re.S)]
    hrefs = [h for r in rows for h in re.findall(r'href="([^"]+)"', r)]
    assert hrefs and heads
    for href in set(hrefs):
        target, _, anchor = href.partition("#")
        text = (page.parent / target).read_text(encoding="utf-8")
        assert anchor and f'id="{anchor}"' in text, href
    for href in {h for head in heads for h in re.findall(r'href="([^"]+)"', head)}:
        assert (page.parent / href.partition("#")[0]).is_file(), href
    chapters = {h.partition("#")[0] for h in hrefs}
    assert {"01_dataset_overview.html", "02_recommender_zoo.html"} <= chapters, chapters
    assert "profile <code>nan</code>" not in html_text and "profile <code>unknown</code>" not in html_text
    cdp = DevTools(binary, tmp_path / "profile",
                   ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
                    "--proxy-bypass-list=<-loopback>"])
    try:
        cdp.open_page()
        url = page.resolve().as_uri()
        cdp.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while not cdp.evaluate(f"location.href === {json.dumps(url)} && document.readyState === 'complete'"):
            assert time.monotonic() < deadline, "the Findings page did not load"
            time.sleep(0.25)
        count = """(() => { const rows = Array.from(document.querySelectorAll('table.rm-findings tbody tr[data-verdict]'));
            return {all: rows.length, shown: rows.filter(r => !r.hidden && r.offsetParent !== null).length,
                    agrees: rows.filter(r => r.dataset.verdict === 'agrees').length,
                    shownAgrees: rows.filter(r => r.dataset.verdict === 'agrees' && r.offsetParent !== null).length,
                    boxes: Array.from(document.querySelectorAll('.rm-findings-filter input[data-verdict]')).map(b => b.dataset.verdict),
                    firmBoxes: Array.from(document.querySelectorAll('.rm-findings-filter input[data-firm]')).map(b => b.dataset.firm),
                    warnings: document.querySelectorAll('.rm-small-profile').length,
                    groups: document.querySelectorAll('tbody.rm-findings-group').length,
                    shownBorderline: rows.filter(r => r.dataset.firm === 'borderline' && r.offsetParent !== null).length,
                    borderline: rows.filter(r => r.dataset.firm === 'borderline').length,
                    papers: Array.from(document.querySelectorAll('.rm-findings-wrap')).map(w => w.dataset.paper)}; })()"""
        before = cdp.evaluate(count)
        assert before["boxes"] == ["agrees", "disagrees", "inconclusive", "not testable"], before
        assert before["firmBoxes"] == ["firm", "borderline"], before
        assert before["all"] == before["shown"] > before["agrees"] > 0, before
        assert before["warnings"] == before["groups"] > 0, before  # the quick profile: every chapter group warned
        assert before["papers"] == sorted(before["papers"], key=lambda p: (not p.isdigit(), p)), before
        cdp.evaluate("""(() => { const box = document.querySelector('.rm-findings-filter input[data-verdict="agrees"]');
            box.click(); return box.checked; })()""")
        after = cdp.evaluate(count)
        assert after["shownAgrees"] == 0 and after["shown"] == before["all"] - before["agrees"], after
        # agrees back on, firm verdicts off: only the borderline ones stay
        cdp.evaluate("""(() => { document.querySelector('.rm-findings-filter input[data-verdict="agrees"]').click();
            document.querySelector('.rm-findings-filter input[data-firm="firm"]').click(); return true; })()""")
        firm_off = cdp.evaluate(count)
        assert firm_off["shown"] == firm_off["shownBorderline"] == before["borderline"], firm_off
        requests = [ev["params"]["request"]["url"] for ev in cdp.events
                    if ev.get("method") == "Network.requestWillBeSent"]
        assert not [u for u in requests if urlparse(u).scheme not in ("file", "data", "blob", "about")]
        shot = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
        (tmp_path / "findings.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        cdp.close()


def test_build_writes_nothing_beside_the_site(built_book):
    """No stray jupyter_execute/ beside --out (myst-nb writes <out>/../jupyter_execute unless told)."""
    assert sorted(p.name for p in built_book["root"].iterdir()) == ["book", "notebooks", "site"]


def test_no_local_path_in_any_published_file(built_book, tmp_path):
    """Built from a folder with a distinctive name: no file of the site (pages, the notebooks under
    _sources/, search index, scripts) carries that folder, the checkout, the home or the temporary
    folder (issue 24 §1); chapter 4 says what it measured without a folder or an empty 'found ()'."""
    found = files_with_paths(built_book["site"], built_book["root"])
    assert not found, found
    from recmetrics.meta import guidelines
    from recmetrics.report import outputs, state

    guide = re.sub(r"<[^>]+>", "", (built_book["site"] / "generated" / "04_choosing_a_metric.html").read_text())
    assert "found ()" not in guide and "Meta-evaluation result tables in" not in guide
    # the sentence is what the tables of chapters 5-7 of this build hold (read back here)
    generated = built_book["book"] / "generated"
    record = state.read_record(generated / "04_choosing_a_metric.ipynb")
    tables = tmp_path / "guide-tables"      # not beside the site: other tests read that folder meanwhile
    outputs.seed_inputs(generated, record["depends"], tables)
    k = record["parameters"]["guide_k"]
    measured = guidelines.measured_properties(
        [m for family in guidelines.FAMILIES for m in guidelines.family_metrics(family, k)], tables)
    shutil.rmtree(tables)
    assert guidelines.measured_note(measured) in guide


def test_a_repeated_split_is_named_in_the_set_up_and_a_single_one_is_not():
    from recmetrics.report.findings_page import _setup
    from recmetrics.report.reference_pages import context_text

    assert "split drawn 3 times" in _setup({"folds": 2, "repeats": 3}, {})
    assert _setup({}, {"folds": 2, "repeats": 1}) == ["2 folds"]
    assert context_text({"folds": 6, "repeats": 3}) == "6 folds, split drawn 3 times"
    assert context_text({"folds": 2, "repeats": 1}) == "2 folds"


#: the chapters whose claims the null-rate test replays, each with the fewest claims making two or
#: more uncertain comparisons it must keep (the quick profile's book keeps more: 01 1, 02 2, 03 3,
#: 04 1, 05 4, 06 13, 07 8, 08 18); together at least 8 chapters and 20 claims
NULL_RATE_CHAPTERS = {"01_dataset_overview": 1, "02_recommender_zoo": 2, "03_unified_accuracy_diversity": 2,
                      "04_choosing_a_metric": 1, "05_cutoffs": 2, "06_comparing_metrics": 6,
                      "07_arithmetic_vs_geometric": 4, "08_popularity_bias": 9}


def test_the_null_rate_chapters_are_the_books_chapters_with_claims():
    assert sum(NULL_RATE_CHAPTERS.values()) >= 20 and len(NULL_RATE_CHAPTERS) >= 8
    chapters = {p.stem for p in (REPO / "notebooks").glob("0[1-9]_*.ipynb")}
    assert set(NULL_RATE_CHAPTERS) <= chapters and chapters - set(NULL_RATE_CHAPTERS) == {"09_explorers"}


# one test per chapter: test processes replay the chapters side by side (the longest first, conftest's FIRST)
@pytest.mark.parametrize("chapter", sorted(NULL_RATE_CHAPTERS, key=lambda c: c != "06_comparing_metrics"))
def test_every_check_that_makes_several_comparisons_keeps_the_null_rate(main_book, chapter):
    """Every claim of the built book's chapter whose check makes two or more uncertain comparisons,
    replayed with all of them at their null: ``disagrees`` no more often than the rule's level
    (4.55 %) allows (binomial, 3 se over the draws); the claims as the chapter made them, on the
    book's own results."""
    from recmetrics.meta.firmness import null_rate
    from recmetrics.papers.choices import joint_check

    level, draws = math.erfc(2 / math.sqrt(2)), 400
    bound = level + 3 * math.sqrt(level * (1 - level) / draws)
    kept = sorted(main_book["replay"].glob(f"{chapter}-*.pkl"))     # which no test rewrites: no lock (built_book)
    assert kept, chapter                        # every chapter with claims kept them
    checked, over = [], []
    for path in kept:
        with open(path, "rb") as fh:
            saved = pickle.load(fh)
        for claim in saved["claims"]:
            check, results = ((joint_check(claim, saved["results"]), {}) if saved.get("choice")
                              else (claim.check, saved["results"]))
            rate, size = null_rate(check, results, key=claim.id, draws=draws)
            if size >= 2:
                checked.append(claim.id)
                if rate > bound:
                    over.append((path.stem, claim.id, size, rate))
    assert len(checked) >= NULL_RATE_CHAPTERS[chapter], checked
    assert not over, over
