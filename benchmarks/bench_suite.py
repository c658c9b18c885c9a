"""How long a new user waits for the tests: ``make test`` in a fresh clone, whole process.

Each commit measured is cloned from this repository into a temporary folder (committed code only:
a change not committed is not in the clone) and runs ``.ci/run`` there with ``CI=true``, exactly what
CI runs: a new venv with every extra, Chromium checked, then the README's test command. Measured:
the wall time of the whole command, the CPU time of its process tree (every process it started and
waited for), the seconds pytest reports for itself (collection and tests), the rest of the wall time
(creating the venv and installing into it, starting pytest) and pytest's summary. The clones use the
machine's caches as a user's checkout would (downloaded packages, ``~/.cache/recmetrics``).

With ``--against REV`` the commit ``REV`` is measured first, then this checkout's ``HEAD``, one after
the other in the one command: speed side by side, on the machine as it is that hour. The table goes
to ``benchmarks/results/bench_suite.json``, which the Guide's performance page shows.

    python benchmarks/bench_suite.py                    # HEAD only
    python benchmarks/bench_suite.py --against fc4cc20  # an older commit first, then HEAD
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_book import _clock  # noqa: E402
from bench_scale import exit_on_sigterm  # noqa: E402
from record import HERE, commit_name, save_table  # noqa: E402

#: pytest's last line, e.g. ``2034 passed, 3 skipped, 2 warnings in 412.86s (0:06:52)``
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+(?:, \d+ \w+)*) in (?P<seconds>[\d.]+)s\b")


def summary(lines: list[str]) -> tuple[str, float]:
    """pytest's counts (``"2034 passed, 3 skipped, 2 warnings"``) and its seconds, from its output's
    last summary line.

    >>> summary(["....", "2034 passed, 3 skipped, 2 warnings in 412.86s (0:06:52)"])
    ('2034 passed, 3 skipped, 2 warnings', 412.86)
    >>> summary(["== 1 failed, 9 passed in 3.10s =="])
    ('1 failed, 9 passed', 3.1)
    """
    for line in reversed(lines):
        m = SUMMARY.match(line.strip())
        if m:
            return m.group("counts"), float(m.group("seconds"))
    raise ValueError("no pytest summary line in the output")


def make_test(commit: str, folder: Path) -> dict:
    """Clone this repository at ``commit`` into ``folder`` and run its ``.ci/run`` (``CI=true``); returns
    the wall, CPU and pytest seconds and pytest's summary. A failed run stops the benchmark."""
    subprocess.run(["git", "clone", "-q", str(HERE.parent), str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "checkout", "-q", "--detach", commit], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CI"] = "true"
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["bash", ".ci/run"], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    tail: list[str] = []
    try:
        for line in proc.stdout:
            tail = (tail + [line])[-60:]
        rc = proc.wait()
    finally:   # stopped (Ctrl-C, SIGTERM): the whole suite goes, not only its shell
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        raise SystemExit(f"make test of {commit} failed ({rc}):\n{''.join(tail)}")
    counts, pytest_s = summary(tail)
    return {"wall": wall, "cpu": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
            "pytest": pytest_s, "counts": counts}


def _row(label: str, r: dict) -> list:
    return [label, _clock(r["wall"]), round(r["wall"]), round(r["cpu"]), round(r["pytest"]),
            round(r["wall"] - r["pytest"]), r["counts"]]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", metavar="REV", help="first measure this commit, then HEAD")
    a = p.parse_args(argv)
    exit_on_sigterm()          # stopped: the running suite goes too
    head = commit_name("HEAD")
    commits = ([commit_name(a.against)] if a.against else []) + [head]
    rows, results = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        for commit in commits:
            print(f"make test in a fresh clone of {commit} ...", flush=True)
            results[commit] = r = make_test(commit, Path(tmp) / commit)
            rows.append(_row(f"commit {commit}" + (" (this commit)" if commit == head and a.against else ""), r))
            print(rows[-1], flush=True)
    notes = ["`CI=true bash .ci/run` in a fresh clone: a new venv with every extra (make setup), Chromium "
             "checked, then `python -m pytest -q` (the README's test command); set-up = wall time - pytest's seconds"]
    if a.against:
        old, new = results[commits[0]], results[head]
        notes.append(f"this commit against {commits[0]}: {old['wall'] / new['wall']:.2f}x faster in wall time, "
                     f"{old['cpu'] / new['cpu']:.2f}x in CPU time, the two run one after the other in this command")
    save_table("bench_suite", "The tests: make test in a fresh clone (CI=true bash .ci/run, whole process)",
               ["commit", "wall (m:ss)", "wall s", "CPU s", "pytest s", "set-up s", "pytest's summary"], rows, notes)


if __name__ == "__main__":
    main()
