"""The report build as a pipeline: argument checks before anything runs, incremental execution by
content key, dependency order, no failed chapter over a good one, no book from stale chapters,
SIGINT, the Dask scheduler, and the reproducibility appendix.

Most tests run small throw-away notebooks (a few lines each) in a temporary project, so they test
the build machinery, not the analyses; the kernels import this checkout (``PYTHONPATH``).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recmetrics import cli, report
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.report import plan as plan_mod
from recmetrics.report import state

REPO = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------------- helpers
def _notebook(path: Path, parameters: str, *cells: str, depends_on=None, reads_late=None) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    if depends_on or reads_late:
        nb.metadata["recmetrics"] = {k: list(v) for k, v in (("depends_on", depends_on), ("reads_late", reads_late)) if v}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"),
                nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
                *[nbformat.v4.new_code_cell(c) for c in cells]]
    nbformat.write(nb, str(path))
    return path


def _project(root: Path, *, sleep: float = 0.0) -> dict[str, Path]:
    """A checkout-like folder: book/ (the real config) and notebooks/ with three tiny chapters, and
    the book's work folder ``books/main`` (a copy of book/: where ``recmetrics report`` builds it
    when ``$RECMETRICS_BOOKS`` is ``books``, :func:`_cli_env`; the API calls build there too).

    01_a: prints its parameters (fails with fail=True, sleeps ``sleep`` seconds after touching the
    file ``$TEST_STARTED_MARKER`` names, when set, so a test can tell that the kernel runs the cell);
    03_c: writes its ``level`` to the meta-results folder; 02_b: reads it (depends_on 03_c)."""
    sources = root / "book"
    sources.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml", "intro.md"):
        shutil.copy(REPO / "book" / name, sources / name)
    shutil.copytree(REPO / "book" / "static", sources / "static")
    book = root / "books" / "main"
    shutil.copytree(sources, book)
    nbs = root / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              f"import os, pathlib, time\nif os.environ.get('TEST_STARTED_MARKER'):\n"
              f"    pathlib.Path(os.environ['TEST_STARTED_MARKER']).touch()\ntime.sleep({sleep})\n"
              "if fail:\n    raise ValueError('asked to fail')\n"
              "print('A', dataset, seed, n)")
    _notebook(nbs / "02_b.ipynb", "seed = 0",
              "import os, pathlib\nprint('B reads', pathlib.Path(os.environ['RECMETRICS_META_RESULTS'], "
              "'c.txt').read_text())", depends_on=["03_c"])
    _notebook(nbs / "03_c.ipynb", 'dataset = "movielens-small"\nlevel = 1',
              "import os, pathlib\npathlib.Path(os.environ['RECMETRICS_META_RESULTS'], 'c.txt').write_text(str(level))")
    return {"root": root, "book": book, "notebooks": nbs, "generated": book / "generated"}


def _run(project, log=None, **kw):
    """Execute the project's notebooks (no Sphinx), one at a time unless ``jobs`` says otherwise (the
    order of the log is then the plan's); return {stem: record}."""
    kw.setdefault("jobs", 1)
    report.execute_notebooks(kw.pop("profile", "quick"), kw.pop("dataset", "movielens-small"),
                             notebooks_dir=project["notebooks"], generated_dir=project["generated"],
                             log=log, **kw)
    return {p.stem: state.read_record(p) for p in sorted(project["generated"].glob("*.ipynb"))}


def _stream(path: Path) -> str:
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                   if o.get("output_type") == "stream")


def checkout_pythonpath() -> str:
    """``PYTHONPATH`` with this checkout first, and no empty entry (which Python reads as the folder a
    process starts in: each kernel's own, and a build's kernel server would not fork such kernels)."""
    return os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


@pytest.fixture
def kernel_env(monkeypatch):
    """Kernels import this checkout's recmetrics."""
    monkeypatch.setenv("PYTHONPATH", checkout_pythonpath())


@pytest.fixture
def no_execution(monkeypatch):
    """Fail the test if the report executes anything (argument errors must come first)."""
    calls = []

    def refuse(*a, **k):
        calls.append(a)
        raise RuntimeError("a notebook was executed before the arguments were checked")

    monkeypatch.setattr("recmetrics.report.book.execute_plan", refuse)
    monkeypatch.setattr("recmetrics.report.book.vendor_js", refuse)
    return calls


def _cli(capsys, *args):
    rc = cli.main(["report", *args])
    err = capsys.readouterr().err.strip()
    return rc, err


# ------------------------------------------------------------------- argument checks (fast)
@pytest.mark.parametrize("args, words", [
    (["--dataset", ""], ["--dataset ''", "movielens-small"]),
    (["--dataset", "nope"], ["unknown dataset 'nope'"]),
    (["--profile", "quik"], ["unknown report profile 'quik'", "did you mean 'quick'"]),
    (["-p", "foo=1"], ["unknown notebook parameter (-p) 'foo'"]),
    (["-p", "folds=2.5"], ["-p folds=2.5", "expected an integer >= 2"]),
    (["-p", "systems=5"], ["-p systems=5", "a non-empty list of recommender specs"]),
    (["-p", "folds"], ["expected key=value"]),
    (["-p", "folds=2", "-p", "folds=3"], ["-p folds=... given twice"]),
    (["-p", "dataset=insteval"], ["set by --dataset"]),
    # every chapter declares dataset_args, so the loader itself is asked (before any notebook runs)
    (["--dataset", "movielens-1m", "--dataset-arg", "path=/nowhere"], ["movielens-1m", "'/nowhere' does not exist"]),
    (["--dataset-arg", "path=/x"], ["--dataset-arg needs --dataset"]),
    (["--no-execute", "--force"], ["--no-execute", "no --force"]),
    # values, not only types, are checked at planning time (issue 23 §1)
    (["-p", "cutoff_grid=[0]"], ["-p cutoff_grid=[0]", "cut-offs, integers >= 1"]),
    (["-p", "cutoffs=[]"], ["-p cutoffs=[]", "a non-empty list"]),
    (["-p", "n_permutations=-5"], ["-p n_permutations=-5", "an integer >= 1"]),
    (["-p", "seed=-1"], ["-p seed=-1", "an integer >= 0"]),
    (["-p", "metrics=['Nope']"], ["-p metrics", "'Nope'"]),
    (["-p", "test_size=1.5"], ["-p test_size=1.5", "between 0 and 1"]),
])
def test_bad_arguments_fail_before_any_notebook_runs(capsys, no_execution, args, words):
    rc, err = _cli(capsys, *args)
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error:"), err
    for w in words:
        assert w in err, (w, err)
    assert "Traceback" not in err and not no_execution


