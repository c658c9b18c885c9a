"""The own-runs book at MovieLens-20M scale: ``recmetrics report --qrels Q --runs R1 ... RN``, whole process.

Workload (generated with numpy/pyarrow in seconds per run, seeded, cached in a temp folder, no
network): judgments of ``--users`` users (default 138,000, as ML-20M) on ``--items`` items
(27,000) with popularity-skewed items (Zipf, exponent 0.9, item ids shuffled) and a heavy-tailed
number of judgments per user (log-normal around ``--judged`` = 28: ~3.9M judgments), ratings 1-5
from a user bias, an item quality and noise (relevant at 4 and 5: a ``user,item,rating`` CSV, so
the threshold is the rating tables' 4). ``--runs`` runs of top-``--depth`` (100) lists in TREC
format (13.8M lines each), of different quality: system ``s`` scores each candidate (the user's
judged items and 300 popularity-drawn ones) by ``w_s * (rating - 3) + b_s * log(popularity) + noise``
with ``w_s`` from 0 (no knowledge of the judgments: a popularity or random ranker) up to 1.2 and
``b_s`` alternating among 0, 0.5 and 1: systems from random to good, some popularity-biased.

Measured: the wall time of the whole command, per chapter (the ``executed X in Ns`` lines of the
build's log) and the peak memory of the process tree (the sum of the proportional set sizes of the
command and every descendant, sampled every 0.2 s with psutil, less often when a sample is slow;
per chapter, the peak while it ran; with ``--workers``, the local cluster's scheduler and worker
processes too), from an empty run cache and an empty book folder.

``--scheduler`` runs the chapters' studies on a Dask cluster: ``--workers N`` starts a local
``dask.distributed.LocalCluster`` of N single-threaded worker processes for the build (``--workers
1 2`` measures both, one after the other); ``--compare DIR`` checks that the executed chapters
equal those of another build (every output but timings and paths, see :func:`chapter_outputs`).

Usage::

    python benchmarks/bench_scale.py                                   # 10 runs, quick profile
    python benchmarks/bench_scale.py --profile paper
    python benchmarks/bench_scale.py --runs 50 --workers 1 2 --compare-local
    python benchmarks/bench_scale.py --users 2000 --items 3000 --runs 3  # a small version (seconds)
    python benchmarks/bench_scale.py --profile paper --against REV      # commit REV's code first, then this one's

With ``--against REV`` (local builds only) the same workload is built twice in one command, by the
code of commit ``REV`` (a git worktree) and by this checkout's, and the table says which chapters'
outputs differ (a change of values is reported, not refused).

Each configuration keeps its own results file (:func:`table_name`). Never run two ML-20M-scale
builds at once on a shared machine (each holds several GB).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_LOG = re.compile(r"\[recmetrics report\] (executing|executed) (\S+\.ipynb)(?: in ([0-9.]+)s)?")


# ------------------------------------------------------------------------------------ workload
def _zipf(n_items: int, exponent: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Popularity of each item (shuffled ids: item 0 is not the most popular) and its CDF."""
    pop = 1.0 / np.arange(1, n_items + 1) ** exponent
    pop = pop[rng.permutation(n_items)]
    pop /= pop.sum()
    return pop, np.cumsum(pop)


def _judgments(n_users: int, n_items: int, n_judged: float, rng: np.random.Generator, cdf: np.ndarray):
    """Sorted unique ``(user, item)`` codes and ratings 1-5: a log-normal number of draws per user
    (mean ``n_judged``, at least 1, at most 20x the mean), items drawn by popularity."""
    sigma = 0.8
    k = np.exp(rng.normal(np.log(n_judged) - sigma ** 2 / 2, sigma, n_users))
    k = np.clip(np.rint(k), 1, 20 * n_judged).astype(np.int64)
    users = np.repeat(np.arange(n_users, dtype=np.int64), k)
    items = np.minimum(np.searchsorted(cdf, rng.random(len(users))), n_items - 1)
    keys = np.unique(users * n_items + items)                       # drop repeated draws
    users, items = keys // n_items, keys % n_items
    bias, quality = rng.normal(0, 0.5, n_users), rng.normal(0, 0.7, n_items)
    latent = 3.4 + bias[users] + quality[items] + rng.normal(0, 0.9, len(keys))
    return users, items, np.clip(np.rint(latent), 1, 5).astype(np.int8)


