"""Write a benchmark's result table to ``benchmarks/results/<name>.json``.

Every script of ``benchmarks/`` ends with :func:`save_table`; the report's reproducibility
appendix (``recmetrics.report.appendix.benchmark_tables``) shows the latest table of each, with
the command that measured it, when, on which machine and at which commit. Commit the file when the
numbers are the ones you want quoted (a smoke run overwrites it too: its command says so).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _commit() -> str | None:
    try:
        sha = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha or None


def git(*args: str) -> str:
    """The output of ``git ARGS`` in this checkout's repository."""
    return subprocess.run(["git", "-C", str(HERE), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit_name(rev: str) -> str:
    """The short name of the commit ``rev`` names (a branch, a tag, ``HEAD``, a hash)."""
    return git("rev-parse", "--short", f"{rev}^{{commit}}")


@contextlib.contextmanager
def worktree(rev: str, folder: Path) -> Iterator[str]:
    """A git worktree of commit ``rev`` in ``folder`` for the block, its package compiled
    (:func:`compiled`), removed however the block ends; yields the commit's short name (the
    ``--against REV`` of the benchmarks that run an older commit's code beside this checkout's)."""
    short = commit_name(rev)
    git("worktree", "add", "--detach", str(folder), short)
    try:
        compiled(folder)
        yield short
    finally:
        git("worktree", "remove", "--force", str(folder))


def compiled(code: Path) -> Path:
    """``code`` (a checkout) with its ``recmetrics`` package compiled to bytecode: with
    ``PYTHONDONTWRITEBYTECODE`` set, a process compiles every module it imports from an uncompiled
    checkout again, so two commits measured side by side are both compiled first."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(code) / "recmetrics")], check=True)
    return Path(code)


def pythonpath(code: Path) -> str:
    """A ``PYTHONPATH`` that imports ``recmetrics`` from the checkout ``code`` first."""
    return os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])


def _plain(value: Any) -> Any:
    """numpy scalars and other number-likes as plain JSON numbers; the rest as strings."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _public(arg: str) -> str:
    """A command-line argument as the published record shows it: an absolute path (a folder of the
    measuring machine, which the book's appendix must not carry) becomes ``<its name>``."""
    key, sep, value = str(arg).rpartition("=") if str(arg).startswith("-") and "=" in str(arg) else ("", "", str(arg))
    return f"{key}{sep}<{Path(value).name}>" if os.path.isabs(value) else str(arg)


def save_table(name: str, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
               notes: Iterable[str] = (), argv: Sequence[str] | None = None, script: str | None = None) -> Path:
    """Write ``results/<name>.json``: title, command, UTC time, machine, recmetrics version and
    commit, the table (``columns``, ``rows``) and ``notes``; return its path. ``script``: the
    script's name when one script records several tables (default ``name``)."""
    import recmetrics

    argv = sys.argv[1:] if argv is None else list(argv)
    payload = {
        "title": title,
        "command": " ".join(["python", f"benchmarks/{script or name}.py", *(shlex.quote(_public(a)) for a in argv)]),
        "measured_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "machine": {"CPUs": os.cpu_count(), "Python": platform.python_version(),
                    "platform": platform.platform(terse=True),
                    "load (1 min)": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None},
        "recmetrics": recmetrics.__version__,
        "commit": _commit(),
        "columns": list(columns),
        "rows": [[_plain(c) for c in row] for row in rows],
        "notes": list(notes),
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {path}")
    return path