def test_out_must_be_a_writable_folder(capsys, no_execution, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, word in ((afile, "is a file"), (afile / "sub", "cannot write there"), ("", "empty path")):
        rc, err = _cli(capsys, "--out", str(out))
        assert rc == 2 and len(err.splitlines()) == 1 and word in err, err
    assert not no_execution
    with pytest.raises(InputError, match="is the book's sources"):
        plan_mod.check_out(REPO / "book", REPO / "book")


def test_dataset_given_twice_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--dataset", "movielens-small", "--dataset", "insteval"])
    assert exc.value.code == 2 and "--dataset given twice" in capsys.readouterr().err


def test_help_describes_every_option_and_lists_datasets(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    for option in ("--profile", "--dataset ", "--dataset-arg", "-p KEY=VALUE", "--out", "--force", "--no-execute",
                   "--scheduler"):
        assert option in out, option
    for name in ("movielens-small", "insteval", "movielens-1m", "ratings-file"):
        assert f"  {name} " in out, name
    assert "quick" in out and "paper" in out and "n_permutations" in out


def test_report_help_does_not_slow_the_evaluate_path():
    code = "import sys, recmetrics.cli as c; c.build_parser(); print(sorted(m for m in ('pandas', 'papermill') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_override_types_follow_the_declared_defaults():
    """A chapter without a written schema (a notebook added to notebooks/) takes values of its
    defaults' types; None only where the default is None."""
    declared = {"n1": {"folds": {"default": "5"}, "systems": {"default": '["Pop", "Random"]'},
                       "focus": {"default": '"nDCG"'}, "test_size": {"default": "0.2"},
                       "n_users": {"default": "100"}, "expr": {"default": "list(range(3))"},
                       "sigma": {"default": "0.2"}},
                "n2": {"systems": {"default": "None"}}}
    ok = plan_mod.check_overrides({"folds": 3, "systems": ["Pop"], "focus": "AP", "sigma": 1,
                                   "expr": "anything"}, declared)
    assert ok["folds"] == 3 and ok["systems"] == ["Pop"]
    assert ok["sigma"] == 1.0 and isinstance(ok["sigma"], float)  # an int where a float is declared: one value
    assert plan_mod.check_overrides({"focus": 5}, declared) == {"focus": "5"}  # a bare word for a string
    with pytest.raises(InputError, match="-p n_users=None: expected an integer"):
        plan_mod.check_overrides({"n_users": None}, declared)
    with pytest.raises(InputError, match="chapter n1 expects a list of str"):
        plan_mod.check_overrides({"systems": None}, declared)  # n2 takes None, n1 does not
    with pytest.raises(InputError, match="a list of str"):
        plan_mod.check_overrides({"systems": [1, 2]}, declared)
    with pytest.raises(InputError, match="folds=True: expected an integer"):
        plan_mod.check_overrides({"folds": True}, declared)
    with pytest.raises(UnknownNameError, match="did you mean 'folds'"):
        plan_mod.check_overrides({"fold": 3}, declared)
    assert plan_mod.parse_assignment("sizes=[1.0, 0.5]") == ("sizes", [1.0, 0.5])
    assert plan_mod.parse_assignment("path=/data/ml-1m") == ("path", "/data/ml-1m")


def test_chapter_order_follows_dependencies():
    assert plan_mod.order_chapters(["01", "02", "03"], {"01": ["03"]}) == ["02", "03", "01"]
    assert plan_mod.order_chapters(["01", "02"], {"01": ["99"]}) == ["01", "02"]  # absent ones ignored
    with pytest.raises(report.ReportError, match="cycle"):
        plan_mod.order_chapters(["01", "02"], {"01": ["02"], "02": ["01"]})


def test_the_guide_runs_after_the_meta_evaluation_chapters():
    """Chapter 4's metric guide reads chapters 5-7's results, so it runs after them."""
    p = report.make_plan("quick", "movielens-small")
    order = p.stems
    assert order.index("04_choosing_a_metric") > max(order.index(s) for s in
                                                     ("05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric"))
    assert order[:3] == ["01_dataset_overview", "02_recommender_zoo", "03_unified_accuracy_diversity"]
    guide = next(c for c in p.chapters if c.stem == "04_choosing_a_metric")
    assert set(guide.depends) == {"05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric"}
    # the data are fingerprinted before anything runs: chapter 8 also names insteval
    assert {"movielens-small", "insteval"} <= set(p.fingerprints)
    assert p.fingerprints["movielens-small"]["ratings"] == 100_004
    # a chapter's key changes with its dependencies' keys, its parameters and the dataset
    q = report.make_plan("quick", "movielens-small", overrides={"n_samples": 3})
    changed = {c.stem for c in q.chapters if c.key != p.keys[c.stem]}
    # chapter 09 (the explorers) declares n_samples too
    assert changed == {"05_cutoffs", "06_comparing_metrics", "07_arithmetic_vs_geometric", "04_choosing_a_metric",
                       "09_explorers"}
    r = report.make_plan("quick", "insteval")
    assert all(r.keys[s] != p.keys[s] for s in p.keys)
    # how a chapter computes (threads, a Dask cluster) is not what it computes: the keys stay
    t = report.make_plan("quick", "movielens-small", overrides={"n_jobs": 2})
    assert t.keys == p.keys and {c.parameters.get("n_jobs") for c in t.chapters} >= {2}


def test_stale_chapters_are_named(tmp_path):
    gen = tmp_path / "generated"
    gen.mkdir()
    import nbformat

    def put(stem, dataset, executed_at="2025-01-01T00:00:00Z", profile="quick"):
        nb = nbformat.v4.new_notebook()
        nb.metadata["recmetrics"] = {"key": stem, "executed_at": executed_at,
                                     "settings": {"profile": profile, "dataset": dataset, "dataset_args": {},
                                                  "overrides": {}}}
        nbformat.write(nb, str(gen / f"{stem}.ipynb"))

    put("01", "insteval")
    put("02", "movielens-small")
    put("03", "movielens-small")
    nbformat.write(nbformat.v4.new_notebook(), str(gen / "04.ipynb"))  # executed by hand: no record
    stale = state.stale_chapters(gen, ["01", "02", "03", "04", "05"])
    assert set(stale) == {"01", "04", "05"}
    assert "dataset 'insteval'" in stale["01"] and "the other chapters with" in stale["01"]
    assert stale["05"] == "not executed" and "without a build record" in stale["04"]
    # asked for insteval: the movielens-small chapters are the stale ones
    assert set(state.stale_chapters(gen, ["01", "02", "03"], {"dataset": "insteval"})) == {"02", "03"}
    # a failed attempt after the good copy makes it stale
    state.record_attempt(gen, "02", "failed", message="ValueError: x")
    stale = state.stale_chapters(gen, ["02", "03"])
    assert set(stale) == {"02"} and "failed" in stale["02"] and "ValueError: x" in stale["02"]
    msg = state.stale_message(stale)
    assert "02" in msg and "\n" not in msg


def test_overrides_count_only_where_a_chapter_declares_them(tmp_path):
    import nbformat

    gen = tmp_path / "generated"
    gen.mkdir()

    def put(stem, declared, applied):
        nb = nbformat.v4.new_notebook()
        nb.metadata["recmetrics"] = {"key": stem, "executed_at": "2025-01-01T00:00:00Z",
                                     "parameters": {"profile": "quick", **{k: applied.get(k, 0) for k in declared}},
                                     "settings": {"profile": "quick", "dataset": "d", "dataset_args": {},
                                                  "overrides": applied}}
        nbformat.write(nb, str(gen / f"{stem}.ipynb"))

    put("01", ["seed"], {})                      # does not declare n_samples: not stale
    put("05", ["seed", "n_samples"], {"n_samples": 3})
    put("06", ["seed", "n_samples"], {"n_samples": 3})
    put("07", ["seed", "n_samples"], {})          # declares it but ran with the default
    put("08", ["seed"], {"focus": "AP"})          # an override recorded where no chapter declares it
    stale = state.stale_chapters(gen, ["01", "05", "06", "07", "08"])
    assert list(stale) == ["07"] and "n_samples" in stale["07"]
    assert list(state.stale_chapters(gen, ["01", "05", "06", "07"], {"overrides": {"n_samples": 3}})) == ["07"]
    assert set(state.stale_chapters(gen, ["01", "05", "06", "07"], {"overrides": {}})) == {"05", "06"}
    assert state.book_settings([state.read_record(gen / f"{s}.ipynb") for s in ("01", "05")])["overrides"] == \
        {"n_samples": 3}


def test_appendix_page(tmp_path):
    from recmetrics.report import appendix

    results = tmp_path / "results"
    results.mkdir()
    (results / "bench_x.json").write_text(json.dumps({
        "title": "metrics vs pytrec_eval", "command": "python benchmarks/bench_x.py", "measured_at": "2025-01-01",
        "machine": {"cpus": 2}, "columns": ["tool", "seconds"], "rows": [["recmetrics", 0.31], ["pytrec_eval", 4.33]],
        "notes": ["max |diff| 5.55e-17"]}))
    (results / "broken.json").write_text("{")
    records = {"01_a": {"key": "k", "executed_at": "2025-01-02T00:00:00Z", "seconds": 12.5, "package": "p" * 64,
                        "commit": "abc", "settings": {"profile": "quick", "dataset": "movielens-1m",
                                                      "dataset_args": {"path": "/d"}, "overrides": {}},
                        "parameters": {"profile": "quick", "seed": 7, "systems": ["Pop", "Random"]},
                        "datasets": {"movielens-1m": {"name": "movielens-1m", "args": {"path": "/d"}, "users": 6040,
                                                      "items": 3706, "ratings": 1000209, "hash": "f" * 32}},
                        "versions": {"python": "3.11.0", "numpy": "2.0"}}}
    text = appendix.appendix_markdown(records, benchmarks=appendix.benchmark_tables(results), commit="abc")
    for piece in ("# Reproducibility", "recmetrics report --profile quick --dataset movielens-1m --dataset-arg path=/d",
                  "`" + "f" * 32 + "`", "1,000,209 ratings", "arguments path=`/d`", "seed=7", "12.5 s", "| numpy | 2.0 |",
                  "### 01_a", "`['Pop', 'Random']`", "[performance page](../guide/performance)"):
        assert piece in text, piece
    # the benchmark timings are stated once, on the Guide's performance page, not again here
    assert "| pytrec_eval | 4.33 |" not in text
    from recmetrics.report.performance import performance_markdown

    page = performance_markdown(appendix.benchmark_tables(results))
    for piece in ("## metrics vs pytrec_eval", "| pytrec_eval | 4.33 |", "max |diff| 5.55e-17", "on cpus 2",
                  "`python benchmarks/bench_x.py`"):
        assert piece in page, piece
    line = appendix.built_with(state.settings_of(records["01_a"]))
    assert "**quick**" in line and "**movielens-1m**" in line and "path=" in line


# ------------------------------------------------------------- execution (kernels: slow)
@pytest.mark.slow
def test_incremental_execution_dependencies_and_force(tmp_path, kernel_env):
    project = _project(tmp_path)
    log: list[str] = []
    first = _run(project, log.append)
    assert set(first) == {"01_a", "02_b", "03_c"}
    executed = [m.split()[1] for m in log if m.startswith("executing ")]
    assert executed == ["01_a.ipynb", "03_c.ipynb", "02_b.ipynb"]  # 02_b reads 03_c: it runs after
    assert "B reads 1" in _stream(project["generated"] / "02_b.ipynb")
    assert first["02_b"]["depends"] == {"03_c": first["03_c"]["key"]}

    log.clear()
    t0 = time.perf_counter()
    again = _run(project, log.append)
    assert time.perf_counter() - t0 < 20
    assert not [m for m in log if m.startswith("executing ")], log
    assert {s: r["executed_at"] for s, r in again.items()} == {s: r["executed_at"] for s, r in first.items()}

    log.clear()
    third = _run(project, log.append, overrides={"level": 2})  # 03_c's parameter: 03_c and its reader
    assert [m.split()[1] for m in log if m.startswith("executing ")] == ["03_c.ipynb", "02_b.ipynb"]
    assert "B reads 2" in _stream(project["generated"] / "02_b.ipynb")
    assert third["01_a"]["executed_at"] == first["01_a"]["executed_at"]

    log.clear()
    _run(project, log.append, overrides={"level": 2}, force=True)
    assert len([m for m in log if m.startswith("executing ")]) == 3

    # an edited notebook re-executes (its bytes are in the key), and so do the package and the data
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              "print('A edited', dataset)")
    log.clear()
    _run(project, log.append, overrides={"level": 2})
    assert [m.split()[1] for m in log if m.startswith("executing ")] == ["01_a.ipynb"]
    log.clear()
    _run(project, log.append, dataset="insteval", overrides={"level": 2})
    assert [m.split()[1] for m in log if m.startswith("executing ")] == ["01_a.ipynb", "03_c.ipynb", "02_b.ipynb"]


def test_chapters_start_longest_critical_path_first(monkeypatch):
    from types import SimpleNamespace as NS

    from recmetrics.report import execute, profiles

    chapters = [NS(stem="02_zoo", depends=()), NS(stem="06_b", depends=()), NS(stem="07_c", depends=()),
                NS(stem="08_d", depends=()), NS(stem="09_e", depends=("06_b", "07_c"))]
    plan = NS(profile="paper", settings={"profile": "paper", "dataset": "movielens-small"}, chapters=chapters)
    monkeypatch.setitem(profiles.EXPECTED_SECONDS, "paper", {"02_zoo": 340, "06_b": 140, "07_c": 170, "08_d": 110,
                                                             "09_e": 300})
    key = execute.start_order(plan, {})
    # 07_c and 06_b lead to 09_e (470 and 440 s of chain) before the zoo (340 s)
    assert [c.stem for c in sorted(chapters, key=key)] == ["07_c", "06_b", "02_zoo", "09_e", "08_d"]
    # a chapter's own record under this profile and dataset replaces the hint; another dataset's does not
    rec = {"settings": {"profile": "paper", "dataset": "movielens-small"}, "seconds": 900.0}
    other = {"settings": {"profile": "paper", "dataset": "insteval"}, "seconds": 5000.0}
    key = execute.start_order(plan, {"02_zoo": rec, "08_d": other})
    assert [c.stem for c in sorted(chapters, key=key)] == ["02_zoo", "07_c", "06_b", "09_e", "08_d"]
    # a reader that starts beside 06_b and 07_c (it reads them late) adds nothing to their chains but
    # ends after them: their paths are its own 300 s, and at a tie the plan's order puts them first
    chapters[-1].late = ("06_b", "07_c")
    key = execute.start_order(plan, {})
    assert [c.stem for c in sorted(chapters, key=key)] == ["02_zoo", "06_b", "07_c", "09_e", "08_d"]


def test_a_late_reader_starts_beside_only_when_nothing_else_can():
    """A reader started beside a chapter it reads late would wait for its tables on a core; so every
    chapter that can start without waiting goes first, in start order, and the reader starts beside
    when it is the only one ready, once its chapter's expected time left is at most its own (it would
    not wait then), or after its chapter is done, as any reader."""
    from types import SimpleNamespace as NS

    from recmetrics.report.execute import ready_chapters

    ex, zoo = NS(stem="09_ex", depends=("07_g",), late=("07_g",)), NS(stem="02_zoo", depends=(), late=())
    g, b = NS(stem="07_g", depends=(), late=()), NS(stem="06_b", depends=("07_g",), late=())
    planned = {"09_ex", "02_zoo", "07_g", "06_b"}
    stems = lambda cs: [c.stem for c in cs]   # noqa: E731
    # 07_g started: 09_ex could start beside it, but 02_zoo starts without waiting; 06_b waits for 07_g
    assert stems(ready_chapters([ex, zoo, b], set(), {"07_g"}, planned)) == ["02_zoo", "09_ex"]
    assert stems(ready_chapters([ex, b], set(), {"07_g", "02_zoo"}, planned)) == ["09_ex"]
    assert stems(ready_chapters([ex, zoo, b], set(), set(), planned)) == ["02_zoo"]   # 07_g not started
    # 07_g done: both readers are ready like any other chapter, in start order
    assert stems(ready_chapters([ex, zoo, b], {"07_g"}, {"07_g"}, planned)) == ["09_ex", "02_zoo", "06_b"]
    # a chapter read but not in the plan (committed before) does not hold anyone back
    assert stems(ready_chapters([ex], set(), set(), {"09_ex"})) == ["09_ex"]
    # given the seconds expected: once 07_g's expected time left is at most the reader's own, it would
    # not wait, so it starts in start order (beside 07_g's last stretch, not after it alone)
    expected = {"09_ex": 300.0, "02_zoo": 20.0}
    assert stems(ready_chapters([ex, zoo], set(), {"07_g"}, planned, {"07_g": 301.0}, expected)) == ["02_zoo", "09_ex"]
    assert stems(ready_chapters([ex, zoo], set(), {"07_g"}, planned, {"07_g": 300.0}, expected)) == ["09_ex", "02_zoo"]
    assert stems(ready_chapters([ex, zoo], set(), {"07_g"}, planned, {"07_g": 61.0}, {})) == ["02_zoo", "09_ex"]
    assert stems(ready_chapters([ex, zoo], set(), {"07_g"}, planned, {}, expected)) == ["02_zoo", "09_ex"]


def _late_project(root: Path, sleep: float) -> dict[str, Path]:
    """01_p sleeps ``sleep`` s then shares a table (recmetrics.report.shared; fails with fail=True);
    02_r reads it late: it notes when it started, then waits for the table."""
    project = _project(root)
    for old in project["notebooks"].glob("*.ipynb"):
        old.unlink()
    _notebook(project["notebooks"] / "01_p.ipynb", "level = 1\nfail = False",
              f"import time\nimport pandas as pd\nfrom recmetrics.report import shared\ntime.sleep({sleep})\n"
              "if fail:\n    raise ValueError('asked to fail')\n"
              "shared.share('t', pd.DataFrame({'level': [level]}), {'level': level})\nprint('P shared', level)")
    _notebook(project["notebooks"] / "02_r.ipynb", "level = 1",
              "import os, pathlib, time\nfrom recmetrics.report import shared\n"
              "pathlib.Path(os.environ['RECMETRICS_RESULTS_DIR']).parent.joinpath('r-started').write_text(str(time.time()))\n"
              "got = shared.shared('01_p', 't', {'level': level}, poll=0.2)\n"
              "print('R reads', None if got is None else got['level'].tolist())",
              reads_late=["01_p"])
    return project


@pytest.mark.slow
def test_a_late_reader_runs_beside_its_producer_and_waits_for_its_table(tmp_path, kernel_env):
    """Chapter 9's reads of chapters 6 and 7 (profiles.READS_LATE): the reader starts once the producer
    started, runs beside it, and its request for the shared table waits until the producer committed
    it; the executed chapters are those of a build one chapter at a time. A failed producer ends the
    wait: the reader goes on without the table (it would compute it) and the build fails."""
    # the reference build, one chapter at a time, needs no sleep: only its outputs are compared
    one, two = _late_project(tmp_path / "one", 0), _late_project(tmp_path / "two", 10)
    _run(one, jobs=1)
    records = _run(two, jobs=2)
    gen = two["generated"]
    assert records["02_r"]["depends"] == {"01_p": records["01_p"]["key"]}
    started = float((gen / "r-started").read_text())
    assert started < (gen / "01_p.ipynb").stat().st_mtime - 5        # beside it, not after it
    for stem in ("01_p", "02_r"):
        assert _stream(gen / f"{stem}.ipynb") == _stream(one["generated"] / f"{stem}.ipynb"), stem
    assert "R reads [1]" in _stream(gen / "02_r.ipynb")
    with pytest.raises(report.ReportError, match="01_p.ipynb failed in cell"):
        _run(two, overrides={"fail": True, "level": 2}, jobs=2)
    attempts = state.read_state(gen)["attempts"]
    assert attempts["01_p"]["status"] == "failed" and attempts["02_r"]["status"] == "ok"
    assert "R reads None" in _stream(gen / "02_r.ipynb")


@pytest.mark.slow
def test_independent_chapters_run_side_by_side_with_identical_results(tmp_path, kernel_env):
    # 01_a sleeps; 03_c and its reader 02_b run beside it and complete first, each with its own
    # scratch folders; the executed chapters are those of a build one chapter at a time
    one = _project(tmp_path / "one")   # the reference, one chapter at a time: only its outputs are compared
    two = _project(tmp_path / "two", sleep=12)
    before = {k: v for k, v in os.environ.items() if k.startswith("RECMETRICS_")}
    _run(one, jobs=1)
    log: list[str] = []
    records = _run(two, log.append, jobs=2)
    # the longest chain first: 03_c and its reader 02_b before 01_a (no record yet: 60 s each)
    assert [m.split()[1] for m in log if m.startswith("executing ")] == ["03_c.ipynb", "01_a.ipynb", "02_b.ipynb"]
    gen = two["generated"]
    assert (gen / "02_b.ipynb").stat().st_mtime < (gen / "01_a.ipynb").stat().st_mtime   # b did not wait for a
    for stem in ("01_a", "02_b", "03_c"):
        assert _stream(gen / f"{stem}.ipynb") == _stream(one["generated"] / f"{stem}.ipynb"), stem
    assert "B reads 1" in _stream(gen / "02_b.ipynb") and records["02_b"]["depends"] == {"03_c": records["03_c"]["key"]}
    assert {s: a["status"] for s, a in state.read_state(gen)["attempts"].items()} == dict.fromkeys(records, "ok")
    assert not (gen / ".running").exists()
    assert {k: v for k, v in os.environ.items() if k.startswith("RECMETRICS_")} == before   # never set here

    # a failure: nothing new starts, what runs finishes, the error is raised with the attempt logged
    with pytest.raises(report.ReportError, match="01_a.ipynb failed in cell"):
        _run(two, overrides={"fail": True, "level": 3}, jobs=2)
    attempts = state.read_state(gen)["attempts"]
    assert attempts["01_a"]["status"] == "failed" and attempts["03_c"]["status"] == "ok"
    with pytest.raises(report.ReportError, match="jobs must be"):
        _run(two, jobs=0)


@pytest.mark.slow
def test_a_failure_keeps_the_good_chapter_and_blocks_the_book(tmp_path, kernel_env):
    project = _project(tmp_path)
    _run(project)
    target = project["generated"] / "01_a.ipynb"
    good = target.read_bytes()
    with pytest.raises(report.ReportError) as exc:
        _run(project, overrides={"fail": True})
    msg = str(exc.value)
    assert "01_a.ipynb failed in cell" in msg and "ValueError: asked to fail" in msg and "\n" not in msg
    assert target.read_bytes() == good  # the last good chapter is untouched
    assert (project["generated"] / ".failed" / "01_a.ipynb").is_file()
    stale = state.stale_chapters(project["generated"], ["01_a", "02_b", "03_c"])
    assert list(stale) == ["01_a"] and "failed" in stale["01_a"]
    with pytest.raises(report.ReportError, match="not building the book.*01_a"):
        report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], execute=False, log=None)

    # one chapter executed on another dataset: the book is mixed, --no-execute refuses it
    _run(project)  # all good again
    _run(project, dataset="insteval", only=["03_c"])
    stale = state.stale_chapters(project["generated"], ["01_a", "02_b", "03_c"])
    assert list(stale) == ["03_c"] and "insteval" in stale["03_c"]
    with pytest.raises(report.ReportError, match="03_c"):
        report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], execute=False, log=None)
    with pytest.raises(report.ReportError, match="01_a.*02_b"):  # asked for insteval: the others are stale
        report.build(dataset="insteval", book_dir=project["book"], notebooks_dir=project["notebooks"],
                     execute=False, log=None)