def _systems(n_runs: int) -> list[tuple[float, float]]:
    """``(w, b)`` per system: weight of the judgments' signal and of log-popularity."""
    w = np.linspace(0.0, 1.2, n_runs)
    return [(float(w[s]), (0.0, 0.5, 1.0)[s % 3]) for s in range(n_runs)]


def _write_table(columns: dict, path: Path, sep: str) -> None:
    """A header line of the column names, then the rows (no quotes)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pa.table(columns)
    with open(path, "wb") as f:
        f.write((sep.join(columns) + "\n").encode())
        opts = pacsv.WriteOptions(include_header=False, delimiter=sep, quoting_style="none")
        with pacsv.CSVWriter(f, table.schema, write_options=opts) as w:
            w.write_table(table)


def workload(folder: Path, n_users: int = 138_000, n_runs: int = 10, n_items: int = 27_000,
             n_judged: float = 28, depth: int = 100, seed: int = 0, chunk: int = 10_000,
             log=print) -> tuple[Path, list[Path]]:
    """Write (or reuse) the qrels CSV and the ``n_runs`` TREC run files; returns their paths.

    Candidates of a user are its judged items and 300 popularity draws (a draw repeating an item is
    dropped, the judged copy kept), shared by every system; each system ranks them by its own score
    and writes the top ``depth`` (a list is shorter only when fewer distinct candidates exist)."""
    import pyarrow as pa

    tag = f"u{n_users}_i{n_items}_j{n_judged:g}_d{depth}_r{n_runs}_s{seed}_v1"   # the systems' grid depends on n_runs
    out = Path(folder) / tag
    out.mkdir(parents=True, exist_ok=True)
    qrels = out / "qrels.csv"
    paths = [out / f"run{s:02d}.trec" for s in range(n_runs)]
    if qrels.exists() and all(p.exists() for p in paths):
        return qrels, paths
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pop, cdf = _zipf(n_items, 0.9, rng)
    users, items, ratings = _judgments(n_users, n_items, n_judged, rng, cdf)
    user_ids = pa.array([f"u{u}" for u in range(n_users)])
    item_ids = pa.array([f"i{i}" for i in range(n_items)])
    if not qrels.exists():
        tmp = qrels.with_suffix(".tmp")
        _write_table({"user": user_ids.take(pa.array(users)), "item": item_ids.take(pa.array(items)),
                      "rating": pa.array(ratings)}, tmp, ",")
        tmp.replace(qrels)
    log(f"qrels: {len(users):,} judgments of {n_users:,} users ({time.perf_counter() - t0:.1f}s)")
    starts = np.searchsorted(users, np.arange(n_users + 1))
    logpop = np.log(pop)
    systems = _systems(n_runs)
    writers = {}
    import pyarrow.csv as pacsv

    schema = pa.schema([("u", pa.string()), ("q", pa.string()), ("i", pa.string()), ("r", pa.int32()),
                        ("s", pa.float64()), ("t", pa.string())])
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    todo = [s for s, p in enumerate(paths) if not p.exists()]
    try:
        for s in todo:
            writers[s] = pacsv.CSVWriter(str(paths[s].with_suffix(".tmp")), schema, write_options=opts)
        for u0 in range(0, n_users, chunk):
            u1 = min(n_users, u0 + chunk)
            m = u1 - u0
            lo, hi = starts[u0], starts[u1]
            counts = np.diff(starts[u0:u1 + 1])
            kmax = int(counts.max()) if m else 0
            # candidates: judged items (padded with -1) then popularity draws, judged copies first
            judged = np.full((m, kmax), -1, dtype=np.int64)
            rating = np.zeros((m, kmax))
            col = np.arange(hi - lo) - np.repeat(starts[u0:u1] - lo, counts)
            judged[users[lo:hi] - u0, col] = items[lo:hi]
            rating[users[lo:hi] - u0, col] = ratings[lo:hi]
            draws = np.minimum(np.searchsorted(cdf, rng.random((m, 300))), n_items - 1)
            cand = np.concatenate([judged, draws], axis=1)
            signal = np.concatenate([rating - 3.0, np.zeros_like(draws, dtype=np.float64)], axis=1)
            key = np.where(cand < 0, np.iinfo(np.int64).max, cand * 2 + (np.arange(cand.shape[1]) >= kmax))
            order = np.argsort(key, axis=1, kind="stable")
            cand, signal = np.take_along_axis(cand, order, 1), np.take_along_axis(signal, order, 1)
            dup = np.zeros(cand.shape, dtype=bool)
            dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
            invalid = dup | (cand < 0)
            noise = rng.normal(0, 1, cand.shape)
            for s in todo:
                w, b = systems[s]
                score = w * signal + b * logpop[np.maximum(cand, 0)] + noise * (1.0 + 0.3 * (s % 2))
                score[invalid] = -np.inf
                top = np.argsort(-score, axis=1, kind="stable")[:, :depth]
                best = np.take_along_axis(score, top, 1)
                ok = np.isfinite(best)
                rows = np.broadcast_to(np.arange(u0, u1)[:, None], top.shape)[ok]
                ranks = np.broadcast_to(np.arange(1, top.shape[1] + 1, dtype=np.int32)[None, :], top.shape)[ok]
                n = int(ok.sum())
                const = pa.array(["Q0", f"run{s:02d}"])
                writers[s].write_table(pa.table({
                    "u": user_ids.take(pa.array(rows)), "q": const.take(pa.array(np.zeros(n, np.int32))),
                    "i": item_ids.take(pa.array(np.take_along_axis(cand, top, 1)[ok])), "r": pa.array(ranks),
                    "s": pa.array(np.round(best[ok], 4)), "t": const.take(pa.array(np.ones(n, np.int32)))},
                    schema=schema))
    finally:
        for w in writers.values():
            w.close()
    for s in todo:
        paths[s].with_suffix(".tmp").replace(paths[s])
    log(f"{len(todo)} run(s) of top-{depth} lists written in {time.perf_counter() - t0:.1f}s ({out})")
    return qrels, paths


# ------------------------------------------------------------------------------------ measuring
@contextlib.contextmanager
def stopped_with_this(proc: subprocess.Popen):
    """Run the body; if it ends with ``proc`` still running (this benchmark was stopped: Ctrl-C, or
    SIGTERM through :func:`exit_on_sigterm`), terminate ``proc`` and wait for it, so no build outlives
    the benchmark that started it. SIGTERM, not SIGINT: ``recmetrics report`` stops on either, but a
    process started in the background by a non-interactive shell ignores SIGINT, and so do its children."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()


