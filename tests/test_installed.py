"""The package runs installed, writes only where asked, and its Pages workflow publishes a whole site.

* A wheel built from the repository carries the book's sources (chapters, book folder, benchmark
  tables) and never a clone's build output.
* (slow) That wheel, installed with its ``book`` extra into a fresh virtual environment, builds the
  main book and an own-runs book from a temporary folder: each site lands where asked (relative to
  that folder, or the documented default there), the executed chapters in the cache, nothing in
  the installed package or the checkout. The fresh environment holds exactly the distributions the
  wheel's ``book`` extra requires, transitively (read from its metadata), linked from the test
  environment instead of downloaded and unpacked again (:func:`_fresh_venv`): a module the
  chapters import that the extra does not require is missing there, as for a user; pip then
  installs the wheel alone (``--no-index``, after checking that the extra's requirements are met).
* (slow) ``make report REPORT_ARGS="--out _site ..."``, the Pages workflow's command, leaves the
  whole site in ``./_site`` while chapters execute side by side; the pages link to the repository
  GitHub Actions names.
* Chapters executing side by side leave the process's working folder alone; each kernel starts in
  its chapter's scratch folder.
* The repository link comes from the build (option, GitHub Actions, ``origin`` remote) or is absent;
  CITATION.cff repeats the package's version and date; no placeholder address is left.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml

import recmetrics
from recmetrics import cli, report
from recmetrics.errors import InputError
from recmetrics.report import paths

from published import files_with_paths

REPO = Path(__file__).resolve().parent.parent

#: small settings for the main book's chapters (-p, quick profile; each applies to the chapters that
#: declare it): every chapter still runs every cell, on fewer samples, users, systems and search examples.
#: The installed package is what is checked here; the quick profile's own values are the main book's
#: (conftest's ``main_book``)
SMALL = ["-p", "replicates=3", "-p", "n_permutations=500", "-p", "n_samples=2", "-p", "n_bootstrap=50",
         "-p", "axiom_examples=5", "-p", "n_users=100", "-p", "users=100", "-p", "n_systems=4", "-p", "n_removals=2",
         "-p", "alphas=[0.0, 2.0]"]
#: of the own-runs book
SMALL_RUNS = ["-p", "n_permutations=200", "-p", "n_samples=2"]
#: the class of the theme's repository button
BUTTON = "btn-source-repository-button"


# ----------------------------------------------------------------------------------- helpers
def _tracked(root: Path) -> list[str]:
    """The files of the checkout (``git ls-files``; without git: every file but build output)."""
    if (root / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p and (root / p).is_file()]
    skip = {".git", ".venv", "build", "_build", "generated", "__pycache__", ".pytest_cache", ".hypothesis"}
    return [p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(root).parts)]


def _clone(dest: Path) -> Path:
    """A copy of the checkout's files in ``dest`` (what a fresh clone holds)."""
    for rel in _tracked(REPO):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return dest


def _notebook(path: Path, parameters: str, code: str) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {path.stem}"),
                nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(code)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def _stdout(path: Path) -> str:
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def _listing(folder: Path) -> dict[str, int]:
    """``{relative path: mtime_ns}`` of every file under ``folder`` (bytecode caches left out)."""
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _env(**extra: str) -> dict[str, str]:
    """This process's environment without what points at the checkout or names a repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_REPOSITORY", "GITHUB_SERVER_URL")}
    env.update(extra)
    return env


def _run(cmd, cwd: Path, env: dict, timeout: float = 1800) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


# ---------------------------------------------------------------------------------- the wheel
@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the checkout into which a build left its output (book/_build,
    book/generated), as a developer's clone holds it."""
    root = tmp_path_factory.mktemp("wheel")
    src = _clone(root / "src")
    for leftover in ("book/_build/html/index.html", "book/generated/01_dataset_overview.ipynb", "notebooks/_site/x.html"):
        (src / leftover).parent.mkdir(parents=True, exist_ok=True)
        (src / leftover).write_text("left by a build")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(src)]
    if _setuptools_at_least(64):   # build with this environment's setuptools (else pip fetches one)
        cmd.insert(4, "--no-build-isolation")
    _run(cmd, root, _env())
    (built,) = (root / "dist").glob("*.whl")
    return built


