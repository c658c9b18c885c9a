"""Independent work (folds x systems, robustness samples, permutation chunks) in parallel.

One code path, :func:`map_tasks`: joblib locally (``n_jobs``), or an existing Dask cluster when a
``dask.distributed.Client`` or a scheduler address (``"tcp://host:8786"``) is given — then each
task is submitted to that client, so the scheduling is Dask's, not ours.
Locally, ``prefer="fork"`` runs the tasks in processes forked from this one, which inherit the
large shared arguments (``scatter``) instead of receiving them: many numpy calls on blocks of a few
MB hold the GIL between them, so threads share one core for much of the time (the robustness
study at ML-20M scale: 1.2-1.6× on two threads, for 1.2-1.5× the CPU), while two forked
processes run side by side (1.75×).
Results come back in task order; every task carries its own seed (derive them with
:func:`task_seeds`), so the same seed gives identical results whatever the back-end or the number
of workers.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .errors import InputError

__all__ = ["map_tasks", "task_seeds", "get_client", "connected", "workers_can_read", "local_cluster", "exit_with_parent",
           "lower_priority", "release_workers", "ALLOCATOR_VARIABLES", "WORKER_VARIABLES"]

#: glibc's allocator settings for the processes that compute on large arrays (the chapter kernels, the
#: own-runs book's background study): every array comes from the heap (no ``mmap`` of its own) and the
#: heap is never handed back, so the memory a step frees serves the next step's arrays instead of being
#: returned and faulted in again, page by page. Measured: at ML-20M scale a quarter of the background
#: study's time; on the quick book's chapters 7 and 8 (ML-small) 222k -> 54k and 361k -> 55k page
#: faults, 1.2 and 1.8 s less system CPU; peak memory no higher (chapter 7: 806 -> 773 MB).
ALLOCATOR_VARIABLES = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}

#: the same for Dask worker processes, which run their tasks on threads: a thread other than the main
#: one allocates from an arena of its own, whose large blocks are mapped and unmapped whatever the two
#: settings say, so the workers keep to the one arena (``MALLOC_ARENA_MAX``). Measured on the own-runs
#: quick profile's robustness study at ML-20M scale (10 runs): 68.9 s in a process's main thread, 61.8 s
#: in another thread with :data:`ALLOCATOR_VARIABLES` and 44.8 s with one arena; on a one-worker
#: ``LocalCluster`` 127.7 s with Dask's own settings and 49.4 s with these (:func:`local_cluster`).
WORKER_VARIABLES = {**ALLOCATOR_VARIABLES, "MALLOC_ARENA_MAX": "1"}


def task_seeds(seed: int, n: int) -> list[int]:
    """``n`` independent 63-bit seeds derived from ``seed`` (numpy ``SeedSequence.spawn``)."""
    children = np.random.SeedSequence(seed).spawn(int(n))
    return [int(c.generate_state(2, dtype=np.uint32).astype(np.uint64) @ np.array([1 << 32, 1], dtype=np.uint64)
                >> np.uint64(1)) for c in children]


def get_client(client: Any, timeout: float = 5.0):
    """A ``dask.distributed.Client`` from a client or a scheduler address; a clear error when it cannot
    be reached (:class:`~recmetrics.errors.InputError`)."""
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise InputError("a Dask client was given but dask.distributed is not installed; "
                         "pip install 'recmetrics-eval[dask]'") from exc
    if isinstance(client, Client):
        if client.status not in ("running", "connecting"):
            raise InputError(f"the Dask client is {client.status!r}, not running; start it or pass another one")
        return client
    if isinstance(client, str):
        try:
            return Client(client, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {client!r} within {timeout:g} s: {exc}") from exc
    raise InputError(f"client must be a dask.distributed.Client or a scheduler address, got {type(client).__name__}")


@contextmanager
def connected(client: Any, timeout: float = 5.0):
    """:func:`get_client` for a ``with`` block: a client opened here from a scheduler address is
    closed at the block's end; a Client given stays open."""
    c = get_client(client, timeout)
    try:
        yield c
    finally:
        if isinstance(client, str):
            c.close()


def workers_can_read(client: Any, path: str) -> bool:
    """Whether every worker of the Dask cluster of ``client`` (a Client or scheduler address) can
    read the file ``path`` (a cluster on this machine, or one sharing its file system); ``False``
    when the cluster has no worker or cannot be asked."""
    with connected(client) as c:
        try:
            answers = c.run(os.access, str(path), os.R_OK)
        except Exception:   # a worker that cannot answer cannot be relied on to read the file either
            return False
    return bool(answers) and all(answers.values())


