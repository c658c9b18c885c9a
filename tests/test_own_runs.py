"""The own-runs book (recmetrics.report.own_runs): inputs validated before any notebook runs, fold
templates, exact round trips of in-memory runs and Studies, the generated pages, and (slow) the
whole book built with papermill from four runs written from the embedded dataset."""
import json
import os

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics import study as st_mod
from recmetrics.data.io import write_trec_run
from recmetrics.data.simulate import simulate
from recmetrics.errors import FormatError, InputError, UnknownNameError
from recmetrics.report import own_runs

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
    assert own_runs.plan(qrels, paths, profile="paper").parameters["n_permutations"] == 100_000
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

    monkeypatch.setenv("PYTHONPATH", str(repo_root()))     # the kernels import this checkout
    src = own_runs.example_source(tmp_path / "files")
    assert len(src["runs"]) == 4
    runs = [p for paths in src["runs"].values() for p in paths]
    logs = []
    index = own_runs.build(src["qrels"][0], runs, tmp_path / "html", name="four runs", book_dir=tmp_path / "src",
                           log=logs.append)
    assert index.exists() and (tmp_path / "html" / "left_out.html").exists()
    generated = tmp_path / "src" / "generated"
    executed = sorted(generated.glob("*.ipynb"))
    assert [p.name for p in executed] == [os.path.basename(n) for n in own_runs.plan(src["qrels"][0], runs).notebooks]
    assert not list(generated.glob(".partial-*"))
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
    # the browser test of the book on the embedded data, on every page of this one
    from browser import chromium, render_problems

    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (bash .ci/ensure-chromium installs it)")
    site = tmp_path / "html"
    pages = [site / "intro.html", site / "left_out.html", *sorted((site / "generated").glob("*.html"))]
    assert len(pages) >= 2 + len(executed), [p.name for p in pages]
    found = render_problems(binary, site, pages, tmp_path / "profile")
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
