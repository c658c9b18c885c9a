"""The README and the book's Guide part stay true: the README is a short introduction whose links
resolve and whose Python runs; every guide page is in the table of contents; every metric and
trec_eval measure the guide names exists; the numbers the guide states about the embedded data are
the data's; no page reads like a changelog; the publishing files (LICENSE, CITATION.cff, the Pages
workflow) exist and say what the README says; ``make report`` needs no browser."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
GUIDE = REPO / "book" / "guide"


def _code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _pages() -> list[Path]:
    return [README, REPO / "book" / "intro.md", *sorted(GUIDE.glob("*.md"))]


def test_readme_is_short():
    """Read in five minutes: at most 1,200 words, the sections a newcomer needs, no history (commit
    hashes, dates, "before"/"the day before") and the distribution's name beside PyPI's namesake."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250 and len(text.split()) <= 1200, len(text.split())
    for section in ("## Install", "## Two commands", "## From Python", "## The book of your own runs",
                    "## Publish the book", "## Cite and license"):
        assert section in text, section
    assert "make report" in text and "make test" in text
    history = re.findall(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b|\b20\d\d-\d\d-\d\d\b|"
                         r"the day before|\bBefore \(|\bcommit\b", text)
    assert not history, history
    assert "recmetrics-eval" in text and "0.1.5" in text and "pip install recmetrics" in text


def test_readme_relative_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [l for l in links if not re.match(r"[a-z]+:", l) and not l.startswith("#")]
    assert len(relative) >= 8, relative   # LICENSE, CITATION.cff, the workflow, the guide pages
    missing = [l for l in relative if not (REPO / l.split("#")[0]).exists()]
    assert not missing, missing


def test_guide_pages_are_in_the_table_of_contents():
    toc = yaml.safe_load((REPO / "book" / "_toc.yml").read_text(encoding="utf-8"))
    listed = set()

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                listed.add(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    pages = {f"guide/{p.stem}" for p in GUIDE.glob("*.md")}
    assert pages and pages <= listed, pages - listed
    assert {f for f in listed if f.startswith("guide/")} <= pages   # no entry without its page
    # the links of the guide and the front page point at pages the book has: a guide page, a
    # chapter notebook (generated/NN_name from notebooks/), a metric reference family, an
    # appendix or the Findings page
    from recmetrics.metrics import reference

    chapters = {f"generated/{p.stem}" for p in (REPO / "notebooks").glob("[0-9]*.ipynb")}
    families = {f"generated/{90 + i}_metrics_{f}" for i, f in enumerate(reference.families())}
    known = pages | chapters | families | {"generated/appendix", "generated/99_findings"}
    for page in [*GUIDE.glob("*.md"), REPO / "book" / "intro.md"]:
        base = Path("guide") if page.parent == GUIDE else Path(".")
        for target in re.findall(r"\]\(([A-Za-z0-9_./]+)\)", page.read_text(encoding="utf-8")):
            if target.endswith((".md", ".py", ".yml")) or "." in Path(target).name:
                continue
            resolved = (base / target).as_posix()
            resolved = re.sub(r"[^/]+/\.\./", "", resolved)
            assert resolved in known, (page.name, target)


def test_the_front_page_names_the_papers():
    """The front page's table of papers names each (authors, title, venue, year), with no
    project-internal number such as (003)."""
    text = (REPO / "book" / "intro.md").read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and "generated/" in ln]
    assert len(rows) == 5, rows
    for row in rows:
        paper = row.split("|")[1]
        assert not re.search(r"\(00[0-4]\)|\b00[0-4]\b", paper), paper
        assert re.search(r"\b(19|20)\d\d\b", paper) and "*" in paper and "." in paper, paper


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_no_changelog_phrasing(page):
    """The README and the guide describe what is, not what changed."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"(?i)this round|last round|changed this|\bwas \d[\d.,]* ?[MG]B\b|\(new\)|is new\b|"
                       r"today's default|DESIGN\.md|\bnow (?:weight|take|use)s?\b", text)
    assert not found, found


def test_metric_names_in_the_guide_exist():
    """Every name in the families table of guide/metrics.md parses in the metric registry."""
    from recmetrics import metrics

    text = (GUIDE / "metrics.md").read_text(encoding="utf-8")
    rows = [l for l in text.splitlines() if l.startswith("| ") and "`" in l]
    names = [n for row in rows for n in re.findall(r"`([^`]+)`", row.split("|")[2])]
    assert len(names) >= 30, names
    for name in names:
        metrics.parse(name)   # raises UnknownNameError for a name the registry does not have


def test_trec_measures_in_the_guide_are_trec_evals():
    """The `-m all_trec` list of guide/command_line.md is the nickname's, each measure once."""
    from recmetrics import trec_measures

    text = " ".join((GUIDE / "command_line.md").read_text(encoding="utf-8").split())
    listed = re.search(r"whole standard set: (.*?) \(", text).group(1).split(", ")
    assert len(set(listed)) == len(listed) and set(listed) == set(trec_measures.NICKNAMES["all_trec"])
    assert all(m in trec_measures.TREC_MEASURES for m in listed)


