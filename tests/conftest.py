"""Shared fixtures, and how the suite shares the cores.

pyproject.toml's ``addopts`` run the tests in one process per core and one more (pytest-xdist: ``-n auto --dist
load --maxschedchunk 1``, the tests handed out one at a time in the order :func:`pytest_collection_modifyitems`
sets); ``-n 0`` (or ``-p no:xdist``, or no pytest-xdist installed) runs them in this process.
Each test process keeps its own books' work folders (``$RECMETRICS_BOOKS``, :func:`own_books_folder`)
and temporary folders; the run cache (fitted systems, written atomically) and the JavaScript cache
are shared. The main book is built once per run, by the first process that asks (:func:`main_book`).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from published import DISTINCTIVE

REPO = Path(__file__).resolve().parent.parent
DATASET = "movielens-small"

#: the tests that start first, in this order (a test's id, or its name for all its parameters). The
#: tests are handed out in the order collected, one at a time, and each test process holds one test
#: in reserve behind the one it runs: the first process gets the first two tests, the second the
#: next two (pytest-xdist's first hand-out with ``--maxschedchunk 1``). So the replay of chapter 6's
#: claims at their null, which builds the main book first (the longest), and the installed wheel's
#: test, which builds both books of its own, are first and third: they run at once, one per process
#: (second, they queued in one process behind the book). The own-runs book follows the wheel; the
#: tests that mostly wait on their chapters' sleeps come next: a third test process
#: (:func:`pytest_xdist_auto_num_workers`) runs them meanwhile.
FIRST = (
    "tests/test_report.py::test_every_check_that_makes_several_comparisons_keeps_the_null_rate[06_comparing_metrics]",
    "tests/test_report.py::test_every_check_that_makes_several_comparisons_keeps_the_null_rate[07_arithmetic_vs_geometric]",
    "tests/test_installed.py::test_the_installed_wheel_builds_both_books_from_an_unrelated_folder",
    "tests/test_own_runs.py::test_own_runs_book_builds_from_four_runs_of_the_embedded_dataset",
    "tests/test_report_build.py::test_independent_chapters_run_side_by_side_with_identical_results",
    "tests/test_report_build.py::test_a_late_reader_runs_beside_its_producer_and_waits_for_its_table",
    "tests/test_build_processes.py::test_the_limit_comes_from_the_chapters_record",
    "tests/test_report_build.py::test_two_builds_of_one_book_at_once_one_fails_with_one_line",
)


def pytest_addoption(parser, pluginmanager):
    """Without pytest-xdist (not installed, or ``-p no:xdist``), the options ``addopts`` gives it are
    accepted and do nothing: the suite runs in one process."""
    if pluginmanager.has_plugin("xdist"):
        return
    group = parser.getgroup("xdist", "pytest-xdist is absent: its options are ignored")
    group._addoption("-n", "--numprocesses", dest="numprocesses", default=None)   # -n as pytest-xdist adds it
    group.addoption("--dist", default="no")
    group.addoption("--maxschedchunk", default=None)


def pytest_configure(config):
    """With several test processes (pytest-xdist), each of them, and every process it starts, gets
    one BLAS/OpenMP thread unless the user's environment says otherwise: the processes already fill
    the cores, and a pool of a thread per core in each of them only adds threads that wait on each
    other. Set here, in the process that starts the test processes, before it starts them."""
    if os.environ.get("PYTEST_XDIST_WORKER") or getattr(config.option, "numprocesses", None) in (None, 0, "0"):
        return
    from recmetrics.report.kernel import THREAD_VARIABLES

    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist, absent without it
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one test process per core, and one more. Many tests mostly wait (a chapter that
    sleeps, a build killed after seconds, a browser rendering): the extra process runs tests while
    another waits, instead of leaving its core idle (measured on 2 cores: 9:49 -> 8:12 of wall for
    the suite, the same CPU). ``$PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None             # pytest-xdist's own reading of it
    from recmetrics.report.profiles import usable_cores

    return usable_cores() + 1


def pytest_collection_modifyitems(config, items):
    """:data:`FIRST` first, then the ``slow`` tests that do not read the main book, then those that
    do (:func:`main_book`: by then it is built, however slowly, and no process waits for it), then
    the rest, each in the order collected (the same order in every test process, as pytest-xdist
    requires)."""
    def rank(item):
        for name in (item.nodeid, item.nodeid.split("[")[0]):
            if name in FIRST:
                return FIRST.index(name)
        if item.get_closest_marker("slow") is None:
            return len(FIRST) + 2
        return len(FIRST) + ("main_book" in getattr(item, "fixturenames", ()))

    items.sort(key=rank)        # stable


@pytest.fixture(scope="session", autouse=True)
def own_books_folder(tmp_path_factory):
    """The books' work folders (``$RECMETRICS_BOOKS``) of this test process: a temporary folder
    of its own, so no build of another process (or of the user) is read, locked or replaced."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECMETRICS_BOOKS", str(tmp_path_factory.mktemp("books-cache")))
        yield


