"""The own-runs book (recmetrics.report.own_runs): inputs validated before any notebook runs, fold
templates, exact round trips of in-memory runs and Studies, the generated pages, and (slow) the
whole book built with papermill from four runs written from the embedded dataset."""
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import cli
from recmetrics import study as st_mod
from recmetrics.data.io import write_trec_run
from recmetrics.data.simulate import simulate
from recmetrics.errors import FormatError, InputError, UnknownNameError
from recmetrics.report import own_book, own_runs

SYSTEMS = ["Random", "Pop", "UserKNN(k=10)"]


@pytest.fixture(scope="module")
def runs():
    return st_mod.run_systems(simulate(60, 80, 1500, seed=4), SYSTEMS, k=2, n=20, cache=False, progress=False)


@pytest.fixture()
def files(runs, tmp_path):
    """Fold 0 as another tool writes it: TREC runs and a user,item,rating CSV."""
    d = tmp_path / "files"
    d.mkdir()
    runs.folds[0][1][["user", "item", "rating"]].to_csv(d / "qrels.csv", index=False)
    paths = [write_trec_run(runs[(s, 0)], d / f"{s.split('(')[0]}.trec") for s in runs.systems]
    return d / "qrels.csv", paths


def test_plan_reads_every_file_and_names_runs_after_their_stem(files):
    qrels, paths = files
    p = own_runs.plan(qrels, paths, name="mine")
    assert list(p.source["runs"]) == ["Random", "Pop", "UserKNN"] and p.label == "mine"
    assert p.summary["folds"] == 1 and p.summary["threshold"] == 4.0
    assert [os.path.basename(n) for n in p.notebooks] == ["01_systems.ipynb", "02_discriminative_power.ipynb",
                                                          "03_robustness.ipynb", "04_agreement.ipynb",
                                                          "05_which_metric.ipynb"]
    assert p.parameters["n_permutations"] == 2000 and p.parameters["cutoffs"] == [5, 10, 20]
    paper_plan = own_runs.plan(qrels, paths, profile="paper")
    assert paper_plan.parameters["n_permutations"] == 100_000
    # the paper profile's robustness samples stop at an se of 0.01 in both chapters that draw them (one
    # stored study), the quick profile draws all its samples; -p target_se=None draws all 50
    rules = {os.path.basename(nb)[:2]: paper_plan.notebook_parameters(nb).get("target_se") for nb in paper_plan.notebooks}
    assert rules == {"01": None, "02": None, "03": 0.01, "04": None, "05": 0.01}
    assert all(p.notebook_parameters(nb).get("target_se") is None for nb in p.notebooks)
    every = own_runs.plan(qrels, paths, profile="paper", parameters={"target_se": None})
    assert all(every.notebook_parameters(nb).get("target_se") is None for nb in every.notebooks)
    # a grid per scenario: the popular items stop at 80% (003), never the ratings' 100% .. 1%
    from recmetrics.meta import robustness as rb

    paper = own_runs.plan(qrels, paths, profile="paper").parameters["sizes"]
    assert paper == {k: list(v) for k, v in rb.GRIDS_000.items()} and min(paper["popular-items"]) == 0.8
    assert min(p.parameters["sizes"]["popular-items"]) == 0.8
    # the notebooks' own defaults are the quick plan's values (no drift)
    for nb in p.notebooks:
        cell = next(c for c in json.loads(open(nb, encoding="utf-8").read())["cells"]
                    if "parameters" in c.get("metadata", {}).get("tags", []))
        defaults: dict = {}
        exec("".join(cell["source"]), defaults)
        for name, value in p.notebook_parameters(nb).items():
            if name not in ("source", "profile") and name in defaults:
                assert defaults[name] == value, (os.path.basename(nb), name)
    # every notebook gets only what it declares, and every declared name is given
    for nb in p.notebooks:
        given = p.notebook_parameters(nb)
        assert "source" in given and "profile" in given
    json.dumps(p.parameters)                          # papermill parameters: JSON only
    assert list(own_runs.plan(qrels, paths[0].parent).source["runs"]) == ["Pop", "Random", "UserKNN"]  # a directory