def _setuptools_at_least(major: int) -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= major


def test_the_wheel_ships_the_book_sources_and_no_build_output(wheel):
    assert wheel.name.startswith("recmetrics_eval-" + recmetrics.__version__)
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = _tracked(REPO)
    sources = [p for p in tracked if p.startswith(("notebooks/", "book/")) or re.fullmatch(r"benchmarks/results/.*\.json", p)]
    assert len(sources) > 25, sources
    missing = sorted(f"recmetrics/_bundle/{p}" for p in sources if f"recmetrics/_bundle/{p}" not in names)
    assert not missing, missing
    bundled = sorted(n for n in names if n.startswith("recmetrics/_bundle/"))
    assert len(bundled) == len(sources), sorted(set(bundled) - {f"recmetrics/_bundle/{p}" for p in sources})
    assert not [n for n in names if "_build" in n or "generated" in n or "_site" in n]
    modules = {p for p in tracked if p.startswith("recmetrics/") and p.endswith(".py")}
    assert modules <= names, sorted(modules - names)


def _requirements(requires: list[str], extras: set[str]) -> list:
    """The requirements among ``requires`` (``Requires-Dist`` lines) that apply with ``extras``."""
    from packaging.requirements import Requirement

    out = []
    for line in requires:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            out.append(req)
    return out


def _closure(wheel: Path, extra: str) -> dict[str, object]:
    """``{name: distribution}`` of this environment for every distribution the wheel's ``extra``
    requires, transitively; a requirement this environment does not meet fails the test."""
    from email.parser import Parser
    from importlib import metadata

    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        own = Parser().parsestr(z.read(meta).decode())
    own_name = canonicalize_name(own["Name"])
    todo = _requirements(own.get_all("Requires-Dist") or [], {extra})
    found: dict[str, object] = {}
    extras_of: dict[str, set] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name == own_name:      # the wheel's own extras: their requirements are in its metadata
            todo += _requirements(own.get_all("Requires-Dist") or [], set(req.extras))
            continue
        if name in found and set(req.extras) <= extras_of[name]:
            continue
        dist = found.get(name) or metadata.distribution(req.name)
        assert req.specifier.contains(dist.version, prereleases=True), (str(req), dist.version)
        found[name] = dist
        extras_of[name] = extras_of.get(name, set()) | set(req.extras)
        todo += _requirements(dist.requires or [], extras_of[name])
    return found


def _fresh_venv(root: Path, wheel: Path, extra: str) -> tuple[Path, Path]:
    """A new virtual environment holding the distributions ``extra`` of ``wheel`` requires (their
    files linked from this environment), then the wheel installed by pip with that extra. Returns
    its python and its site-packages folder."""
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], root, _env())
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        root, _env()).stdout.strip())
    for dist in _closure(wheel, extra).values():
        base = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops - {"__pycache__"}:
            if (base / top).exists() and not (purelib / top).exists():
                os.symlink(base / top, purelib / top)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "-q", f"{wheel}[{extra}]"],
         root, _env())
    return python, purelib