def local_cluster(n_workers: int, threads_per_worker: int = 1, **kw):
    """A ``dask.distributed.LocalCluster`` of ``n_workers`` worker processes (each of
    ``threads_per_worker`` threads; ``kw``: LocalCluster's other arguments) that start with
    :data:`WORKER_VARIABLES` on top of Dask's own (``distributed.nanny.pre-spawn-environ``; glibc
    reads them when a process starts, so a cluster's workers must be started with them). Dask's
    nanny writes those variables into this process's environment to start its workers: they are
    taken out again, so the commands this process starts later are not given them. Close it (or use
    it as a context manager) when done."""
    import dask
    from dask.distributed import LocalCluster

    env = {**dask.config.get("distributed.nanny.pre-spawn-environ", {}), **WORKER_VARIABLES}
    before = dict(os.environ)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
            return LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=True,
                                **{"dashboard_address": None, **kw})
    finally:
        for k in set(os.environ) - set(before):
            del os.environ[k]
        os.environ.update({k: v for k, v in before.items() if os.environ.get(k) != v})


def map_tasks(func: Callable, tasks: Sequence[tuple] | Iterable[tuple], *, n_jobs: int = 1, client: Any = None,
              progress: bool = False, desc: str = "tasks", prefer: str | None = None,
              scatter: Sequence[Any] | None = None) -> list:
    """``[func(*task) for task in tasks]``, in parallel: joblib with ``n_jobs`` workers, or the Dask
    cluster of ``client`` (a Client or scheduler address). Order is kept; a progress bar on request.
    ``prefer="threads"`` runs local workers as threads (no pickling of large shared arguments; numpy
    releases the GIL in its kernels), ``"processes"`` (joblib's default) as processes, ``"fork"`` as
    processes forked from this one that inherit ``scatter`` (copy-on-write: never pickled; threads
    where the platform cannot fork). ``scatter``: large arguments shared by every task, sent to each
    Dask worker once. joblib keeps its local worker processes for the next
    call (:func:`release_workers` ends them)."""
    from .checks import n_jobs as check_n_jobs

    n_jobs = check_n_jobs(n_jobs)
    tasks = list(tasks)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), desc=desc, unit="task")
    out = []
    try:
        if client is None and (n_jobs == 1 or len(tasks) <= 1):
            for t in tasks:
                out.append(func(*t))
                if bar is not None:
                    bar.update(1)
            return out
        if client is not None:
            with connected(client) as c:
                for r in _map_dask(c, func, tasks, scatter or ()):
                    out.append(r)
                    if bar is not None:
                        bar.update(1)
            return out
        from joblib import Parallel, delayed
        if prefer not in (None, "threads", "processes", "fork"):
            raise InputError(f"prefer must be 'threads', 'processes' or 'fork', got {prefer!r}")
        if prefer == "fork" and _can_fork():
            results = _map_forked(func, tasks, n_jobs, scatter or ())
        else:   # where the platform cannot fork, threads share the arguments
            results = Parallel(n_jobs=n_jobs, prefer="threads" if prefer == "fork" else prefer,
                               return_as="generator")(delayed(func)(*t) for t in tasks)
        for r in results:
            out.append(r)
            if bar is not None:
                bar.update(1)
        return out
    finally:
        if bar is not None:
            bar.close()


def _map_dask(client, func: Callable, tasks: list, scatter: Sequence[Any]):
    """``func(*task)`` for each task, in order, each a task of the Dask cluster of ``client``; the
    ``scatter`` objects are sent to every worker once (under random keys: no hashing of gigabytes)
    and stand for themselves in the tasks; released at the end (or when stopped by an error).

    Submitted to the client, not through joblib's ``dask`` back-end: that one counts the cluster's
    threads as its number of jobs and, on a cluster of one single-threaded worker, runs every task
    in order in the calling process (joblib's path for one job), the scattered data unused."""
    futures = client.scatter(list(scatter), broadcast=True, hash=False) if scatter else []
    where = {id(o): f for o, f in zip(scatter, futures)}
    submitted = [client.submit(func, *[where.get(id(a), a) for a in t], pure=False) for t in tasks]
    try:
        for f in submitted:
            yield f.result()
    finally:
        keys = [f.key for f in submitted + list(futures)]
        client.cancel(submitted + list(futures))
        client.run(_give_back_memory, keys)


async def _give_back_memory(keys: Sequence, dask_worker=None, wait: float = 10.0) -> None:
    """On a Dask worker, once it holds none of ``keys`` (a call's results and shared data, being
    released; at most ``wait`` seconds): collect garbage and hand the C heap's free pages back to the
    system (glibc's ``malloc_trim``; nothing where there is none). A worker started with
    :data:`WORKER_VARIABLES` keeps what it frees for its next arrays; at the end of a call that
    memory would stay with it, idle, while the build goes on (at MovieLens-20M scale 50 runs'
    judging left 8.4 GB in one worker, and the robustness study's context then pushed it past its
    memory limit). A coroutine: it runs in the worker's event loop, which meanwhile releases the keys."""
    import asyncio
    import ctypes
    import gc
    import time

    if dask_worker is not None:
        end = time.monotonic() + wait
        while any(k in dask_worker.data for k in keys) and time.monotonic() < end:
            await asyncio.sleep(0.02)
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):   # not glibc
        pass