#: first lines of a report subprocess's script: Ctrl-C's default handling, as under a terminal (a
#: shell's background job, ``cmd &`` without job control, starts with SIGINT ignored, and Python
#: keeps an ignored SIGINT ignored)
_CTRL_C_AS_IN_A_TERMINAL = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"


@pytest.mark.slow
def test_sigint_exits_130_with_one_line(tmp_path):
    project = _project(tmp_path, sleep=120)
    script = tmp_path / "run.py"
    script.write_text(_CTRL_C_AS_IN_A_TERMINAL + "import pathlib, sys\nimport recmetrics.report.paths as P\n"
                      "P.repo_root = lambda: pathlib.Path(sys.argv[1])\n"
                      "from recmetrics import cli\nsys.exit(cli.main(['report', '--dataset', 'movielens-small']))\n")
    env = _cli_env(tmp_path, TEST_STARTED_MARKER=str(tmp_path / "started"))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = ""
        deadline = time.monotonic() + 240
        while "executing 01_a" not in err and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            err += line
        assert "executing 01_a" in err, err
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.2)   # until the kernel runs the cell (a loaded machine starts kernels slowly)
        assert (tmp_path / "started").exists(), "the kernel never started the cell"
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
        out, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [ln for ln in rest.splitlines() if ln.strip()]
    assert proc.returncode == 130, (proc.returncode, rest)
    assert lines and lines[-1].startswith("recmetrics: interrupted"), rest
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
    assert not (project["generated"] / "01_a.ipynb").exists()  # nothing half-executed in place
    assert state.read_state(project["generated"])["attempts"]["01_a"]["status"] == "interrupted"