def _run_folder(tmp_path_factory) -> Path:
    """The temporary folder of the whole run: with pytest-xdist, the one every test process's
    temporary folder is in."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def main_book(tmp_path_factory) -> dict[str, Path]:
    """The whole main book (every notebook, the ``quick`` profile) built into a temporary copy of
    book/; the claims of every chapter are kept with the results their checks read (``replay``).

    Built once per run: the first test process to ask builds it in the run's temporary folder,
    holding a lock; the others wait for it and read the same book (a failed build fails them too).
    Tests that read the book take :func:`built_book`."""
    shared = _run_folder(tmp_path_factory)
    record = shared / "main-book.json"
    with open(shared / "main-book.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # released when the file closes
        if not record.exists():
            try:
                built = {k: str(v) for k, v in _build_main_book(shared).items()}
            except BaseException as exc:
                record.write_text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), encoding="utf-8")
                raise
            record.write_text(json.dumps(built), encoding="utf-8")
    built = json.loads(record.read_text(encoding="utf-8"))
    if "error" in built:
        pytest.fail(f"the main book's build failed in another test process: {built['error']}")
    return {k: Path(v) for k, v in built.items()}


def _build_main_book(shared: Path) -> dict[str, Path]:
    from recmetrics import report

    root = shared / f"report-{DISTINCTIVE}"     # a distinctive folder name, which no published file may carry
    root.mkdir()
    book = root / "book"
    shutil.copytree(REPO / "book", book, ignore=shutil.ignore_patterns("_build", "generated", ".doctrees"))
    notebooks = root / "notebooks"
    shutil.copytree(REPO / "notebooks", notebooks, ignore=shutil.ignore_patterns("runs", ".ipynb_checkpoints",
                                                                                 "findings", "results"))
    # every chapter keeps its claims and results, so their checks can be replayed at their null
    replay = shared / "replay"
    replay.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECMETRICS_REPLAY_DIR", str(replay))
        index = report.build(profile="quick", dataset=DATASET, book_dir=book, notebooks_dir=notebooks,
                             out=root / "site", log=None)
    return {"root": root, "book": book, "index": index, "site": index.parent, "replay": replay}


@pytest.fixture
def built_book(main_book):
    """:func:`main_book`, read by the test. No test writes into it (one that builds the book again
    works on a copy), so the tests of every process read it at once, without a lock."""
    return main_book


def make_case(seed: int = 0, n_users: int = 300, n_items: int = 400, max_len: int = 120):
    """Judgments and a tied, ragged run covering the parity edge cases.

    - half-star ratings 0.5-5 (so the oracle scales them by 2);
    - users with no relevant item, users with no judged non-relevant item;
    - users missing from the run, lists shorter than the cut-offs, empty lists;
    - many score ties (scores rounded to one decimal), string-sorting item ids (10 < 9).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        n = rng.integers(1, 40)
        items = rng.choice(n_items, size=n, replace=False)
        kind = u % 7
        if kind == 0:      # no relevant item
            ratings = rng.choice(np.arange(0.5, 4.0, 0.5), size=n)
        elif kind == 1:    # no judged non-relevant item
            ratings = rng.choice([4.0, 4.5, 5.0], size=n)
        else:
            ratings = rng.choice(np.arange(0.5, 5.5, 0.5), size=n)
        rows += [(u, int(i), float(r)) for i, r in zip(items, ratings)]
    qrels = pd.DataFrame(rows, columns=["user", "item", "rating"])
    run_rows = []
    for u in range(n_users):
        if u % 11 == 3:    # missing from the run
            continue
        length = int(rng.integers(0, max_len)) if u % 5 else int(rng.integers(0, 8))
        judged = qrels.loc[qrels.user == u, "item"].to_numpy()
        pool = np.unique(np.concatenate([judged, rng.choice(n_items, size=length, replace=False)]))
        chosen = rng.choice(pool, size=min(length, len(pool)), replace=False)
        scores = np.round(rng.random(len(chosen)), 1)
        run_rows += [(u, int(i), float(s)) for i, s in zip(chosen, scores)]
    run = pd.DataFrame(run_rows, columns=["user", "item", "score"])
    return qrels, run


@pytest.fixture(scope="session")
def case():
    return make_case()