@pytest.mark.slow
def test_the_installed_wheel_builds_both_books_from_an_unrelated_folder(wheel, tmp_path):
    t0 = time.perf_counter()
    python, purelib = _fresh_venv(tmp_path, wheel, "book")
    venv = python.parent.parent
    print(f"fresh environment with the wheel and its book extra in {time.perf_counter() - t0:.1f}s")
    package = purelib / "recmetrics"
    where = tmp_path / "elsewhere"                        # the folder the user works in
    where.mkdir()
    books = tmp_path / "books"                              # the books' cache; the run cache is the usual one
    env = _env(RECMETRICS_BOOKS=str(books))
    shown = _run([python, "-c", "import recmetrics, recmetrics.report.paths as P; print(recmetrics.__file__); "
                  "print(P.sources_root())"], where, env).stdout.split()
    assert shown == [str(package / "__init__.py"), str(package / "_bundle")], shown
    installed, checkout = _listing(package), {d: _listing(REPO / d) for d in ("book", "notebooks")}
    top = sorted(p.name for p in REPO.iterdir())
    recmetrics_cli = venv / "bin" / "recmetrics"

    t0 = time.perf_counter()
    out = _run([recmetrics_cli, "report", "--out", "site", "--jobs", "2", *SMALL], where, env)
    print(f"main book: {time.perf_counter() - t0:.0f}s")
    assert out.stdout.strip().splitlines()[-1] == f"book built: {where / 'site' / 'index.html'}", out.stdout
    assert sorted(p.name for p in where.iterdir()) == ["site"]
    site = where / "site"
    chapters = sorted(p.name for p in (site / "generated").glob("0[1-9]_*.html"))
    assert len(chapters) == len(list((package / "_bundle" / "notebooks").glob("0[1-9]_*.ipynb"))) == 9, chapters
    assert (books / "main" / "generated" / "01_dataset_overview.ipynb").is_file()

    # the own-runs book: files another tool wrote, named relative to the folder; no --out
    _run([python, "-c", "import recmetrics as rm\nfrom recmetrics.data.simulate import simulate\n"
          "ds = simulate(60, 80, 1500, seed=4)\n"
          "st = rm.study.run_systems(ds, ['Random', 'Pop', 'UserKNN(k=10)'], k=2, n=20, cache=False, progress=False)\n"
          "import os; os.makedirs('files')\n"
          "st.folds[0][1][['user', 'item', 'rating']].to_csv('files/qrels.csv', index=False)\n"
          "for s in st.systems:\n"
          "    rm.io.write_trec_run(st[(s, 0)], 'files/' + s.split('(')[0] + '.trec', tag=s.split('(')[0])\n"],
         where, env)
    t0 = time.perf_counter()
    out = _run([recmetrics_cli, "report", "--qrels", "files/qrels.csv", "--runs", "files/Random.trec",
                "files/Pop.trec", "files/UserKNN.trec", *SMALL_RUNS], where, env)
    print(f"own-runs book: {time.perf_counter() - t0:.0f}s")
    (folder,) = (where / "recmetrics-runs").iterdir()
    assert out.stdout.strip().splitlines()[-1] == f"book built: {folder / 'index.html'}", out.stdout
    assert sorted(p.name for p in where.iterdir()) == ["files", "recmetrics-runs", "site"]
    assert (folder / "generated" / "05_which_metric.html").is_file()

    # nothing written into the installed package or the checkout; no path of this machine published
    assert _listing(package) == installed
    assert {d: _listing(REPO / d) for d in ("book", "notebooks")} == checkout
    assert sorted(p.name for p in REPO.iterdir()) == top
    for built in (site, folder):
        assert not files_with_paths(built, tmp_path, venv), files_with_paths(built, tmp_path, venv)
        assert not [p for p in built.rglob("*.html") if BUTTON in p.read_text(encoding="utf-8")]  # no repository known