def exit_on_sigterm() -> None:
    """SIGTERM ends this process as an exit does, so the ``finally`` clauses (:func:`stopped_with_this`,
    a removed worktree) run; by default SIGTERM kills it at once and leaves its build running."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _resident(p) -> int:
    """Bytes of memory process ``p`` (psutil) holds: its proportional set size (a page shared by n
    processes counts 1/n in each, so chapter kernels forked from one server, which share its imports,
    are not counted n times over) where Linux gives it (``/proc/PID/smaps_rollup``), else its RSS."""
    try:
        with open(f"/proc/{p.pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return p.memory_info().rss


class TreeMemory(threading.Thread):
    """Samples the summed resident memory (:func:`_resident`) of a process and all its descendants
    every ``interval`` seconds, or less often when a sample is slow: it never takes more than
    :attr:`SHARE` of one core from the build it measures (reading a process's proportional set size
    walks its page tables: at ML-20M scale, every 0.2 s, the sampler took a quarter of a core of this
    2-core machine); :attr:`peak` is the largest sum seen and :meth:`mark` starts a new per-phase peak."""

    #: the most of one core the sampling may use (each sample is followed by a wait of at least
    #: ``1 / SHARE - 1`` times its own length)
    SHARE = 0.05

    def __init__(self, pid: int, interval: float = 0.2):
        super().__init__(daemon=True)
        import psutil

        self.proc, self.interval = psutil.Process(pid), interval
        self.peak = self.phase_peak = 0
        self.cpu_seen: dict[int, float] = {}   # user + system seconds of every process, as last sampled
        t = self.proc.cpu_times()
        self.cpu_before = t.user + t.system    # the root's CPU before this build (a cluster's caller ran earlier builds)
        self.own_cpu = 0.0                     # this thread's CPU, part of the root's when the root is this process
        self._halt = threading.Event()

    def sample(self) -> int:
        import psutil

        total = 0
        try:
            procs = [self.proc, *self.proc.children(recursive=True)]
        except psutil.Error:
            return 0
        for p in procs:
            try:
                total += _resident(p)
                t = p.cpu_times()
                self.cpu_seen[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        return total

    @property
    def cpu(self) -> float:
        """CPU seconds of every process of the tree seen (a process ending between two samples loses
        at most ``interval`` of it): counts the workers a parent never waits for, which
        ``RUSAGE_CHILDREN`` misses. The sampling's own CPU is left out."""
        own = self.own_cpu if self.proc.pid == os.getpid() else 0.0
        return sum(self.cpu_seen.values()) - self.cpu_before - own

    def run(self):
        cpu0 = time.thread_time()
        while not self._halt.is_set():
            t0 = time.perf_counter()
            rss = self.sample()
            took = time.perf_counter() - t0
            self.own_cpu = time.thread_time() - cpu0
            self.peak, self.phase_peak = max(self.peak, rss), max(self.phase_peak, rss)
            self._halt.wait(max(self.interval, took * (1 / self.SHARE - 1)))

    def mark(self) -> int:
        """The peak of the phase that ends now; starts the next phase."""
        peak, self.phase_peak = self.phase_peak, 0
        return peak

    def stop(self):
        self._halt.set()
        self.join()