@pytest.mark.slow
def test_scheduler_runs_the_study_on_a_dask_cluster_with_identical_results(tmp_path, kernel_env):
    distributed = pytest.importorskip("distributed")
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "01_study.ipynb", 'dataset = "movielens-small"\nscheduler = None',
              "from recmetrics.data.simulate import simulate\nfrom recmetrics.study import Study\n"
              "st = Study(simulate(40, 60, 600, seed=0), ['Pop', 'Random', 'ItemKNN(k=10)'], ['P', 'nDCG'], [5, 10],"
              " k=2, cache=False, progress=False, client=scheduler)\nprint(st.table(10).to_json())")
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        report.make_plan("quick", "movielens-small", notebooks_dir=nbs, scheduler="tcp://127.0.0.1:9")
    local = report.execute_notebooks(notebooks_dir=nbs, generated_dir=tmp_path / "local", log=None)
    # two worker threads: with one, joblib (rm.parallel's Dask path) runs the tasks in the caller
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        from distributed.diagnostics.plugin import SchedulerPlugin

        class Finished(SchedulerPlugin):
            n = 0

            def transition(self, key, start, finish, *args, **kwargs):
                Finished.n += finish == "memory"

        cluster.scheduler.add_plugin(Finished())
        log: list[str] = []
        remote = report.execute_notebooks(notebooks_dir=nbs, generated_dir=tmp_path / "remote",
                                          scheduler=cluster.scheduler_address, log=log.append)
        assert any("on the Dask cluster" in m for m in log), log
        assert Finished.n >= 6  # the work went through the cluster (3 systems x 2 folds at least)
    a, b = _stream(local[0]), _stream(remote[0])
    assert a.strip() and a == b
    assert state.read_record(remote[0])["scheduler"] == cluster.scheduler_address
    # the same inputs: the local chapter's key is the cluster chapter's key (a cluster changes nothing)
    assert state.read_record(local[0])["key"] == state.read_record(remote[0])["key"]