@pytest.mark.slow
def test_the_pages_workflow_command_leaves_the_whole_site_where_it_says(built_book, tmp_path):
    """The workflow's step, in a clone: chapters run two at a time, and the site lands in the clone's
    _site/, linking to the repository GitHub Actions names. The books' cache holds a copy of the main
    book built at the same settings (conftest's ``main_book``), as the workflow's cache does: one -p
    each changes two cheap chapters, so they execute whatever the cache holds (in a clone of an
    unchanged checkout, only they do)."""
    books = tmp_path / "books"
    shutil.copytree(built_book["book"], books / "main", ignore=shutil.ignore_patterns("_build"))
    clone = _clone(tmp_path / "clone")
    flow = yaml.safe_load((clone / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    (step,) = [s["run"] for s in flow["jobs"]["build"]["steps"] if "make report" in s.get("run", "")]
    assert 'REPORT_ARGS="--out _site"' in step
    args = ["--out _site --jobs 2", "-p head_share=0.25", "-p 'svd=SVD(factors=10,iterations=4)'"]
    venv = Path(sys.prefix)
    env = _env(PYTHONPATH=str(clone), GITHUB_REPOSITORY="someone/recmetrics-fork",
               RECMETRICS_BOOKS=str(books))
    proc = _run(["make", "-o", f"{venv}/.installed", "report", f"VENV={venv}", f"REPORT_ARGS={' '.join(args)}"],
                clone, env)
    executed = re.findall(r"executing (\S+)\.ipynb", proc.stderr)
    assert {"01_dataset_overview", "04_choosing_a_metric"} <= set(executed), proc.stderr[-3000:]
    site = clone / "_site"
    assert f"book built: {site / 'index.html'}" in proc.stdout, proc.stdout
    assert len(list((site / "generated").glob("0[1-9]_*.html"))) == 9
    assert (site / "generated" / "appendix.html").is_file() and (site / "_static").is_dir()
    assert not (clone / "notebooks" / "_site").exists() and not (clone / "book" / "_build").exists()
    intro = (site / "intro.html").read_text(encoding="utf-8")      # index.html sends the reader there
    assert BUTTON in intro and 'href="https://github.com/someone/recmetrics-fork"' in intro
    assert "pip install recmetrics-eval" in intro                   # the distribution's name on every page


# ------------------------------------------------------------------ working folders and paths
def test_chapters_side_by_side_leave_the_working_folder_alone(tmp_path, monkeypatch):
    """Two chapters executing at once: each kernel starts in its chapter's scratch folder, and the
    process's working folder (against which the user's relative paths were read) never changes."""
    nbs = tmp_path / "notebooks"
    for stem, nap in (("01_a", 1), ("02_b", 4)):
        _notebook(nbs / f"{stem}.ipynb", "seed = 0", f"import os, time\ntime.sleep({nap})\nprint('cwd', os.getcwd())")
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    generated = tmp_path / "gen"
    report.execute_notebooks("quick", "movielens-small", notebooks_dir=nbs, generated_dir=generated, jobs=2, log=None)
    assert os.getcwd() == str(caller)
    for stem in ("01_a", "02_b"):
        (cwd,) = re.findall(r"cwd (\S+)", _stdout(generated / f"{stem}.ipynb"))
        assert Path(cwd) == generated / ".running" / stem, cwd
    assert sorted(p.name for p in caller.iterdir()) == [] and sorted(p.name for p in nbs.iterdir()) == ["01_a.ipynb",
                                                                                                        "02_b.ipynb"]


def test_the_default_site_is_a_folder_of_the_current_folder(tmp_path, monkeypatch):
    seen = {}

    def plan(*args, **kw):
        seen.update(kw)
        raise InputError("stop here")

    monkeypatch.setattr("recmetrics.report.book.make_plan", plan)
    monkeypatch.setenv("RECMETRICS_BOOKS", str(tmp_path / "books"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="stop here"):
        report.build(profile="quick")
    assert seen["out"] == tmp_path / "recmetrics-book" and seen["book_dir"] == tmp_path / "books" / "main"
    with pytest.raises(InputError, match="stop here"):
        report.build(profile="quick", out="site", notebooks_dir="nbs")
    assert seen["out"] == tmp_path / "site" and seen["notebooks_dir"] == tmp_path / "nbs"
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # planning writes nothing
    monkeypatch.setenv("RECMETRICS_BOOKS", "books")
    assert paths.books_root() == tmp_path / "books"           # a relative setting: the current folder's


def test_sources_are_synced_into_the_work_folder(tmp_path):
    from recmetrics.report.workspace import sync_sources

    src, work = tmp_path / "src", tmp_path / "work"
    for rel, text in (("_config.yml", "a"), ("guide/x.md", "x"), ("guide/y.md", "y")):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    sync_sources(src, work)
    (work / "generated").mkdir()
    (work / "generated" / "01.ipynb").write_text("{}")
    (work / "_build").mkdir()
    old = {p: (work / p).stat().st_mtime_ns for p in ("_config.yml", "guide/x.md")}
    time.sleep(0.02)
    (src / "guide" / "x.md").write_text("x2")
    (src / "guide" / "y.md").unlink()
    sync_sources(src, work)
    assert (work / "guide" / "x.md").read_text() == "x2" and not (work / "guide" / "y.md").exists()
    assert (work / "_config.yml").stat().st_mtime_ns == old["_config.yml"]      # unchanged: untouched
    assert (work / "guide" / "x.md").stat().st_mtime_ns > old["guide/x.md"]
    assert (work / "generated" / "01.ipynb").exists() and (work / "_build").is_dir()


def test_the_package_finds_its_sources_in_the_checkout():
    assert not paths.bundled() and paths.sources_root() == REPO and paths.checkout() == REPO
    assert (paths.default_notebooks_dir() / "runs").is_dir() and (paths.default_book_dir() / "_toc.yml").is_file()
    assert paths.benchmarks_results_dir() == REPO / "benchmarks" / "results"


# ------------------------------------------------------------------------ repository, citation
def test_the_repository_link_comes_from_the_build(tmp_path):
    from recmetrics.report.repository import origin_url, repository_url, theme_options, web_url

    assert repository_url("https://github.com/a/b.git") == "https://github.com/a/b"
    for bad in ("nope", "git@github.com:a/b.git", "https://github.com/"):
        with pytest.raises(InputError, match="--repository"):
            repository_url(bad)
    assert repository_url(environ={"GITHUB_REPOSITORY": "o/n", "GITHUB_SERVER_URL": "https://ghe.example.org"}) \
        == "https://ghe.example.org/o/n"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert repository_url(environ={}, repo=repo) is None                     # no origin: no link
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "https://me:secret@github.com/o/n.git"],
                   check=True)
    assert origin_url(repo) == repository_url(environ={}, repo=repo) == "https://github.com/o/n"   # no credentials
    assert repository_url(environ={}, repo=tmp_path / "not-a-checkout") is None
    assert web_url("/srv/git/n.git") is None
    assert theme_options(None) == {} and theme_options("https://github.com/o/n") == {
        "html_theme_options": {"repository_url": "https://github.com/o/n", "use_repository_button": True}}


def test_a_bad_repository_option_fails_before_anything_runs(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("recmetrics.report.book.make_plan", lambda *a, **k: pytest.fail("planned"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "--repository", "not-an-address"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--repository 'not-an-address'" in err, err
    assert list(tmp_path.iterdir()) == []


def test_citation_repeats_the_package_and_no_placeholder_address_is_left():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["version"] == recmetrics.__version__ and str(cff["date-released"]) == recmetrics.__date__
    assert cff["title"].startswith(paths.DISTRIBUTION + ":") and "repository-code" not in cff and "url" not in cff
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == paths.DISTRIBUTION and project["dynamic"] == ["version"]
    placeholders = ["github.com/" + "recmetrics/recmetrics", "recmetrics" + ".github.io"]
    found = [(p, s) for p in _tracked(REPO) if (REPO / p).suffix not in (".png", ".whl", ".gz")
             for s in placeholders if s in (REPO / p).read_text(encoding="utf-8", errors="replace")]
    assert not found, found


def test_the_workflow_publishes_the_paper_profile_and_keeps_the_cache():
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    build = flow["jobs"]["build"]
    assert build["env"]["PROFILE"] == "${{ inputs.profile || 'paper' }}"
    (cache,) = [s for s in build["steps"] if s.get("uses", "").startswith("actions/cache@")]
    assert cache["with"]["path"] == "~/.cache/recmetrics"
    for inputs in ("recmetrics/**/*.py", "notebooks/**/*.ipynb", "book/**", "pyproject.toml"):
        assert inputs in cache["with"]["key"], inputs
    steps = [s.get("uses", s.get("run", "")) for s in build["steps"]]
    assert steps.index(cache["uses"]) < [i for i, s in enumerate(steps) if "make report" in s][0]
