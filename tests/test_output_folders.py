"""An output folder belongs to one build and to us: the lock of ``--out``, each build's own staging
folder (none left behind by a failure), the folders ``--out`` may not be (the sources, a folder
holding them, the working folder, someone's files), the marker of our sites, and a Findings page
that reads only its own build's findings.

Most cases stop at planning (nothing executes) or stub the Sphinx child; the concurrent builds run
tiny throw-away chapters (:mod:`test_report_build`'s project)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recmetrics import cli, report
from recmetrics.errors import InputError
from recmetrics.report import lock, plan as plan_mod, site
from test_own_runs import files, runs, runs_root  # noqa: F401 - fixtures
from test_report_build import REPO, _notebook, _project, _run, checkout_pythonpath

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock, process groups")


def _cli(capsys, *args):
    rc = cli.main(["report", *args])
    return rc, capsys.readouterr().err.strip()


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def refuse_work(monkeypatch):
    """Fail the test if the report executes, vendors or builds anything."""
    def refuse(*a, **k):
        raise AssertionError("the report went past planning")

    for name in ("execute_plan", "vendor_js", "build_book"):
        monkeypatch.setattr(f"recmetrics.report.book.{name}", refuse)


# ------------------------------------------------------------------ folders --out may not be
@pytest.mark.parametrize("out, words", [
    ("book/guide", ["book/guide: is inside the book's sources (book/)"]),
    ("book", ["book: is the book's sources (book/)"]),
    ("book/generated", ["is inside the book's sources"]),
    ("notebooks/site", ["is inside the notebooks' sources (notebooks/)"]),
    ("recmetrics/site", ["is inside the recmetrics package's sources (recmetrics/)"]),
    (".", [f"--out {REPO}: holds", "which the site would replace"]),
    ("..", [f"--out {REPO.parent}: holds", "which the site would replace"]),
    ("/", ["--out /: holds"]),
    ("book/_build", ["book/_build: is the build folder of the book's sources (book/_build/)"]),
])
def test_an_out_among_the_sources_or_holding_them_is_refused_at_planning(capsys, monkeypatch, refuse_work,
                                                                         out, words):
    monkeypatch.chdir(REPO)
    before = _listing(REPO / "book" / "guide")
    rc, err = _cli(capsys, "--no-execute", "--out", out)
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("recmetrics: error: "), err
    for w in words:
        assert w in err, (w, err)
    assert _listing(REPO / "book" / "guide") == before   # nothing written among the guide's sources


def test_a_book_s_build_folder_and_a_folder_in_the_checkout_are_fine(tmp_path, monkeypatch):
    """The default site (``book/_build/html``, even one built before sites were marked) lives in
    ``_build/``; the build folder's other outputs are not a site; a site inside the checkout
    (``make report REPORT_ARGS="--out site"``) is the user's choice."""
    book = tmp_path / "book"
    (book / "_build" / "html").mkdir(parents=True)
    (book / "_build" / "html" / "index.html").write_text("an old site")
    (book / "_build" / "runs" / "x-0123").mkdir(parents=True)
    (book / "_build" / "runs" / "x-0123" / "src").mkdir()
    assert plan_mod.check_out(book / "_build" / "html", book) is not None
    for other in (book / "_build" / "runs", book / "_build" / "runs" / "x-0123"):
        with pytest.raises(InputError, match="not empty and is not a site recmetrics built"):
            plan_mod.check_out(other, book)
    monkeypatch.chdir(REPO)
    assert plan_mod.check_out("a-site-of-the-test") == Path("a-site-of-the-test")
    assert not (REPO / "a-site-of-the-test").exists()


@pytest.mark.parametrize("inside", [False, True])
def test_out_dot_and_the_working_folder_are_refused(tmp_path, monkeypatch, capsys, refuse_work, inside):
    """``--out .`` (and a folder holding the working folder) outside any checkout: the site would
    replace the folder the command runs in. An empty one too (it used to fail only after Sphinx,
    "Device or resource busy", leaving ``..staging/`` behind)."""
    here = tmp_path / "work"
    (here / "sub").mkdir(parents=True)
    monkeypatch.chdir(here / "sub" if inside else here)
    rc, err = _cli(capsys, "--no-execute", "--out", ".." if inside else ".")
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "is the folder this command runs in, or holds it" in err, err
    assert _listing(tmp_path) == ["work", "work/sub"]