def build(qrels: Path, runs: list[Path], out: Path, profile: str = "quick", scheduler: str | None = None,
          cache: Path | None = None, extra: list[str] | None = None, log=lambda msg: print(msg, flush=True),
          cluster_here: bool = False, code: str | None = None) -> dict:
    """Run ``recmetrics report --qrels Q --runs R... --out OUT --name bench-<OUT's name>`` (its own book
    folder, ``runs/bench-<name>-<hash of the name>`` of a books' cache in ``OUT``) as a whole process from
    an empty run cache and an empty book folder; returns ``{"wall", "cpu", "peak_mb", "chapters": {name:
    (seconds, peak MB)}, "index"}`` (``cpu``: user + system seconds of the process tree, what a shared
    machine does not inflate much: the larger of the waited-for descendants' rusage and the tree's
    sampled CPU times). ``cluster_here``: the
    ``scheduler`` is a local cluster started by this process, whose workers (this process's children)
    count in the memory and CPU measured, with the command's tree. ``code``: a checkout whose package
    the command imports instead of this one's (``--against``)."""
    cmd = [sys.executable, "-m", "recmetrics.cli", "report", "--profile", profile, "--qrels", str(qrels),
           "--runs", *map(str, runs), "--out", str(out / "html"), "--name", f"bench-{out.name}", *(extra or [])]
    if scheduler:
        cmd += ["--scheduler", scheduler]
    # a books' cache of its own too: the book's folder (its executed chapters) is empty, as the run cache
    env = dict(os.environ, RECMETRICS_CACHE=str(cache or out / "cache"), RECMETRICS_BOOKS=str(out / "books"),
               PYTHONUNBUFFERED="1")
    if code is not None:
        sys.path.insert(0, str(Path(__file__).parent))
        from record import pythonpath

        env["PYTHONPATH"] = pythonpath(code)
    import resource

    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, started_at = time.perf_counter(), time.time()
    proc = subprocess.Popen(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    # on a local cluster, its scheduler (this process) and worker processes are this process's: count them too
    mem = TreeMemory(os.getpid() if cluster_here else proc.pid)
    mem.start()
    chapters, tail, started = {}, [], t0
    with stopped_with_this(proc):
        for line in proc.stdout:
            tail = (tail + [line])[-40:]
            m = _LOG.search(line)
            if m and m.group(1) == "executing":
                if not chapters:
                    chapters["(planning: read and check the inputs)"] = (time.perf_counter() - t0, mem.mark() / 2**20)
                    log(f"  planning: {time.perf_counter() - t0:.1f} s")
                started = time.perf_counter()
                mem.mark()
            elif m:
                chapters[m.group(2)] = (float(m.group(3) or time.perf_counter() - started), mem.mark() / 2**20)
                log(f"  {m.group(2)}: {chapters[m.group(2)][0]:.1f} s, peak {chapters[m.group(2)][1] / 1024:.2f} GB "
                    f"({time.perf_counter() - t0:.0f} s since the start)")
        rc = proc.wait()
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    chapters["(book: html, vendored JS, checks)"] = (wall - sum(s for s, _ in chapters.values()), mem.mark() / 2**20)
    mem.stop()
    cpu = max(cpu, mem.cpu)   # the waited-for descendants' rusage, or the sampled tree when it saw more
    if rc != 0:
        raise SystemExit(f"recmetrics report failed ({rc}):\n{''.join(tail)}")
    index = next((ln.split(":", 1)[1].strip() for ln in tail if ln.startswith("book built:")), None)
    return {"name": f"bench-{out.name}", "wall": wall, "cpu": cpu, "peak_mb": mem.peak / 2**20, "chapters": chapters, "index": index, "command": cmd,
            "started": started_at, "books": env["RECMETRICS_BOOKS"]}


def chapter_outputs(folder: Path) -> dict[str, list[str]]:
    """The outputs of every executed chapter in ``folder`` (the book sources' ``generated/``):
    text, Markdown, HTML and chart specs, with the run-specific parts (timings, temporary paths,
    chart ids, pandas Styler table ids and object addresses) removed, so two builds of the same inputs compare equal exactly when their numbers do."""
    out = {}
    for nb in sorted(Path(folder).glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts = []
        for c in cells:
            for o in c.get("outputs", []):
                for kind in ("text/plain", "text/markdown", "text/html", "application/vnd.vegalite.v5+json"):
                    v = o.get("data", {}).get(kind, o.get("text") if kind == "text/plain" else None)
                    if v is not None:
                        v = v if isinstance(v, str) else "".join(v) if isinstance(v, list) else json.dumps(v, sort_keys=True)
                        texts.append(re.sub(r"(/tmp|/work)[^\s'\"<]*|view_[0-9a-f]+|altair-viz-[0-9a-f]+|\bT_[0-9a-f]{5}(?![0-9a-f])| at 0x[0-9a-f]+",
                                            "", v))
        out[nb.name] = texts
    return out


def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` single-threaded worker processes started as the package
    recommends (:func:`recmetrics.parallel.local_cluster`: the allocator settings of the chapters'
    kernels, one arena) and Dask's default memory limit (the machine's memory shared among the
    workers); the caller closes it."""
    from recmetrics.parallel import local_cluster

    return local_cluster(workers)


def _report(label: str, res: dict) -> list:
    print(f"\n{label}: {res['wall']:.1f} s whole ({res['cpu']:.1f} s CPU), peak {res['peak_mb'] / 1024:.2f} GB "
          "(process tree)")
    for name, (sec, mb) in res["chapters"].items():
        print(f"  {name:<45} {sec:8.1f} s  {mb / 1024:6.2f} GB")
    return [label, round(res["wall"], 1), round(res["cpu"], 1), round(res["peak_mb"] / 1024, 2),
            "; ".join(f"{k} {s:.0f}s/{mb / 1024:.1f}GB" for k, (s, mb) in res["chapters"].items())]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=138_000)
    ap.add_argument("--items", type=int, default=27_000)
    ap.add_argument("--judged", type=float, default=28, help="mean judgments per user")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", default="quick", choices=["quick", "paper"])
    ap.add_argument("--workers", type=int, nargs="*", default=[],
                    help="build on a local Dask cluster of each of these numbers of workers (--scheduler)")
    ap.add_argument("--compare-local", action="store_true",
                    help="with --workers: also build locally and check every cluster build gives identical chapters")
    ap.add_argument("--folder", default=str(Path(tempfile.gettempdir()) / "recmetrics_bench_scale"),
                    help="where the workload and the builds are written")
    ap.add_argument("--only-workload", action="store_true", help="write the workload and stop")
    ap.add_argument("--keep", action="store_true", help="keep the built books (default: removed after measuring)")
    ap.add_argument("--label", default="", help="a word added to each build's label (e.g. before/after)")
    ap.add_argument("--save-chapters", default=None, help="write the chapters' outputs (JSON) here, to compare builds")
    ap.add_argument("--compare-chapters", default=None, help="check the chapters equal those saved by --save-chapters")
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results/bench_scale.json")
    ap.add_argument("--jobs", type=int, default=None, help="chapters at once (recmetrics report --jobs; default its own)")
    ap.add_argument("-p", dest="param", action="append", default=[], help="KEY=VALUE passed to recmetrics report")
    ap.add_argument("--against", default=None, metavar="REV",
                    help="build with commit REV's code first (a git worktree), then with this checkout's")
    args = ap.parse_args(argv)
    exit_on_sigterm()          # stopped: the build it runs stops with it
    folder = Path(args.folder)
    t0 = time.perf_counter()
    qrels, runs = workload(folder / "inputs", args.users, args.runs, args.items, args.judged, args.depth, args.seed)
    lines = sum(1 for _ in open(qrels)) - 1
    print(f"workload: {lines:,} judgments, {len(runs)} runs ({time.perf_counter() - t0:.1f}s; {qrels.parent})")
    if args.only_workload:
        return
    import recmetrics

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(recmetrics.__file__).parent)], check=True)
    extra = [x for p in args.param for x in ("-p", p)] + (["--jobs", str(args.jobs)] if args.jobs else [])
    if args.against and args.workers:
        raise SystemExit("--against compares local builds: leave --workers out")
    rows, builds, notes = [], {}, []
    plans = ([("local", None)] if not args.workers or args.compare_local else []) + \
        [(f"dask {w} worker{'s' if w > 1 else ''}", w) for w in args.workers]
    with contextlib.ExitStack() as stack:
        if args.against:
            sys.path.insert(0, str(Path(__file__).parent))
            from record import worktree

            old_code = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-scale-"))) / "code"
            short = stack.enter_context(worktree(args.against, old_code))   # compiled, as this checkout below
            plans = [(f"local, commit {short}", None, str(old_code)), ("local, this commit", None, None)]
        else:
            plans = [(label, workers, None) for label, workers in plans]
        _measure(args, plans, folder, qrels, runs, extra, rows, builds)
    if len(builds) > 1:
        ref_label, ref = next(iter(builds.items()))
        for label, got in list(builds.items())[1:]:
            differ = [c for c in sorted(set(ref) | set(got)) if ref.get(c) != got.get(c)]
            print(f"{label} vs {ref_label}: chapters {'identical' if not differ else 'DIFFER: ' + ', '.join(differ)}")
            if differ and not args.against:
                raise SystemExit(f"{label} gives other chapters than {ref_label}")
            if args.against:
                notes.append(f"chapters whose outputs differ between the two commits: {', '.join(differ) or 'none'}")
    if not args.keep:
        shutil.rmtree(folder / "builds", ignore_errors=True)
    if not args.no_save:
        sys.path.insert(0, str(Path(__file__).parent))
        from record import save_table

        save_table(table_name(args.profile, len(runs), args.workers),
                   "The own-runs book at ML-20M scale: recmetrics report --qrels Q --runs R1..RN "
                   "(whole process, empty run cache)", ["build", "whole s", "CPU s", "peak GB", "per chapter (s / peak GB)"],
                   rows, [f"{lines:,} judgments of {args.users:,} users, {len(runs)} runs of top-{args.depth} lists "
                          f"({args.items:,} items, popularity-skewed); peak = summed proportional set size of the "
                          "process tree (with a local cluster, its workers too)", *notes],
                   argv=argv, script="bench_scale")


def _measure(args, plans, folder: Path, qrels: Path, runs: list, extra: list, rows: list, builds: dict) -> None:
    """Build the book once per plan ``(label, local cluster workers or None, code or None)``, one after
    the other, each row and chapter outputs added to ``rows`` and ``builds``."""
    for label, workers, code in plans:
        out = folder / "builds" / re.sub(r"\W+", "-", f"{label}-{args.label}-{args.users}" if args.label else label)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        cluster = local_cluster(workers) if workers else None
        try:
            res = build(qrels, runs, out, args.profile, cluster.scheduler_address if cluster else None, extra=extra,
                        cluster_here=cluster is not None, code=code)
        finally:
            if cluster is not None:
                cluster.close()
        rows.append(_report(f"{label}{' ' + args.label if args.label else ''}, {args.profile} profile, "
                            f"{len(runs)} runs", res))
        builds[label] = chapter_outputs(_chapters_of(res))
        if not builds[label]:
            raise SystemExit(f"no executed chapter in {_chapters_of(res)}")
        if args.save_chapters:
            Path(args.save_chapters).write_text(json.dumps(builds[label]), encoding="utf-8")
        if args.compare_chapters:
            same = json.loads(Path(args.compare_chapters).read_text(encoding="utf-8")) == builds[label]
            print(f"{label}: chapters {'identical to' if same else 'DIFFER from'} {args.compare_chapters}")
            if not same:
                raise SystemExit("the chapters differ")


def table_name(profile: str, n_runs: int, workers) -> str:
    """The results file of a configuration, so the quick, paper and Dask measurements are kept side
    by side: ``bench_scale`` (quick profile, 10 runs, local), else e.g. ``bench_scale_paper`` or
    ``bench_scale_50runs_dask``."""
    parts = ["bench_scale"] + ([profile] if profile != "quick" else []) + \
        ([f"{n_runs}runs"] if n_runs != 10 else []) + (["dask"] if workers else [])
    return "_".join(parts)


def _chapters_of(res: dict) -> Path:
    """The folder of the executed chapters of the build ``res`` (the own-runs book's sources are
    written under ``runs/<its name>-<hash>`` of the books' cache, ``recmetrics.report.own_book.runs_root``)."""
    folder = subprocess.run([sys.executable, "-c", "import sys; from recmetrics.report.own_book import book_folder; "
                             "print(book_folder(sys.argv[1], ''))", res["name"]],
                            capture_output=True, text=True, check=True,
                            env=dict(os.environ, RECMETRICS_BOOKS=res["books"])).stdout.strip()   # the build's books' cache
    found = [p for p in [Path(folder) / "src" / "generated"] if p.is_dir()]   # a named book's folder: name + hash
    if not found or found[-1].stat().st_mtime < res["started"]:
        raise SystemExit(f"the executed chapters of the build were not found under {folder}")
    return found[-1]


if __name__ == "__main__":
    main()