def release_workers() -> None:
    """End the worker processes joblib keeps for its next call (loky's reusable executor; they would
    otherwise live until five minutes idle). Reusing them saves their start-up (a second each: the
    imports) to calls made one after another; a build that read its runs on them while planning and
    then runs chapters for minutes ends them first (:func:`recmetrics.report.own_runs.build`): idle,
    they still held what they had read (0.9 GB at MovieLens-20M scale, measured). Where joblib has
    started none, it does nothing: asking loky for its executor would start one, and its resource
    tracker process, only to end them."""
    from joblib.externals.loky import get_reusable_executor, reusable_executor

    if getattr(reusable_executor, "_executor", True) is None:   # none started (True: loky no longer says)
        return
    get_reusable_executor(reuse=True).shutdown(wait=True)


# ------------------------------------------------------------------------------------ forked workers
#: the ``scatter`` arguments of the :func:`map_tasks` call under way, set just before its workers
#: fork: they find them here (inherited) instead of receiving them
_INHERITED: list = []


def exit_with_parent(parent: int, every: float = 1.0) -> None:
    """End this process as soon as its parent ``parent`` is gone: a build killed by a signal it
    cannot catch (SIGKILL, or SIGTERM to the build alone) must not leave its background study
    computing for minutes with gigabytes in memory (the study's lock dies with the process, and
    the result is only ever stored whole), nor a forked worker (:func:`map_tasks`) its parent's."""
    import threading
    import time

    def watch():
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


#: where Linux keeps the nice value of this process's *autogroup* (its session's scheduling group)
AUTOGROUP = "/proc/self/autogroup"


def lower_priority(nice: int) -> int | None:
    """Run this process, and what it forks, after the other work of the machine: ``os.nice`` and,
    when this process leads its own session, the nice of the session's scheduling group.

    With autogroups (Linux's default on desktops and on this machine: ``kernel.sched_autogroup_enabled``)
    the scheduler first shares the CPU fairly between sessions, and a process's own nice counts only
    against processes of its session. A chapter's Jupyter kernel starts a session of its own, so a
    niced background study in the build's session still took one of two cores from it: chapter 1's
    BLAS products of the own-runs paper profile ran 2.8× slower beside the study than with the
    study's group niced too (measured: 940 s against 340 s for 100,000 permutations). The group is
    only touched when this process leads its session (started with ``start_new_session``): lowering
    the group of the terminal it was started from would slow the user's shell too. Returns the
    group's nice after the call (``None`` where there are no autogroups; nothing is done where
    processes have no nice, as on Windows)."""
    if not hasattr(os, "nice"):
        return None
    os.nice(nice)
    if os.getsid(0) != os.getpid():
        return None
    try:
        with open(AUTOGROUP) as f:                     # "/autogroup-25 nice 0"
            current = int(f.read().split()[-1])
        if current < nice:
            with open(AUTOGROUP, "w") as f:
                f.write(str(nice))
        with open(AUTOGROUP) as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):          # no autogroups (other systems, kernels, containers)
        return None


def _can_fork() -> bool:
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods()


class _Inherited:
    """Stands for ``_INHERITED[i]`` in a task's arguments (what is pickled instead of the object)."""

    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i

    def __reduce__(self):
        return _Inherited, (self.i,)


def _run_inherited(func: Callable, args: tuple):
    return func(*[_INHERITED[a.i] if isinstance(a, _Inherited) else a for a in args])


def _map_forked(func: Callable, tasks: list, n_jobs: int, scatter: Sequence[Any]):
    """``func(*task)`` for each task, in order, on ``n_jobs`` processes forked from this one (counted as
    joblib counts them: ``-1`` = every core). ``scatter``'s objects are inherited, not pickled; a worker
    that dies (killed, out of memory) fails the call (``BrokenProcessPool``) rather than hang it."""
    import multiprocessing as mp
    import pickle
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    from joblib import effective_n_jobs

    global _INHERITED
    workers = max(1, min(len(tasks), effective_n_jobs(n_jobs)))
    where = {id(o): i for i, o in enumerate(scatter)}
    packed = [tuple(_Inherited(where[id(a)]) if id(a) in where else a for a in t) for t in tasks]
    for t in packed:   # what cannot be sent fails here: in the pool's feeder thread it can hang the pool's shutdown
        pickle.dumps((func, t))
    _INHERITED = list(scatter)
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"), initializer=exit_with_parent,
                               initargs=(os.getpid(),))
    try:
        yield from pool.map(partial(_run_inherited, func), packed)
    finally:   # on an error, the tasks not started are dropped, not waited for
        pool.shutdown(cancel_futures=True)
        _INHERITED = []