@pytest.mark.slow
def test_tiny_book_builds_with_appendix_and_no_stray_folder(tmp_path, kernel_env):
    project = _project(tmp_path / "proj")
    site = tmp_path / "out" / "site"
    index = report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], out=site, log=None,
                         benchmarks_dir=REPO / "benchmarks" / "results")
    assert index == site / "index.html"
    assert sorted(p.name for p in site.parent.iterdir()) == ["site"]  # no jupyter_execute/ beside --out
    intro = (site / "intro.html").read_text(encoding="utf-8")
    assert "<strong>quick</strong>" in intro and "<strong>movielens-small</strong>" in intro
    assert "{{" not in intro and "built_with" not in intro
    page = re.sub(r"<[^>]+>", "", (site / "generated" / "appendix.html").read_text(encoding="utf-8"))
    fp = report.make_plan("quick", "movielens-small", notebooks_dir=project["notebooks"]).fingerprints
    for piece in ("Reproducibility", fp["movielens-small"]["hash"], "01_a", "02_b", "03_c", "numpy",
                  "recmetrics report --profile quick --dataset movielens-small"):
        assert piece in page, piece
    # unchanged: nothing executes, the book is rebuilt in seconds
    t0 = time.perf_counter()
    log: list[str] = []
    report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], out=site, log=log.append)
    assert not [m for m in log if m.startswith("executing ")], log
    print(f"unchanged tiny book rebuilt in {time.perf_counter() - t0:.1f}s")


