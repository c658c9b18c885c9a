"""What the robustness study's tasks receive: the scoring context of a Study (every system's judged
runs stacked per fold, their scores on the full test sets: :class:`~recmetrics.meta.reduced_sets._Context`),
or a stand-in that names the file the Study was loaded from.

Locally the tasks share the context (threads, or processes forked after it was built). A Dask
worker is another process: it must receive it. Scattered, the context is pickled by the process
that built it, sent, and held a second time by each worker; at MovieLens-20M scale that is
gigabytes per copy (50 runs: the notebook's kernel was killed out of memory holding 11.7 GB).
When the Study came from a file (:func:`recmetrics.prepared.load_prepared`, which records it as
``study.origin``) and every worker can read that file, the workers receive its path and key
instead (:class:`StoredContext`, a few hundred bytes): each loads the Study and builds the context
once, on its first task, and drops it with the scattered stand-in at the end of the call (a study
that stops sampling early, :mod:`~recmetrics.meta.sample_stopping`, makes one call per checkpoint,
and each builds it again). The process that plans the samples then never builds a context at all:
the scores on the full test sets are computed on a worker too. Same code, same arrays, so the same
values bit for bit (tested). A worker lost meanwhile (its memory limit) loses the stand-in with it,
and the call fails with Dask's error rather than starting again.
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from .reduced_sets import _Context

__all__ = ["build_context", "StoredContext", "shared_context", "run_samples"]


def build_context(study, names: Sequence[str], replicates=None) -> _Context:
    """The scoring context of ``study`` for the metrics ``names`` (``"nDCG@10"``), aggregated per
    data-split replicate too when ``replicates`` labels the (fold, user) units."""
    from ..evaluation import parse_metrics

    ctx = _Context(study, parse_metrics(list(names)), study.ratings.groupby("user").size())
    if replicates is not None:
        ctx.set_replicates(study, replicates)
    return ctx


class StoredContext:
    """Stands for :func:`build_context` of the Study stored at ``origin`` (``(path, key)`` of
    :func:`recmetrics.prepared.load_prepared`; ``systems``: the Study's, checked against the file's):
    pickled, only the file's name and the arguments; :meth:`context` builds it once per process
    (first use, under a lock: a worker's threads share it)."""

    def __init__(self, origin: tuple[str, str], systems: Sequence[str], names: Sequence[str], replicates=None):
        self.origin, self.systems, self.names = (str(origin[0]), str(origin[1])), list(systems), list(names)
        self.replicates = None if replicates is None else np.asarray(replicates)
        self._ctx: _Context | None = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {k: getattr(self, k) for k in ("origin", "systems", "names", "replicates")}

    def __setstate__(self, state):
        self.__init__(**state)

    def context(self) -> _Context:
        with self._lock:
            if self._ctx is None:
                from ..prepared import load_prepared

                study = load_prepared(*self.origin)
                if study is None or list(study.systems) != self.systems:
                    raise InputError(f"the Study stored at {self.origin[0]} is not the one the study was given any "
                                     "more (removed or replaced since it was loaded, or its systems changed)")
                study.cube = None   # per-user scores the samples never read: their pages serve the context
                self._ctx = build_context(study, self.names, self.replicates)
            return self._ctx


def shared_context(study, names: Sequence[str], replicates=None, client: Any = None) -> _Context | StoredContext:
    """What the tasks of ``study``'s samples share: a :class:`StoredContext` on a Dask ``client``
    whose workers can all read the file ``study`` was loaded from, else the context itself."""
    origin = getattr(study, "origin", None)
    if client is not None and origin is not None:
        from ..parallel import workers_can_read

        if workers_can_read(client, origin[0]):
            return StoredContext(origin, study.systems, names, replicates)
    return build_context(study, names, replicates)


def run_samples(ctx: _Context | StoredContext, scenario: str, size: float, seeds: Sequence[int],
                aggregate) -> list[np.ndarray]:
    """A task: :meth:`_Context.samples` of the shared context."""
    return (ctx.context() if isinstance(ctx, StoredContext) else ctx).samples(scenario, size, seeds, aggregate)