def test_dataset_numbers_in_the_guide_are_the_data():
    """The guide's sizes and Table 2 statistics of the embedded datasets are computed from them."""
    from recmetrics import datasets

    text = " ".join((GUIDE / "data_and_systems.md").read_text(encoding="utf-8").split())
    ml = datasets.stats(datasets.load("movielens-small"))
    ie = datasets.stats(datasets.load("insteval"))
    for piece in (f"{ml['ratings']:,} ratings, {ml['users']:,} users, {ml['items']:,} movies",
                  f"{ie['ratings']:,} ratings 1–5 of {ie['items']:,} lecturers by {ie['users']:,} students",
                  f"movielens-small user Gini {ml['user_gini']:.3f}, item Gini {ml['item_gini']:.3f}, "
                  f"density {100 * ml['density']:.3f}%",
                  f"insteval {ie['user_gini']:.3f}, {ie['item_gini']:.3f}, {100 * ie['density']:.3f}%"):
        assert piece in text, piece


#: a duration stated in prose: "9:16", "11 minutes", "9 min", "109 s", "half an hour", "2.5 hours"
DURATION = re.compile(r"(?<![\w%@.-])\d+:\d\d\b(?![:\d])|(?<![\w%@.-])\d[\d.,]*\s*(?:min(?:utes?)?|hours?|h|s|"
                      r"seconds?|ms)\b|half an hour|an hour\b")


