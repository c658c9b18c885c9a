"""How long the main book takes to build: ``recmetrics report --profile P --dataset D --force``, whole
process, from an empty run cache, into a temporary folder.

Measured: the wall time of the command, the CPU time of its process tree and the peak of the tree's
summed resident memory (proportional set sizes, sampled every 0.2 s or less often,
:class:`bench_scale.TreeMemory`), each chapter's execution time (the ``executed X in Ns`` lines of
the build's log; chapters run side by side, so they add up to more than the wall time), and an unchanged rebuild (the same command without
``--force``: every chapter kept). With ``--against REV`` the commit ``REV``'s code (a git worktree of
it, on this environment) builds the book first, the same way, then this checkout's, one after the
other in the one command, and :mod:`compare_builds` says whether the two computed the same values:
speed measured side by side, on the machine as it is that hour. The table goes to ``benchmarks/results/bench_book_<profile>_<dataset>.json``,
which the Guide's performance page shows with the machine it ran on.

    python benchmarks/bench_book.py                                   # quick profile, movielens-small
    python benchmarks/bench_book.py --profile paper --dataset insteval
    python benchmarks/bench_book.py --seeds 0 1 2                     # a replicated build (split seeds 0, 1, 2)
    python benchmarks/bench_book.py --profile paper --against fc4cc20  # an older commit's build first, then
                                                                      # this one's, and whether they agree
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import _LOG, TreeMemory, exit_on_sigterm, stopped_with_this  # noqa: E402
from record import HERE, compiled, pythonpath, save_table, worktree  # noqa: E402


def run(cmd: list[str], cwd: Path, env: dict) -> dict:
    """Run ``cmd``; returns wall and CPU seconds, the tree's peak MB and ``{chapter: seconds}``."""
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mem = TreeMemory(proc.pid)
    mem.start()
    chapters, tail = {}, []
    with stopped_with_this(proc):
        for line in proc.stdout:
            tail = (tail + [line])[-40:]
            m = _LOG.search(line)
            if m and m.group(1) == "executed":
                name = m.group(2).removesuffix(".ipynb")      # summed over the seeds of a replicated build
                chapters[name] = chapters.get(name, 0.0) + float(m.group(3))
        rc = proc.wait()
    wall = time.perf_counter() - t0
    mem.stop()
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = max((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime), mem.cpu)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}):\n{''.join(tail)}")
    return {"wall": wall, "cpu": cpu, "peak_mb": mem.peak / 2**20, "chapters": chapters}


def _chapters(times: dict) -> str:
    """``{chapter: seconds}`` as ``"03 127, 07 129"`` (the chapters' numbers)."""
    return ", ".join(f"{k[:2]} {v:.0f}" for k, v in times.items())


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{round(seconds % 60):02d}"


def build_twice(cmd: list[str], folder: Path, code: Path = HERE.parent) -> tuple[dict, dict]:
    """A forced build from an empty run cache, then an unchanged rebuild, in ``folder`` (its run cache,
    book work folder and site), with the recmetrics of the checkout ``code`` (default this one)."""
    folder.mkdir(parents=True)
    env = dict(os.environ, RECMETRICS_CACHE=str(folder / "cache"), RECMETRICS_BOOKS=str(folder / "books"),
               PYTHONUNBUFFERED="1", PYTHONPATH=pythonpath(code))
    cmd = [*cmd, "--out", str(folder / "site")]
    return run([*cmd, "--force"], folder, env), run(cmd, folder, env)


def _rows(what: str, first: dict, again: dict) -> list[list]:
    return [[f"{what}: every chapter executed", _clock(first["wall"]), round(first["wall"]),
             round(first["cpu"]), round(first["peak_mb"] / 1024, 2), _chapters(first["chapters"])],
            [f"{what}: unchanged rebuild", _clock(again["wall"]), round(again["wall"], 1),
             round(again["cpu"], 1), round(again["peak_mb"] / 1024, 2),
             _chapters(again["chapters"]) or "every chapter kept"]]


def where(difference: str) -> str:
    """A compare_builds difference for the notes: a chapter cell's by its place only (its outputs may be
    HTML and scripts, which the Guide's page must not carry), the others as printed, cut at 240."""
    cell = re.match(r"(\S+\.ipynb cell \d+): ", difference)
    return cell.group(1) if cell else difference[:240]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="quick")
    p.add_argument("--dataset", default="movielens-small")
    p.add_argument("--seeds", type=int, nargs="+", help="a replicated build at these split seeds")
    p.add_argument("--against", metavar="REV", help="first build the book with the code of this commit (a git "
                   "worktree of it), then with this checkout's, and compare what the two computed")
    a = p.parse_args(argv)
    exit_on_sigterm()          # stopped: the build and the old worktree go too
    what = f"{a.profile} profile, {a.dataset}" + (f", split seeds {' '.join(map(str, a.seeds))}" if a.seeds else "")
    cmd = [sys.executable, "-m", "recmetrics.cli", "report", "--profile", a.profile, "--dataset", a.dataset,
           *(["--seeds", *map(str, a.seeds)] if a.seeds else [])]
    notes = ["empty run cache; --force executes every chapter; chapters run side by side (--jobs: the "
             "cores, at most 4); peak = summed proportional set size of the process tree"]
    with tempfile.TemporaryDirectory(prefix="bench-book-") as tmp:
        tmp = Path(tmp)
        rows = []
        if a.against:
            code = tmp / "old-code"
            with worktree(a.against, code) as old:
                before = build_twice(cmd, tmp / "old", code)
            rows += _rows(f"{what}, commit {old}", *before)
        first, again = build_twice(cmd, tmp / "new", compiled(HERE.parent))
        rows += _rows(f"{what}, this commit" if a.against else what, first, again)
        if a.against:
            from compare_builds import differences

            found = differences(*(tmp / side / "books" / "main" / "generated" for side in ("old", "new")))
            for line in found:
                print("DIFFERS:", line)
            notes += [f"this commit against {old}: {before[0]['wall'] / first['wall']:.2f}x faster in wall time, "
                      f"{before[0]['cpu'] / first['cpu']:.2f}x in CPU time (every chapter executed), the two builds "
                      f"run one after the other in this command",
                      "what the two builds computed (compare_builds.py: findings, tables, every chapter output): "
                      + ("the same, bit for bit" if not found else
                         f"{len(found)} difference(s): " + " | ".join(where(d) for d in found[:6])
                         + (" | ..." if len(found) > 6 else ""))]
    for row in rows:
        print(" | ".join(map(str, row)))
    notes.append(f"{sum(first['chapters'].values()):,.0f} s of chapter time in all")
    save_table(f"bench_book_{a.profile}_{a.dataset}" + ("_seeds" if a.seeds else ""),
               f"The book: recmetrics report --profile {a.profile} --dataset {a.dataset}"
               + (f" --seeds {' '.join(map(str, a.seeds))}" if a.seeds else "") + " (whole process)",
               ["build", "wall (m:ss)", "wall s", "CPU s", "peak GB", "chapters (s; side by side)"], rows,
               notes=notes, script="bench_book")


if __name__ == "__main__":
    main()