def test_paper_profile_takes_the_papers_set_ups_and_drops_nothing(monkeypatch):
    """05-07 run the papers' set-ups (recmetrics.papers), and a profile value a notebook does not
    declare is an error (it used to be dropped silently: the paper profile's `sizes` after the
    notebooks moved to `robustness_sizes`)."""
    from recmetrics import papers
    from recmetrics.report import profiles

    p = report.make_plan("paper", "movielens-small")
    for stem, values in papers.notebook_parameters("paper").items():
        chapter = next(c for c in p.chapters if c.stem == stem)
        assert {k: chapter.parameters[k] for k in values} == values, stem
    from_papers = papers.notebook_parameters("paper")
    typed = profiles.NOTEBOOK_PARAMETERS["paper"]
    assert not [(stem, k) for stem in typed for k in typed[stem] if k in from_papers.get(stem, {})]   # one definition each
    # the explorers run beside chapter 7 (they read it late): one core each, the notebook's default
    assert "n_jobs" not in p.chapters[[c.stem for c in p.chapters].index("09_explorers")].parameters
    bogus = {**profiles.NOTEBOOK_PARAMETERS["paper"], "01_dataset_overview": {"sizes": [1.0]}}
    monkeypatch.setitem(profiles.NOTEBOOK_PARAMETERS, "paper", bogus)
    with pytest.raises(report.ReportError, match="01_dataset_overview's sizes, which the notebook does not declare"):
        report.make_plan("paper", "movielens-small")