def test_timings_are_stated_only_on_the_performance_page():
    """The README, `recmetrics report --help`, the Guide, the front page and the Pages workflow
    point to the performance page for how long things take; none restates a number."""
    out = subprocess.run([sys.executable, "-m", "recmetrics.cli", "report", "--help"], capture_output=True,
                         text=True, cwd=REPO)
    texts = {"report --help": out.stdout,
             **{p.name: p.read_text(encoding="utf-8") for p in _pages() if p.name != "performance.md"},
             "pages.yml": (REPO / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")}
    for name, text in texts.items():
        found = DURATION.findall(" ".join(text.split()))
        assert not found, (name, found)
    assert "Performance and tests" in " ".join(out.stdout.split())
    assert "performance.md" in texts["pages.yml"]
    assert DURATION.findall("9:16, 11 minutes, 9 min, 109 s, about half an hour, 2 hours") == \
        ["9:16", "11 minutes", "9 min", "109 s", "half an hour", "2 hours"]


def test_the_performance_page_is_generated_from_the_benchmark_results(tmp_path):
    """Every recorded benchmark table, with its command and machine, whole builds first."""
    import json

    from recmetrics.report.performance import _options, benchmark_tables, performance_markdown

    tables = benchmark_tables()
    names = {p.stem for p in (REPO / "benchmarks" / "results").glob("*.json")}
    assert {t["name"] for t in tables} == names and names
    text = performance_markdown(tables)
    for t in tables:
        assert f"## {_options(t['title'])}" in text and f"`{t['command']}`" in text
        assert f"CPUs {t['machine']['CPUs']}" in text
    (tmp_path / "bench_b.json").write_text(json.dumps({"title": "B", "columns": ["x"], "rows": [[1.5]]}))
    (tmp_path / "bench_book_quick_movielens-small.json").write_text(
        json.dumps({"title": "Book", "columns": ["x"], "rows": [[2]]}))
    (tmp_path / "broken.json").write_text("{")
    assert [t["name"] for t in benchmark_tables(tmp_path)] == ["bench_book_quick_movielens-small", "bench_b"]
    assert "{{ benchmarks }}" in (GUIDE / "performance.md").read_text(encoding="utf-8")
    assert performance_markdown([]).startswith("No benchmark has been recorded")
    # options as code: the book's typography would turn "--force" into "–force"
    assert "`--force`" in performance_markdown([{"name": "b", "title": "report --force", "columns": ["x"],
                                                  "rows": [[1]]}])
    # a note is text: a chapter output quoted in it (HTML, a script) reaches the page escaped, not run
    page = performance_markdown([{"name": "b", "title": "B", "columns": ["x"], "rows": [[1]],
                                  "notes": ['cell 4: <div id="x"></div><script>alert(1)</script>; p < 0.05']}])
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;; p &lt; 0.05" in page


def test_readme_python_example_runs(capsys):
    """The README's ten-line example, run as written."""
    block = _code_blocks(README.read_text(encoding="utf-8"), "python")[0]
    assert len(block.strip().splitlines()) <= 10
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "nDCG@100" in out and "infAP@100" in out


@pytest.mark.slow
def test_readme_own_runs_files_make_a_valid_book_plan(tmp_path, monkeypatch):
    """The README's snippet that writes train/test files and runs, run as written, and its
    `recmetrics report --qrels ... --runs ...` command validated (every file read, nothing executed)."""
    from recmetrics.report import own_runs

    text = README.read_text(encoding="utf-8")
    snippet = next(b for b in _code_blocks(text, "python") if "write_trec_run" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    command = next(b for b in _code_blocks(text, "bash") if "--qrels" in b)
    args = command.replace("\\\n", " ").split("#")[0].split()
    qrels = args[args.index("--qrels") + 1].strip("'")
    folds = args[args.index("--folds") + 1: args.index("-l")]
    runs = [a.strip("'") for a in args[args.index("--runs") + 1:]]
    name = args[args.index("--name") + 1]
    assert (tmp_path / "data" / "train.0.csv").exists()
    p = own_runs.plan(qrels, runs, folds=folds, threshold=float(args[args.index("-l") + 1]), name=name)
    assert p.summary["systems"] == ["Pop", "ItemKNN", "PureSVD"] and p.summary["folds"] == 3
    assert p.source["threshold"] == 8.0
    # the threshold -l 8 makes ratings >= 4 stars relevant: as many relevant users as Qrels(test, 4)
    assert p.summary["relevant_users"] > 0


def test_make_report_needs_no_browser():
    """Only `make test` installs Chromium; `make report` (and the set-up it runs) does not."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def dry(target):
        return subprocess.run(["make", "-n", "-B", target], capture_output=True, text=True, cwd=REPO).stdout

    assert "ensure-chromium" not in dry("report")
    assert "ensure-chromium" in dry("test")
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_publishing_files():
    """LICENSE is MIT as pyproject says; CITATION.cff is CFF 1.2.0 with the five papers as
    references; the Pages workflow runs the README's command on pushes to main and on demand."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert project["license"]["text"] == "MIT" and license_text.startswith("MIT License")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    assert cff["type"] == "software" and cff["title"].startswith("recmetrics")
    titles = [r["title"] for r in cff["references"]]
    assert len(titles) == 5
    from recmetrics.report.findings_page import PAPERS

    for paper in ("000", "001", "002", "003"):   # the Findings page's citations name the same papers
        cited = re.search(r"\*(.+?)\.?\*", PAPERS[paper][1]).group(1).lower()
        assert any(cited.startswith(t.lower()[:40]) for t in titles), cited
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    triggers = flow.get("on", flow.get(True))
    assert triggers["push"]["branches"] == ["main"] and "workflow_dispatch" in triggers
    assert "paper" in triggers["workflow_dispatch"]["inputs"]["profile"]["options"]
    steps = flow["jobs"]["build"]["steps"]
    assert any("make report" in s.get("run", "") for s in steps)
    assert any(s.get("uses", "").startswith("actions/upload-pages-artifact") for s in steps)
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in flow["jobs"]["deploy"]["steps"])
    assert "make report" in README.read_text(encoding="utf-8")
    assert (REPO / "book" / "static" / "favicon.svg").exists()
    config = yaml.safe_load((REPO / "book" / "_config.yml").read_text(encoding="utf-8"))
    assert config["html"]["favicon"] == "static/favicon.svg" and not config["html"]["use_repository_button"]