def test_plan_fails_before_any_notebook_runs(files, tmp_path):
    qrels, paths = files
    with pytest.raises(InputError, match="does not exist"):
        own_runs.plan(qrels, paths + [tmp_path / "missing.trec"])
    with pytest.raises(InputError, match="at least 2 runs"):
        own_runs.plan(qrels, paths[:1])
    twin = tmp_path / "Pop.run"
    twin.write_text(paths[1].read_text())
    with pytest.raises(InputError, match="two run files are named 'Pop'"):
        own_runs.plan(qrels, paths + [twin])
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 10 1 0.5 x\n2 Q0 11 1\n")
    with pytest.raises(FormatError, match="bad.trec:2"):
        own_runs.plan(qrels, paths + [bad])
    with pytest.raises(InputError, match=r"no \{fold\} field"):
        own_runs.plan(qrels, paths, folds=[0, 1])
    with pytest.raises(UnknownNameError, match="n_samples"):
        own_runs.plan(qrels, paths, parameters={"n_sample": 3})
    with pytest.raises(UnknownNameError, match="report profile"):
        own_runs.plan(qrels, paths, profile="fast")
    with pytest.raises(InputError, match="needs the judgments"):
        own_runs.plan(None, paths)


def test_fold_templates_load_every_fold(runs, tmp_path):
    for f in range(runs.n_folds):
        runs.folds[f][1][["user", "item", "rating"]].to_csv(tmp_path / f"qrels.fold{f}.csv", index=False)
        for s in runs.systems:
            write_trec_run(runs[(s, f)], tmp_path / f"{s.split('(')[0]}.fold{f}.trec")
    templates = [str(tmp_path / f"{s.split('(')[0]}.fold{{fold}}.trec") for s in runs.systems]
    p = own_runs.plan(str(tmp_path / "qrels.fold{fold}.csv"), templates, folds=[0, 1])
    assert list(p.source["runs"]) == ["Random", "Pop", "UserKNN"] and p.summary["folds"] == 2
    got = own_runs.load_study(p.source, ["P", "nDCG"], [10])
    want = st_mod.Study.from_runs(runs, None, ["P", "nDCG"], [10], progress=False)
    np.testing.assert_allclose(got.table(10).to_numpy(), want.table(10).to_numpy(), rtol=1e-12)
    assert got.n_folds == 2 and got.dataset == p.label


def test_a_study_round_trips_through_its_export(tmp_path):
    r = simulate(60, 80, 1500, seed=5)
    st = st_mod.Study(r, SYSTEMS, ["P", "ERR", "bpref"], [5, 20], k=2, cache=False, progress=False)
    p = own_runs.plan(study=st, work_dir=tmp_path, name="exported")
    back = own_runs.load_study(p.source, st.metrics, st.cutoffs)
    assert back.systems == st.systems and back.threshold == st.threshold
    assert np.array_equal(back.cube, st.cube, equal_nan=True) and np.array_equal(back.users, st.users)
    pd.testing.assert_frame_equal(back.ratings.reset_index(drop=True),
                                  st.ratings[["user", "item", "rating"]].reset_index(drop=True))
    with pytest.raises(InputError, match="work_dir"):
        own_runs.plan(study=st)


def test_in_memory_qrels_and_runs_are_written_exactly(runs, tmp_path):
    one = {s: runs[(s, 1)] for s in runs.systems}
    q = runs.qrels(1, threshold=3.5)
    p = own_runs.plan(q, one, work_dir=tmp_path)
    back = own_runs.load_study(p.source, ["nDCG", "RR"], [10])
    want = st_mod.Study.from_runs(one, q, ["nDCG", "RR"], [10], progress=False)
    assert back.threshold == 3.5
    assert np.array_equal(back.cube, want.cube, equal_nan=True)
    # moved into the book's inputs folder (what build does once the book is locked): the same study
    inputs = tmp_path / "book" / "_build" / "inputs"
    staged = own_book.stage_inputs(p.source, inputs, move=True)
    assert not list((tmp_path / "source").iterdir()) and str(tmp_path) not in json.dumps(staged)
    cwd = os.getcwd()
    try:
        os.chdir(inputs)
        moved = own_runs.load_study(staged, ["nDCG", "RR"], [10])
    finally:
        os.chdir(cwd)
    assert moved.threshold == 3.5 and np.array_equal(moved.cube, want.cube, equal_nan=True)


def test_pages_say_what_is_left_out(files):
    p = own_runs.plan(*files)
    toc = p.toc()
    assert "Not in this book" in toc and "file: left_out" in toc
    for nb in p.notebooks:
        assert f"generated/{os.path.splitext(os.path.basename(nb))[0]}" in toc
    left = p.left_out()
    for stem in own_runs.LEFT_OUT:
        if (own_runs.default_notebooks_dir() / f"{stem}.ipynb").exists():
            assert own_runs.LEFT_OUT[stem] in left
    intro = p.intro()
    assert "3 runs" in intro and "qrels.csv" in intro and "`quick` profile" in intro