def test_a_non_empty_folder_that_is_not_our_site_is_refused(tmp_path, capsys, refuse_work):
    mine = tmp_path / "mine"
    (mine / "data").mkdir(parents=True)
    (mine / "thesis.txt").write_text("chapter 1")
    rc, err = _cli(capsys, "--no-execute", "--out", str(mine))
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert f"--out {mine}: is a folder that is not empty and is not a site recmetrics built" in err
    assert _listing(mine) == ["data", "thesis.txt"] and _listing(tmp_path) == ["mine", "mine/data", "mine/thesis.txt"]


def test_an_empty_folder_a_new_one_and_our_site_are_accepted(tmp_path):
    (tmp_path / "empty").mkdir()
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "index.html").write_text("<html></html>")
    site.mark_site(ours)
    for out in (tmp_path / "empty", ours, tmp_path / "new" / "deeper"):
        assert plan_mod.check_out(out) == out
    assert not (tmp_path / "new").exists()   # nothing written at planning: the build creates it
    assert site.is_site(ours) and not site.is_site(tmp_path / "empty")


def test_an_unwritable_place_is_refused(tmp_path):
    """Where the site could not be staged (a read-only folder; as root, sysfs), refused at planning."""
    if os.geteuid() == 0:
        if not Path("/sys/kernel").is_dir():
            pytest.skip("no read-only folder for root here")
        with pytest.raises(InputError, match="--out /sys/rm-site: cannot write there"):
            plan_mod.check_out("/sys/rm-site")
        return
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InputError, match="cannot write there"):
            plan_mod.check_out(ro / "site")
    finally:
        ro.chmod(0o700)


# ------------------------------------------------------------------------- the folder's lock
def test_the_out_lock_names_its_holder_and_is_shared_by_every_spelling(tmp_path, monkeypatch):
    out = tmp_path / "site"
    (tmp_path / "link").symlink_to(tmp_path)
    monkeypatch.chdir(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom recmetrics.report.lock import out_lock\n"
                               "with out_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)\n",
                               str(out)], env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for spelling in (out, "site", "./site/", tmp_path / "link" / "site"):
            with pytest.raises(report.ReportError, match=rf"--out {spelling}: another build is writing into this "
                                                         rf"folder \(process {holder.pid}, started "):
                with lock.out_lock(spelling):
                    pass
    finally:
        holder.kill()
        holder.wait()
    (tmp_path / "to-site").symlink_to(out)
    with lock.out_lock(out):
        with lock.out_lock("site"):   # the same process again (a build calling build_book): re-entrant
            pass
        assert lock.out_lock_path("to-site") == lock.out_lock_path(out)   # a link to the folder: its lock
    assert not lock.out_lock_path(out).exists()   # removed when released: nothing left beside the site


def _napping(root: Path, nap: int) -> dict:
    project = _project(root)
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False',
              f"import time\ntime.sleep({nap})\nprint('A')")
    return project


