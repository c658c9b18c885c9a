"""Independent work (folds x systems, robustness samples, permutation chunks) in parallel.

One code path, :func:`map_tasks`: joblib locally (``n_jobs``), or an existing Dask cluster when a
``dask.distributed.Client`` or a scheduler address (``"tcp://host:8786"``) is given — then the
tasks go through joblib's ``dask`` back-end of that client, so the scheduling is Dask's, not ours.
Results come back in task order; every task carries its own seed (derive them with
:func:`task_seeds`), so the same seed gives identical results whatever the back-end or the number
of workers.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .errors import InputError

__all__ = ["map_tasks", "task_seeds", "get_client"]


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
                         "pip install 'recmetrics[dask]'") from exc
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


def map_tasks(func: Callable, tasks: Sequence[tuple] | Iterable[tuple], *, n_jobs: int = 1, client: Any = None,
              progress: bool = False, desc: str = "tasks", prefer: str | None = None,
              scatter: Sequence[Any] | None = None) -> list:
    """``[func(*task) for task in tasks]``, in parallel: joblib with ``n_jobs`` workers, or the Dask
    cluster of ``client`` (a Client or scheduler address). Order is kept; a progress bar on request.
    ``prefer="threads"`` runs local workers as threads (no pickling of large shared arguments; numpy
    releases the GIL in its kernels), ``"processes"`` (joblib's default) as processes. ``scatter``:
    large arguments shared by every task, sent to the Dask workers once (joblib's ``scatter``)."""
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
        from joblib import Parallel, delayed, parallel_config

        if client is not None:
            c = get_client(client)
            try:
                with parallel_config(backend="dask", client=c, scatter=list(scatter) if scatter else None):
                    gen = Parallel(return_as="generator")(delayed(func)(*t) for t in tasks)
                    for r in gen:
                        out.append(r)
                        if bar is not None:
                            bar.update(1)
            finally:
                if isinstance(client, str):
                    c.close()
            return out
        if prefer not in (None, "threads", "processes"):
            raise InputError(f"prefer must be 'threads' or 'processes', got {prefer!r}")
        for r in Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")(delayed(func)(*t) for t in tasks):
            out.append(r)
            if bar is not None:
                bar.update(1)
        return out
    finally:
        if bar is not None:
            bar.close()