def test_book_build_routes_own_runs(monkeypatch, files):
    seen = {}
    monkeypatch.setattr(own_runs, "build", lambda *a, **k: seen.update(args=a, kw=k) or "index")
    assert rm.report.build(qrels=files[0], runs=files[1], name="x") == "index"
    assert seen["args"][:2] == (files[0], files[1]) and seen["kw"]["name"] == "x"


# ----------------------------------------------------------------------------------- end to end
@pytest.mark.slow
def test_own_runs_book_builds_from_four_runs_of_the_embedded_dataset(tmp_path, monkeypatch):
    """Four runs (Random, Pop and two zoo systems) written as TREC files from movielens-small, the
    quick profile, papermill: every chapter executes without an error, a warning or a traceback,
    and the last one answers which metric to report."""
    import nbformat

    from recmetrics.report.paths import repo_root

    from published import DISTINCTIVE, files_with_paths

    monkeypatch.setenv("PYTHONPATH", str(repo_root()))     # the kernels import this checkout
    tmp_path = tmp_path / DISTINCTIVE                      # no published file may name it (issue 24 §1)
    src = own_runs.example_source(tmp_path / "files")
    assert len(src["runs"]) == 4
    runs = [p for paths in src["runs"].values() for p in paths]
    logs = []
    from recmetrics import parallel

    release = parallel.release_workers
    monkeypatch.setattr(parallel, "release_workers", lambda: (logs.append("released the readers"), release()))
    index = own_runs.build(src["qrels"][0], runs, tmp_path / "html", name="four runs", book_dir=tmp_path / "src",
                           log=logs.append)
    assert index.exists() and (tmp_path / "html" / "left_out.html").exists()
    # the processes that read the runs while planning end before the chapters run
    assert logs.index("released the readers") < min(i for i, m in enumerate(logs) if m.startswith("executing "))
    generated = tmp_path / "src" / "generated"
    executed = sorted(generated.glob("*.ipynb"))
    assert [p.name for p in executed] == [os.path.basename(n) for n in own_runs.plan(src["qrels"][0], runs).notebooks]
    assert not list(generated.glob(".partial-*")) and not (generated / ".running").exists()
    found = files_with_paths(tmp_path / "html", tmp_path)
    assert not found, found
    # the parameters table and cell name the files relative to their folder, with their content hash
    page = (tmp_path / "html" / "generated" / "01_systems.html").read_text(encoding="utf-8")
    digest = own_book.content_hash(own_runs.plan(src["qrels"][0], runs).source)[:16]
    assert f"sha256:{digest}" in page and "Pop.trec" in page and "qrels.csv" in page
    for path in executed:
        nb = nbformat.read(str(path), as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                assert out["output_type"] != "error", (path.name, out.get("ename"))
                assert not (out["output_type"] == "stream" and out["name"] == "stderr"), (path.name, out["text"][:300])
                assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {}), path.name
    assert not [m for m in logs if "WARNING" in m]
    last = nbformat.read(str(executed[-1]), as_version=4)
    text = "".join(o.get("data", {}).get("text/markdown", "") for c in last.cells for o in c.get("outputs", []))
    assert text.startswith("**Report ") and "system pairs differ significantly" in text
    html = (tmp_path / "html" / "intro.html").read_text()
    assert "Meta-evaluation of four runs" in html and "Not in this book" in html
    # the front page answers first; each chapter shows its parameters once (the table, not the code)
    assert "The answer" in html and "is the best system</strong> on" in html and "corrected p =" in html
    assert "cut-offs [5, 10, 20, 50, 100]" in html
    assert page.count("computed with these parameters") == 1 and "tag_injected-parameters" not in page
    # an unchanged rebuild keeps every chapter and the front page's answer: nothing chapters 1 and 5
    # computed is computed again, even when the run cache no longer holds it
    from recmetrics.report import own_prepared

    def recomputed(*a, **k):
        raise AssertionError("the front page's answer was computed again")

    intro = (tmp_path / "src" / "intro.md").read_text(encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(own_prepared, "advice", recomputed)
        m.setattr(own_prepared, "comparisons", recomputed)
        own_runs.build(src["qrels"][0], runs, tmp_path / "html", name="four runs", book_dir=tmp_path / "src",
                       log=logs.append)
    assert (tmp_path / "src" / "intro.md").read_text(encoding="utf-8") == intro
    # the browser test of the book on the embedded data, on every page of this one
    from browser import chromium, render_problems

    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    site = tmp_path / "html"
    pages = [site / "intro.html", site / "left_out.html", *sorted((site / "generated").glob("*.html"))]
    assert len(pages) >= 2 + len(executed), [p.name for p in pages]
    # every table fits the text column at 1280 px (none hidden behind a scroll box)
    found = render_problems(binary, site, pages, tmp_path / "profile", tables="fit")
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_notebooks_are_thin_and_type_no_measured_number():
    """Every number and verdict of the own-runs chapters comes from code; charts from recmetrics.viz."""
    import re

    for nb in sorted(own_runs.notebooks_dir().glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            src = "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                prose = re.sub(r"`[^`]*`", "", re.sub(r"(Figs?|Eqs?|Tables?)\.?\s*[\d.]+|§\s*[\d.]+", "", src))
                assert not re.search(r"\d+\.\d+", prose), (nb.name, src)
                assert not re.search(r"\b(agrees?|disagrees?)\b", prose, re.I), (nb.name, src)
            else:
                assert "alt.Chart(" not in src and ".mark_" not in src, (nb.name, src)
                assert not re.search(r"^\s*(def|class) ", src, re.M), (nb.name, src)     # logic lives in the library


def test_a_study_keeps_its_metrics_and_short_runs_are_named(tmp_path, files):
    r = simulate(60, 80, 1500, seed=5)
    st = st_mod.Study(r, ["Pop", "Random"], ["P", "RR"], [5], k=2, cache=False, progress=False)
    p = own_runs.plan(study=st, work_dir=tmp_path)
    assert p.parameters["metrics"] == ["P", "RR"] and p.parameters["cutoffs"] == [5]
    assert "shorter than the deepest cut-off" not in p.intro()
    short = own_runs.plan(*files, parameters={"cutoffs": [10, 50]})        # the runs are 20 deep
    assert "Runs shorter than the deepest cut-off (50): `Random` (20)" in short.intro()


# ------------------------------- keyed, confined, locked own-runs books (issue 23 §1, issue 24 §1)
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def runs_root(tmp_path, monkeypatch):
    """Own-runs books' work folders go to a temporary book/_build/runs/ (its parent must stay empty
    otherwise), and their sites, built without --out, under the temporary folder, the builds' current
    folder (``recmetrics-runs/<folder>``)."""
    root = tmp_path / "book" / "_build" / "runs"
    monkeypatch.setattr(own_book, "runs_root", lambda: root)
    monkeypatch.chdir(tmp_path)
    return root


def _tiny_notebooks(folder: Path) -> Path:
    """Two own-runs chapters that load the source and print its systems (seconds, not minutes)."""
    import nbformat

    folder.mkdir()
    for stem in ("01_x", "02_y"):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {stem}"),
                    nbformat.v4.new_code_cell('source = None\nprofile = "quick"\nseed = 0\nmetrics = ["P"]\n'
                                              'cutoffs = [5, 10, 20]', metadata={"tags": ["parameters"]}),
                    nbformat.v4.new_code_cell("from recmetrics.report import own_runs\n"
                                              "st = own_runs.load_study(source, ['P'], [5])\n"
                                              "print('systems', ' '.join(st.systems))")]
        nbformat.write(nb, str(folder / f"{stem}.ipynb"))
    return folder


def _stdout(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))


def _report(capsys, *args):
    rc = cli.main(["report", *map(str, args)])
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize("params, words", [
    (["cutoffs=[0]"], ["-p cutoffs=[0]", "integers >= 1"]),
    (["cutoffs=[]"], ["-p cutoffs=[]", "a non-empty list"]),
    (["n_permutations=-5"], ["-p n_permutations=-5", "an integer >= 1"]),
    (["seed=-1"], ["-p seed=-1", "an integer >= 0"]),
    (["metrics=['Nope']"], ["-p metrics", "'Nope'"]),
    (["n_samples=0"], ["-p n_samples=0", "an integer >= 1"]),
    (["cutoffs=['a']"], ["-p cutoffs=['a']", "a non-empty list of cut-offs, integers >= 1"]),
])
def test_own_runs_arguments_are_checked_before_anything_runs(capsys, files, runs_root, monkeypatch, params, words):
    def refuse(*a, **k):
        raise RuntimeError("a notebook was executed before the arguments were checked")

    monkeypatch.setattr("recmetrics.report.execute.execute_plan", refuse)
    qrels, paths = files
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, *[x for p in params for x in ("-p", p)])
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error:"), err
    for w in words:
        assert w in err, (w, err)
    assert not runs_root.exists()  # nothing written


def test_a_threshold_leaving_no_relevant_user_fails_at_planning(capsys, files, runs_root):
    qrels, paths = files
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "-l", "6")
    assert rc == 2 and len(err.splitlines()) == 1 and "no user has a relevant judgment" in err and "6" in err, err
    assert not runs_root.exists()


def test_names_are_confined_and_distinct(capsys, files, runs_root, tmp_path):
    """`--name ..` stays inside book/_build/runs/; "a b", "a/b", "a-b" get three folders; two
    unnamed builds of different inputs get two (--no-execute: refused, nothing executed yet)."""
    qrels, paths = files
    for name in ("..", "a b", "a/b", "a-b", "../../escape"):
        rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "--name", name, "--no-execute")
        assert rc == 2 and "not executed" in err, err
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "--no-execute")
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths[:2], "--no-execute")
    folders = sorted(p.name for p in runs_root.iterdir())
    assert len(folders) == 7, folders
    assert sorted(p.name for p in (tmp_path / "book" / "_build").iterdir()) == ["runs"]  # nothing beside
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book", "files"]
    assert sum(f.startswith("runs-") for f in folders) == 2 and sum(f.startswith("a-b-") for f in folders) == 3
    for f in runs_root.iterdir():
        assert sorted(p.name for p in f.iterdir()) == ["src"], f  # no site from a refused build


def test_inputs_are_shown_by_name_and_content_hash(files, tmp_path):
    """The source a chapter receives (shown under its title and in its parameters cell) names the
    files relative to the folder the chapter runs in, plus their content hash: no local path."""
    qrels, paths = files
    p = own_runs.plan(qrels, paths)
    folder = tmp_path / "book" / "_build" / "inputs"
    source = own_book.stage_inputs(p.source, folder)
    assert source["qrels"] == ["qrels.csv"] and source["runs"] == {"Random": ["Random.trec"], "Pop": ["Pop.trec"],
                                                                   "UserKNN": ["UserKNN.trec"]}
    assert source["content"] == f"sha256:{own_book.content_hash(p.source)[:16]}"
    assert str(tmp_path) not in json.dumps(source)
    rplan = own_book.report_plan(p, source, tmp_path / "generated", folder)
    for chapter in rplan.chapters:
        assert str(tmp_path) not in json.dumps([chapter.parameters, chapter.shown]) and chapter.cwd == folder
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        assert own_runs.load_study(source, ["P"], [5]).systems == ["Random", "Pop", "UserKNN"]
    finally:
        os.chdir(cwd)
    # another content is another hash, and another key for every chapter
    other = dict(p.source, threshold=5.0)
    assert own_book.content_hash(other) != own_book.content_hash(p.source)


def test_a_second_build_of_the_same_book_fails_with_one_line(capsys, files, runs_root):
    from recmetrics.report.lock import book_lock

    qrels, paths = files
    p = own_runs.plan(qrels, paths, name="base")
    book = own_book.book_folder("base", own_book.content_hash(p.source)) / "src"
    with book_lock(book):
        rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "--name", "base")
    assert rc == 2 and len(err.splitlines()) == 1 and "another build of this own-runs book is running" in err, err


@pytest.mark.slow
def test_no_execute_refuses_chapters_of_other_inputs(capsys, files, runs_root, tmp_path, monkeypatch):
    """Build `--name base` on three runs, then `--no-execute` on two others: refused (exit 2, one
    line naming the chapters); the site and the intro still show the three runs."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setattr(own_runs, "notebooks_dir", lambda: _tiny_notebooks(tmp_path / "nbs")
                        if not (tmp_path / "nbs").exists() else tmp_path / "nbs")
    qrels, paths = files
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "--name", "base")
    assert rc == 0, err
    (folder,) = runs_root.iterdir()
    gen = folder / "src" / "generated"
    site = tmp_path / "recmetrics-runs" / folder.name    # the default site: in the current folder
    assert "systems Random Pop UserKNN" in _stdout(gen / "01_x.ipynb")
    intro = (site / "intro.html").read_bytes()
    rc, err = _report(capsys, "--qrels", qrels, "--runs", paths[0], paths[1], "--name", "base", "--no-execute")
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "01_x: executed with other inputs" in err and "02_y: executed with other inputs" in err, err
    assert (site / "intro.html").read_bytes() == intro and b"3 runs" in intro
    # the same inputs again: every chapter unchanged, the book builds without executing
    rc, err = _report(capsys, "--qrels", qrels, "--runs", *paths, "--name", "base", "--no-execute")
    assert rc == 0, err
    # no local path in the site: parameters tables and cells name the files and their hash
    for page in site.rglob("*"):
        if page.is_file():
            data = page.read_bytes()
            assert str(tmp_path).encode() not in data and str(REPO).encode() not in data, page


# ----------------------------------------------------------------------------- the chapters' words
def test_best_system_per_metric_in_words():
    """Chapter 1 names the best system of each metric and the systems it does and does not beat
    significantly (by name, not by letter); a metric where lower is better is read that way."""
    from recmetrics.report.own_prose import best_by_metric

    rng = np.random.default_rng(0)
    users = [f"u{i}" for i in range(60)]
    base = rng.random(60)
    noise = rng.normal(0, 0.3, 60)
    noise -= noise.mean()                # SLIM: 0.01 below EASE on average, too noisy to tell apart
    good = pd.DataFrame([base + 0.5, base + 0.49 + noise, base], index=["EASE", "SLIM", "Pop"], columns=users)
    cmp = rm.meta.compare.compare({"nDCG@10": good, "RMSE": good}, n_permutations=500, seed=0)
    text = best_by_metric(cmp)
    lines = text.splitlines()
    assert lines[0] == ("* **nDCG@10**: best **EASE** (" + f"{good.loc['EASE'].mean():.4f}" + "), significantly "
                        "better than Pop; not significantly better than SLIM (" + f"{good.loc['SLIM'].mean():.4f}).")
    assert lines[1].startswith("* **RMSE**: best **Pop** (") and "lower is better" in lines[1]
    assert "significantly better than EASE and SLIM" in lines[1] or "every other system (EASE and SLIM)" in lines[1]
    assert lines[-1] == "Significant: permutation test, Holm correction, corrected p < 0.05."
    # one system best on every metric: said first, once
    same = best_by_metric(rm.meta.compare.compare({"nDCG@10": good, "P@10": good}, n_permutations=500, seed=0))
    assert same.splitlines()[0] == "**EASE** is best on all 2 metrics."
    # two identical runs: tied first, never one of them "best on all metrics"
    twins = pd.concat([good, good.loc[["EASE"]].rename(index={"EASE": "EASE copy"})])
    tied = best_by_metric(rm.meta.compare.compare({"nDCG@10": twins, "P@10": twins}, n_permutations=500, seed=0))
    assert tied.splitlines()[0] == "**EASE** and **EASE copy** are tied first on all 2 metrics (identical means)."
    assert "is best on all" not in tied
    assert tied.splitlines()[2].startswith("* **nDCG@10**: **EASE** and **EASE copy** tied first (")
    assert "than EASE copy" not in tied and "than EASE (" not in tied      # the tied are not compared again


def test_range_sentence_is_never_degenerate():
    from recmetrics.report.own_prose import range_sentence

    assert range_sentence({"P@20": 6, "AP@20": 6}, of=6) == "6 of 6 for every metric"
    assert range_sentence({"P@20": 3, "AP@20": 6}, of=6) == "from 3 (P@20) to 6 (AP@20) of 6"
    assert "to 6 (P" not in range_sentence({"P": 6}, of=6)


def test_users_are_counted_once_over_folds():
    """The book counts distinct users, not user x fold units (671 users in 3 folds are not 2,013)."""
    from recmetrics.report.own_prose import users_sentence

    class Q:
        def __init__(self, users):
            self.relevant_users = np.array(users)

    class S:
        qrels = [Q(["a", "b", "c"]), Q(["a", "b"]), Q(["c", "d"])]
        n_folds = 3

        threshold = 4.0

    assert users_sentence(S()) == ("4 users with a relevant judgment (rating ≥ 4), scored once per fold whose test "
                                   "set holds them: 7 user × fold units over the 3 folds")
    S.qrels, S.n_folds = S.qrels[:1], 1
    assert users_sentence(S()) == "3 users with a relevant judgment (rating ≥ 4)"


def test_one_number_format_per_table():
    from recmetrics.report.own_prose import fixed

    frame = pd.DataFrame({"a": [0.1968, 0.23651], "b": [2, 3000], "c": [1e-6, np.nan]})
    html = fixed(frame).to_html()
    for shown in ("0.1968", "0.2365", "3,000", "0.0000"):
        assert shown in html, shown
    assert "e-0" not in html and "nan" not in html


def test_plan_shows_the_threshold_actually_used(files):
    """No `None` threshold in what the book shows: the file type's default is resolved at plan time."""
    qrels, paths = files
    p = own_runs.plan(qrels, paths)
    assert p.source["threshold"] == p.summary["threshold"] == 4.0


# ------------------------------------------------------------------ cut-offs follow the runs' depth
def test_default_cutoffs_follow_the_depth_of_the_runs(runs, tmp_path):
    """Top-100 lists get 5, 10, 20, 50, 100 (not the profile's 5, 10, 20); top-20 lists 5, 10, 20;
    runs of different depths stop at the shallowest; given cut-offs are kept; the front page says
    which rule made them."""
    from recmetrics.report.own_depth import depth_cutoffs

    assert depth_cutoffs([100, 100]) == [5, 10, 20, 50, 100]
    assert depth_cutoffs([20, 100]) == [5, 10, 20] and depth_cutoffs([30]) == [5, 10, 20, 30]
    with pytest.raises(InputError, match="no run"):
        depth_cutoffs([])
    with pytest.raises(InputError, match="depth 0"):
        depth_cutoffs([0, 100])
    deep = st_mod.run_systems(simulate(60, 300, 3000, seed=4), ["Random", "Pop"], k=2, n=100, cache=False,
                              progress=False)
    d = tmp_path / "deep"
    d.mkdir()
    deep.folds[0][1][["user", "item", "rating"]].to_csv(d / "qrels.csv", index=False)
    paths = [write_trec_run(deep[(s, 0)], d / f"{s}.trec") for s in deep.systems]
    for profile in ("quick", "paper"):
        p = own_runs.plan(d / "qrels.csv", paths, profile=profile)
        assert p.parameters["cutoffs"] == [5, 10, 20, 50, 100], profile
        assert own_runs.load_study(p.source, ["P"], [5, 10, 20, 50, 100]).cutoffs == [5, 10, 20, 50, 100]
    assert "The cut-offs follow the depth of the runs (every run ranks 100 items per user)" in p.intro()
    shallow = write_trec_run(runs[("Pop", 0)], d / "Short.trec")          # 20 deep
    mixed = own_runs.plan(d / "qrels.csv", paths + [shallow])
    assert mixed.parameters["cutoffs"] == [5, 10, 20]
    assert "up to the shallowest run's depth" in mixed.intro()
    given = own_runs.plan(d / "qrels.csv", paths, parameters={"cutoffs": [10, 100]})
    assert given.parameters["cutoffs"] == [10, 100] and given.overrides == {"cutoffs": [10, 100]}
    assert "follow the depth" not in given.intro()


def test_the_front_page_names_the_best_system_by_how_much_and_whether_significantly(files, tmp_path):
    """The own-runs book's front page answers first: the best system on the metric chapter 5
    recommends, its margin over the runner-up and the corrected p-value of that pair; identical runs
    are tied first; AP and infAP, the same measure on judgments without pooled-but-unjudged labels,
    are said to be so, with the reason."""
    import re
    import shutil

    from recmetrics.meta.advice import INFAP_WHY

    qrels, paths = files
    p = own_runs.plan(qrels, paths)
    answer = own_runs.front_answer(p)
    first = answer.split("\n\n")[0]
    assert re.match(r"\*\*\w+ is the best system\*\* on \w+@\d+, the metric chapter 5 recommends for these runs: "
                    r"[0-9.]+, [0-9.]+ \([0-9.]+ %\) above the runner-up \w+ \([0-9.]+\), (a|not a) significant "
                    r"difference \(permutation test, Holm correction, corrected p = [0-9.e-]+ [<≥] 0.05\)\.", first), first
    assert INFAP_WHY in answer
    intro = p.intro(answer)
    assert intro.index("## The answer") < intro.index("## The runs") and first in intro
    twins = [*paths, shutil.copy(paths[0], tmp_path / "Twin.trec")]
    for path in paths[1:]:
        twins.append(shutil.copy(path, tmp_path / f"{path.stem}2.trec"))
    tied = own_runs.front_answer(own_runs.plan(qrels, twins)).split("\n\n")[0]
    assert " are tied first** on " in tied and "is the best system" not in tied, tied


def test_the_front_page_answer_is_kept_while_its_chapters_are(tmp_path):
    """Stored with the keys of chapters 1 and 5: used again while both keep theirs, computed again
    when either changes or the stored file is unreadable; other chapters' keys do not matter."""
    calls = []

    def compute():
        calls.append(1)
        return f"answer {len(calls)}"

    keys = {"01_systems": "a", "03_robustness": "x", "05_which_metric": "b"}
    assert own_book.front_page_answer(tmp_path, keys, compute) == "answer 1"
    assert own_book.front_page_answer(tmp_path, {**keys, "03_robustness": "y"}, compute) == "answer 1"
    assert own_book.front_page_answer(tmp_path, {**keys, "05_which_metric": "c"}, compute) == "answer 2"
    assert own_book.front_page_answer(tmp_path, {**keys, "05_which_metric": "c"}, compute) == "answer 2"
    assert own_book.front_page_answer(tmp_path, {**keys, "01_systems": "z"}, compute) == "answer 3"
    for bad in ("{", "[]", '{"keys": {}}', '{"keys": {"01_systems": "z", "05_which_metric": "b"}, "answer": 3}'):
        (tmp_path / own_book.ANSWER_FILE).write_text(bad, encoding="utf-8")
        assert own_book.front_page_answer(tmp_path, keys, compute) == f"answer {len(calls)}"
    assert len(calls) == 7 and own_book.front_page_answer(tmp_path, keys, compute) == "answer 7"


def test_a_table_wider_than_the_column_fails_the_page_check():
    """tests/browser.py: a table wider than the text column is a problem even when a box lets it
    scroll (``tables="fit"``, the own-runs book), and always when it does not scroll."""
    from browser import page_problems

    state = {"prose": "", "outputs": [], "cut": [], "wideWidgets": [], "wideTables": [], "typeset": 0, "math": 0,
             "mathErrors": 0, "overWide": [[1, 1500, 688, "@5 P Recall"]]}
    assert page_problems(state) == {}                                   # scrolls inside the column
    assert list(page_problems(state, "fit")) == ["table wider than the column, scrolling ([table, width, column "
                                                 "width, first words])"]
    assert "table wider than the column" in page_problems({**state, "wideTables": [[1, 1788, False]]})
    with pytest.raises(ValueError, match="fit"):
        page_problems(state, "wide")


def test_the_mean_and_candidate_tables_are_narrow(files):
    """Chapter 1's means: one column per metric, rows grouped by cut-off (not metrics x cut-offs
    columns); chapter 5's candidates: short headers, the front first, "dominated by" short (never cut
    with an ellipsis, which the page check refuses)."""
    from recmetrics.report.own_prose import CANDIDATE_COLUMNS, candidates_table, mean_table, pairs_table

    st = own_runs.load_study(own_runs.plan(*files).source, own_runs.METRICS, [5, 10, 20])
    means = mean_table(st)
    assert list(means.columns) == own_runs.METRICS and means.index.names == ["cut-off", "system"]
    assert means.loc[(10, "Pop"), "nDCG"] == pytest.approx(st.table(10).loc["Pop", "nDCG"])
    table = pd.DataFrame({"metric": ["P", "RR", "AP"], "cutoff": 5, "dp": [0.3, 0.1, 0.2], "dp_se": 0.0,
                          "significant": 1.0, "robustness": 0.9, "robustness_se": 0.0, "agreement": 1.0,
                          "tau_geometric": 1.0, "dominated_by": ["AP@5, RR@5, X@5", "", ""],
                          "on_front": [False, True, True]}, index=["P@5", "RR@5", "AP@5"])
    pairs = pd.DataFrame({"metric": "P", "a": ["x"], "b": ["y"], "mean_a": 0.2, "mean_b": 0.1, "diff": 0.1, "p": 0.01,
                          "p_adj": 0.02, "significant": True, "winner": "x", "d_z": 0.5})
    assert list(pairs_table(pairs).columns) == ["mean a", "mean b", "diff", "p", "p adj.", "sig.", "d_z"]
    shown = candidates_table(table)
    assert list(shown.index) == ["RR@5", "AP@5", "P@5"] and list(shown.columns) == list(CANDIDATE_COLUMNS.values())
    assert shown.loc["P@5", "dominated by"] == "3: AP@5 and 2 more"
    assert max(len(c) for c in shown.columns) <= 14