# ------------------------------------- keyed, staged, locked builds (issue 23 §1-§2, issue 24 §1)
def _napping_project(root: Path) -> dict[str, Path]:
    """Like :func:`_project`, but 03_c writes its meta table and then naps ``nap`` seconds (a
    parameter), so a build can be killed while a chapter's outputs are written."""
    project = _project(root)
    _notebook(project["notebooks"] / "03_c.ipynb", 'dataset = "movielens-small"\nlevel = 1\nnap = 0',
              "import os, pathlib, time\n"
              "pathlib.Path(os.environ['RECMETRICS_META_RESULTS'], 'c.txt').write_text(str(level))\n"
              "print('C wrote', level, flush=True)\ntime.sleep(nap)")
    return project


def _cli_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``recmetrics report`` subprocess building the book of :func:`_project`
    ``root`` (its work folder ``root/books/main``) with this checkout's package."""
    return dict(os.environ, PYTHONPATH=str(REPO), RECMETRICS_BOOKS=str(root / "books"), **extra)


def _report_cli(project: Path, *args: str, **kw) -> subprocess.Popen:
    """``recmetrics report ARGS`` in a subprocess whose checkout is ``project``'s folder."""
    script = project["root"] / "run.py"
    script.write_text(_CTRL_C_AS_IN_A_TERMINAL + "import pathlib, sys\nimport recmetrics.report.paths as P\n"
                      "P.repo_root = lambda: pathlib.Path(sys.argv[1])\n"
                      "from recmetrics import cli\nsys.exit(cli.main(['report', *sys.argv[2:]]))\n")
    env = _cli_env(project["root"])
    return subprocess.Popen([sys.executable, str(script), str(project["root"]), *args], cwd=project["root"], env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kw)


def _written(gen: Path, level: int) -> bool:
    """Whether chapter 03_c of a running build wrote its table (``level``) anywhere under ``gen``."""
    return any(f.read_text() == str(level) for f in gen.rglob("c.txt"))