def _report(project: dict, *args: str) -> subprocess.Popen:
    script = project["root"] / "run.py"
    script.write_text("import pathlib, sys\nimport recmetrics.report.paths as P\n"
                      "P.repo_root = lambda: pathlib.Path(sys.argv[1])\n"
                      "from recmetrics import cli\nsys.exit(cli.main(['report', *sys.argv[2:]]))\n")
    # each project builds in a work folder of its own (its books/), as a checkout of its own would
    return subprocess.Popen([sys.executable, str(script), str(project["root"]), *args], cwd=project["root"],
                            env=dict(os.environ, PYTHONPATH=str(REPO), RECMETRICS_BOOKS=str(project["root"] / "books")),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_two_different_books_into_one_out_at_once(tmp_path):
    """Book X builds into ``site``; book Y (another book: another book lock) asks for ``site`` too and
    exits 2 at once naming X's process; X's site is X's alone, nothing staged is left beside it."""
    x, y = _napping(tmp_path / "x", 20), _project(tmp_path / "y")
    out = tmp_path / "out" / "site"
    first = _report(x, "--out", str(out), "--jobs", "1")
    try:
        deadline = time.monotonic() + 240
        while not (x["generated"] / ".running").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        second = _report(y, "--no-execute", "--out", str(out))
        _, err = second.communicate(timeout=240)
        lines = err.strip().splitlines()
        assert second.returncode == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"recmetrics: error: --out {out}: another build is writing into this folder "
                                   f"(process {first.pid}, started "), err
        _, err = first.communicate(timeout=600)
        assert first.returncode == 0, err[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
    assert sorted(p.name for p in out.parent.iterdir()) == ["site"]
    assert site.is_site(out) and (out / "generated" / "01_a.html").exists()
    work = y["root"] / "books" / "main"        # Y stopped at the folder's lock: no chapter, page or site of its own
    assert not (work / "generated").exists() and not (work / "_build" / "html").exists(), _listing(work)


# --------------------------------------------------------------------- each build's staging
def _fake_sphinx(monkeypatch, behave):
    """Stub the Sphinx child: ``behave(staging folder)`` returns an exit status or raises."""
    def run_sphinx(child, args):
        rc = behave(Path(args["out"]))
        return subprocess.CompletedProcess(["sphinx"], rc, "", "")

    monkeypatch.setattr(site, "_run_sphinx", run_sphinx)


def _book(tmp_path: Path) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    return book


def test_a_site_is_staged_per_build_marked_and_nothing_is_left(tmp_path, monkeypatch):
    out = tmp_path / "site"
    seen = []

    def sphinx(staging):
        seen.append(staging)
        (staging / "index.html").write_text("new")
        return 0

    _fake_sphinx(monkeypatch, sphinx)
    # what builds killed before could clean up left beside the site
    (tmp_path / ".site.staging").mkdir()
    (tmp_path / ".site.staging-abc123").mkdir()
    (tmp_path / ".site.old").mkdir()
    index = site.build_book(_book(tmp_path), out, log=None)
    assert index == out / "index.html" and site.is_site(out) and (out / ".nojekyll").exists()
    site.build_book(tmp_path / "book", out, log=None)
    assert len(seen) == 2 and seen[0] != seen[1] and all(s.name.startswith(".site.staging-") for s in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book", "site"]
    # through a symbolic link to the site's folder: the folder is replaced, the link stays a link
    (tmp_path / "link").symlink_to(out)
    assert site.build_book(tmp_path / "book", tmp_path / "link", log=None) == out / "index.html"
    assert (tmp_path / "link").is_symlink() and site.is_site(out) and len(seen) == 3


@pytest.mark.parametrize("failure", ["exit 1", "no index.html", "KeyboardInterrupt", "Terminated", "OSError"])
def test_no_failure_leaves_a_staging_folder(tmp_path, monkeypatch, failure):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("old")
    site.mark_site(out)

    def sphinx(staging):
        (staging / "page.html").write_text("half")
        if failure == "exit 1":
            return 1
        if failure == "no index.html":
            (staging / "index.html").unlink()
            return 0
        from recmetrics.report.processes import Terminated

        raise {"KeyboardInterrupt": KeyboardInterrupt, "Terminated": Terminated, "OSError": OSError}[failure]()

    _fake_sphinx(monkeypatch, sphinx)
    from recmetrics.report import processes

    with pytest.raises((report.ReportError, KeyboardInterrupt, OSError)):
        site.build_book(_book(tmp_path), out, log=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book", "site"]
    assert (out / "index.html").read_text() == "old" and not (out / "page.html").exists()


# ------------------------------------------------------------------ findings: the build's own
_FINDING = ("import json, os, pathlib\n"
            "row = {'id': 'c1', 'paper': '000', 'claim': 'claim of ' + who, 'paper_evidence': 'p', "
            "'verdict': 'agrees', 'value': 1.0, 'our_evidence': 'ours'}\n"
            "pathlib.Path(os.environ['RECMETRICS_FINDINGS_DIR'], '01_a.json').write_text("
            "json.dumps({'chapter': '01_a', 'findings': [row]}))")


@pytest.mark.slow
def test_the_findings_page_reads_only_its_builds_findings(tmp_path, monkeypatch):
    """Findings another build (or an older run, or a chapter outside the book) left in the folder
    are not on this build's Findings page, nor in the front page's glance."""
    monkeypatch.setenv("PYTHONPATH", checkout_pythonpath())
    project = _project(tmp_path)
    _notebook(project["notebooks"] / "01_a.ipynb", 'dataset = "movielens-small"\nseed = 0\nn = 3\nfail = False\n'
              'who = "this build"', _FINDING)
    _run(project)
    gen = project["generated"]
    # another build's chapter, and a findings file this chapter's manifest does not list
    (gen / "findings" / "07_other.json").write_text(json.dumps({"chapter": "07_other", "findings": [
        {"id": "c9", "paper": "003", "claim": "claim of another build", "paper_evidence": "p", "verdict": "disagrees",
         "value": 0.0, "our_evidence": "theirs"}]}))
    glance = {}
    monkeypatch.setattr("recmetrics.report.book.build_book",
                        lambda book, out, **kw: glance.update(kw["substitutions"]) or Path(out or book) / "index.html")
    report.build(book_dir=project["book"], notebooks_dir=project["notebooks"], execute=False, log=None,
                 check_offline=False)
    page = (gen / "99_findings.md").read_text(encoding="utf-8")
    assert "claim of this build" in page and "another build" not in page
    assert "Valcarce et al., RecSys 2018" not in glance["findings_glance"]
    # the same chapter run again under other inputs: its old findings are not this build's
    meta = json.loads((gen / "meta" / "01_a" / "outputs.json").read_text())
    (gen / "meta" / "01_a" / "outputs.json").write_text(json.dumps({**meta, "key": "another build's key"}))
    from recmetrics.report.findings_page import write_findings_page

    assert write_findings_page(gen, {"01_a": state_key(gen, "01_a")}) is None
    assert not (gen / "99_findings.md").exists()


def state_key(gen: Path, stem: str) -> str:
    from recmetrics.report.state import read_record

    return read_record(gen / f"{stem}.ipynb")["key"]


def test_a_build_reads_only_the_results_its_chapters_committed(tmp_path):
    """The reference pages' numbers (``generated/results``) as the findings: only the files the
    book's chapters committed under the build's keys (another build's, an older run's are left)."""
    from recmetrics.report import outputs, results

    gen = tmp_path / "generated"
    for stem, key, files in (("05_x", "k5", ["dp-ml.json"]), ("06_y", "old key", ["robustness-ml.json"])):
        (gen / "meta" / stem).mkdir(parents=True)
        (gen / "meta" / stem / "outputs.json").write_text(json.dumps({"key": key, "results": files, "findings": []}))
    (gen / "results").mkdir()
    for name, kind in (("dp-ml.json", "dp"), ("robustness-ml.json", "robustness"), ("dp-other.json", "dp")):
        (gen / "results" / name).write_text(json.dumps({"kind": kind, "dataset": name[:-5], "values": {"P@10": 1.0}}))
    keys = {"05_x": "k5", "06_y": "k6", "07_z": "k7"}
    assert outputs.committed(gen, keys, "results") == ["dp-ml.json"]
    assert results.load(gen / "results", outputs.committed(gen, keys, "results")) == {"dp": {"dp-ml": {"P@10": 1.0}}}
    assert set(results.load(gen / "results")["dp"]) == {"dp-ml", "dp-other"}   # without keys: the folder


def test_an_own_runs_book_into_a_folder_in_use_is_refused(capsys, tmp_path, files, runs_root):
    """The issue's case: own-runs books X and Y into one ``--out``; while X holds the folder, Y exits 2
    naming X's process (they used to take different book locks and share one staging folder)."""
    qrels, paths = files
    out = tmp_path / "shared-site"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom recmetrics.report.lock import out_lock\n"
                               "with out_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n",
                               str(out)], env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        rc = cli.main(["report", "--qrels", str(qrels), "--runs", *map(str, paths[:2]), "--name", "Y", "--out", str(out),
                       "--no-execute"])
        err = capsys.readouterr().err.strip()
    finally:
        holder.kill()
        holder.wait()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"recmetrics: error: --out {out}: another build is writing into this folder "
                          f"(process {holder.pid}, "), err
    assert not out.exists()
