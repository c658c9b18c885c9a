"""Shared fixtures, and how the suite runs on every core (:mod:`scheduling`).

A test process keeps its own books' work folders (``$RECMETRICS_BOOKS``) and temporary folders;
the run cache (fitted systems, written atomically) and the JavaScript cache are shared.
"""
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from published import DISTINCTIVE
from scheduling import Scheduling
from smallest import SMALL_OVERRIDES

REPO = Path(__file__).resolve().parent.parent
DATASET = "movielens-small"


def pytest_configure(config):
    config.pluginmanager.register(Scheduling(), "recmetrics-scheduling")


@pytest.fixture(scope="session", autouse=True)
def own_books_folder(tmp_path_factory):
    """The books' work folders (``$RECMETRICS_BOOKS``) of this test process: a temporary folder
    of its own, so no build of another process (or of the user) is read, locked or replaced."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECMETRICS_BOOKS", str(tmp_path_factory.mktemp("books-cache")))
        yield


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The whole main book (every notebook, quick profile at the smallest settings,
    :data:`smallest.SMALL_OVERRIDES`) built into a temporary copy of book/; the claims of every
    chapter are kept with the results their checks read (``replay``).

    Built once per run: the first test process to ask builds it in the run's temporary folder,
    holding a lock; the others wait for it and read the same book."""
    import fcntl
    import json

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent                  # every test process's temporary folder is in it
    record = shared / "built-book.json"
    with open(shared / "built-book.lock", "w") as lock:
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

    root = shared / f"report-{DISTINCTIVE}"     # no published file may name it (issue 24 §1)
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
                             out=root / "site", overrides=SMALL_OVERRIDES, log=None)
    return {"root": root, "book": book, "index": index, "site": index.parent, "replay": replay}


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