def _wait_for(done, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the build never got there"
        time.sleep(0.2)


@pytest.mark.slow
def test_meta_tables_are_keyed_and_a_reader_sees_only_its_dependencies_tables(tmp_path, kernel_env):
    """Chapter outputs other than the notebook (the meta tables chapter 4 reads from 5-7) are staged
    and committed under the chapter's key; the reader gets only tables whose key is its
    dependency's key in this build, never a table another or a killed build left in generated/."""
    project = _project(tmp_path)
    records = _run(project)
    gen = project["generated"]
    assert (gen / "meta" / "03_c" / "c.txt").read_text() == "1"
    manifest = json.loads((gen / "meta" / "03_c" / "outputs.json").read_text())
    assert manifest["key"] == records["03_c"]["key"]
    assert not list((gen / "meta").glob("*.txt")) and not (gen / ".running").exists()
    # a table written straight into generated/meta (an older build) and one whose key is not 03_c's
    (gen / "meta" / "c.txt").write_text("999")
    (gen / "meta" / "03_c" / "c.txt").write_text("998")
    (gen / "meta" / "03_c" / "outputs.json").write_text(json.dumps({**manifest, "key": "another build"}))
    with pytest.raises(report.ReportError, match="chapter 02_b reads the outputs of 03_c, and those in generated/ "
                                                 "are not this build's"):
        _run(project, only=["02_b"], force=True)
    assert "B reads 1" in _stream(gen / "02_b.ipynb")
    log: list[str] = []
    _run(project, log.append)  # 03_c's outputs are not its key's: executed again (02_b's inputs are unchanged)
    assert [m.split()[1] for m in log if m.startswith("executing ")] == ["03_c.ipynb"]
    assert not (gen / "meta" / "c.txt").exists() and (gen / "meta" / "03_c" / "c.txt").read_text() == "1"
    _run(project, only=["02_b"], force=True)
    assert "B reads 1" in _stream(gen / "02_b.ipynb")
    # papermill's absolute input and output paths are not published in the executed notebooks
    for nb in gen.glob("*.ipynb"):
        text = nb.read_text(encoding="utf-8")
        assert str(tmp_path) not in text and str(REPO) not in text, nb.name
        meta = json.loads(text)["metadata"]["papermill"]
        assert meta["output_path"] == nb.name and not os.path.isabs(meta["input_path"]), meta


@pytest.mark.slow
def test_a_value_equal_to_the_default_is_the_default(tmp_path, kernel_env):
    """-p seed=0 where every chapter's seed is 0: every chapter unchanged, and the book is not
    refused as stale (it was: 'executed with seed = <the notebook's default>; this build asks for
    seed = 0')."""
    project = _project(tmp_path)
    _run(project)
    log: list[str] = []
    p = report.make_plan("quick", "movielens-small", overrides={"seed": 0}, notebooks_dir=project["notebooks"],
                         generated_dir=project["generated"])
    report.execute_plan(p, log=log.append)
    assert not [m for m in log if m.startswith("executing ")] and len([m for m in log if "unchanged" in m]) == 3
    stems = list(p.keys)
    assert state.stale_chapters(project["generated"], stems, p.settings, p.keys) == {}
    assert state.stale_chapters(project["generated"], stems, {"overrides": {"seed": 0}}) == {}  # --no-execute
    stale = state.stale_chapters(project["generated"], stems, {"overrides": {"seed": 1}})
    assert set(stale) == {"01_a", "02_b"} and "seed = 0; this build asks for seed = 1" in stale["01_a"]


@pytest.mark.slow
def test_sigkill_mid_build_never_leaves_a_mixed_book(tmp_path, kernel_env):
    """Build with level 1, then with -p level=2 killed (SIGKILL) after chapter 03_c wrote its table:
    the table in generated/ is still level 1's, --no-execute refuses naming 03_c, and the next
    build with level 1 shows level 1 everywhere."""
    project = _napping_project(tmp_path)
    gen = project["generated"]
    _run(project)
    assert "B reads 1" in _stream(gen / "02_b.ipynb")
    proc = _report_cli(project, "-p", "level=2", "-p", "nap=120")
    try:
        _wait_for(lambda: _written(gen, 2))  # 03_c wrote level 2 (into its scratch) and naps
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    # no table of the killed build outside its scratch folder: what the book's chapters read is level 1's
    assert not [f for f in gen.rglob("c.txt") if ".running" not in f.parts and f.read_text() == "2"]
    assert (gen / "meta" / "03_c" / "c.txt").read_text() == "1"
    assert state.read_record(gen / "03_c.ipynb")["parameters"]["level"] == 1
    stale = state.stale_chapters(gen, ["01_a", "02_b", "03_c"])
    assert list(stale) == ["03_c"] and "did not finish" in stale["03_c"], stale
    with pytest.raises(report.ReportError, match="03_c: its last execution did not finish"):
        report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], execute=False, log=None)
    log: list[str] = []
    _run(project, log.append)  # the chapters in place are level 1's, whole: nothing to execute
    assert not [m for m in log if m.startswith("executing ")], log
    assert "B reads 1" in _stream(gen / "02_b.ipynb") and "C wrote 1" in _stream(gen / "03_c.ipynb")
    assert state.stale_chapters(gen, ["01_a", "02_b", "03_c"]) == {}


@pytest.mark.slow
def test_two_builds_of_one_book_at_once_one_fails_with_one_line(tmp_path, kernel_env):
    """A second build of a book while one runs exits 2 with one line; the first completes, and its
    book is the first build's alone."""
    project = _napping_project(tmp_path)
    first = _report_cli(project, "-p", "nap=25", "--out", str(tmp_path / "site"))
    try:
        _wait_for(lambda: project["generated"].is_dir() and _written(project["generated"], 1))
        second = _report_cli(project, "-p", "level=2", "--out", str(tmp_path / "site"))
        out, err = second.communicate(timeout=240)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert second.returncode == 2 and len(lines) == 1, err
        assert lines[0].startswith("recmetrics: error: another build of this report is running (process "), err
        out, err = first.communicate(timeout=600)
        assert first.returncode == 0, err
    finally:
        for proc in (first,):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    gen = project["generated"]
    assert "B reads 1" in _stream(gen / "02_b.ipynb") and "C wrote 1" in _stream(gen / "03_c.ipynb")
    assert state.stale_chapters(gen, ["01_a", "02_b", "03_c"]) == {}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left


def test_the_lock_is_released_and_names_its_holder(tmp_path):
    from recmetrics.report.lock import book_lock

    with book_lock(tmp_path, "report"):
        with pytest.raises(report.ReportError, match=r"another build of this report is running \(process "
                                                     rf"{os.getpid()}, started "):
            with book_lock(tmp_path, "report"):
                pass
    with book_lock(tmp_path, "report"):  # released when the holder ends
        pass


def test_a_site_is_replaced_whole(tmp_path):
    """The site is built into a staging folder that replaces the old one only on success."""
    from recmetrics.report import site

    out = tmp_path / "html"
    out.mkdir()
    (out / "index.html").write_text("old")
    (out / "page.html").write_text("old")
    new = site.staging_dir(out)
    new.mkdir()
    (new / "index.html").write_text("new")
    site.replace_dir(new, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["html"] and [p.name for p in out.iterdir()] == ["index.html"]


@pytest.mark.slow
def test_a_replicated_build_keeps_each_seed_apart_and_rebuilds_nothing_unchanged(tmp_path, kernel_env):
    """Each further seed executes in its own work folder: the book's chapters stay at the first seed,
    and an unchanged rebuild executes nothing (it once executed every other seed again)."""
    project = _project(tmp_path / "proj")
    site, gen = tmp_path / "site", project["generated"]
    build = dict(book_dir=project["book"], notebooks_dir=project["notebooks"], out=site, seeds=[2, 5],
                 benchmarks_dir=REPO / "benchmarks" / "results")
    first: list[str] = []
    report.build(log=first.append, **build)
    assert sum(m.startswith("executed 01_a") for m in first) == 2, first
    assert "A movielens-small 2 3" in _stream(gen / "01_a.ipynb")
    assert "A movielens-small 5 3" in _stream(gen / ".seeds" / "seed-5" / "01_a.ipynb")
    assert (gen / "replicated" / "seed-5").is_dir() and not (gen / "replicated" / "seed-2").exists()
    again: list[str] = []
    report.build(log=again.append, **build)
    assert not [m for m in again if m.startswith(("executing ", "executed "))], again
    assert "A movielens-small 2 3" in _stream(gen / "01_a.ipynb")
