"""How the report starts each chapter's kernel: quiet, and with pandas showing whole tables.

papermill starts one IPython kernel per notebook with :func:`kernel_arguments`:

* ``--IPKernelApp.log_level=CRITICAL``: the kernel's own start-up log (e.g. ipykernel's "Kernel is
  running over TCP without encryption", its "KeyboardInterrupt caught" at shut-down) is noise in
  the report's output; errors of the notebook's code still reach the cells and fail the build;
* ``--IPKernelApp.exec_lines``: :data:`DISPLAY_SETUP`, run before the first cell. pandas' defaults
  cut a DataFrame's HTML at 20 columns, 60 rows and 50 characters per cell ("..."), which in a
  static book hides what the reader came for (the metric descriptions, the guideline rules). The
  lines change how tables are displayed only, never a computed value; a notebook that sets its
  own ``pd.set_option`` keeps it.

Chapters that run at the same time (``recmetrics report --jobs 2``) each need their own
environment (their scratch folders, :mod:`.execute`): the process's ``os.environ`` is one for all,
so each chapter's kernel is started by a kernel manager of its own that adds the chapter's
variables to the kernel's environment and starts it in the chapter's folder (:func:`kernel_manager`;
the process's working folder is one for all too, and never changed) and tells who started it, so the
report can stop it on Ctrl-C (:func:`stop_kernel`).
"""
from __future__ import annotations

import os
import signal
from typing import Any, Callable, Mapping

#: pandas display options of the book: whole cells and columns, up to 1,000 rows
PANDAS_DISPLAY: dict[str, object] = {
    "display.max_colwidth": None,
    "display.max_columns": None,
    "display.max_rows": 1000,
}

#: Python run in each chapter's kernel before its first cell (one line; display settings only)
DISPLAY_SETUP = "import pandas as _rm_pd; " + "; ".join(
    f"_rm_pd.set_option({k!r}, {v!r})" for k, v in PANDAS_DISPLAY.items()) + "; del _rm_pd"


def kernel_arguments() -> list[str]:
    """The ``extra_arguments`` papermill gives the kernel of every chapter (see the module docstring).

    >>> kernel_arguments()[0]
    '--IPKernelApp.log_level=CRITICAL'
    """
    return ["--IPKernelApp.log_level=CRITICAL", f"--IPKernelApp.exec_lines={DISPLAY_SETUP}"]


def kernel_manager(env: Mapping[str, str], started: Callable[[Any], None] | None = None,
                   cwd: str | os.PathLike | None = None) -> type:
    """A jupyter_client kernel-manager class whose kernels get ``env`` on top of this process's
    environment and start in the folder ``cwd`` (when given); ``started(manager)`` is called once
    the kernel process runs. papermill takes it as ``kernel_manager_class``."""
    from jupyter_client.manager import AsyncKernelManager

    extra = {str(k): str(v) for k, v in env.items()}

    class ChapterKernelManager(AsyncKernelManager):
        async def _async_start_kernel(self, **kw: Any) -> None:
            kw["env"] = {**(kw.get("env") or os.environ), **extra}
            if cwd is not None:
                kw["cwd"] = str(cwd)
            await super()._async_start_kernel(**kw)
            if started is not None:
                started(self)

        start_kernel = _async_start_kernel

    return ChapterKernelManager


def stop_kernel(manager: Any) -> None:
    """Kill the kernel process group of ``manager`` (started by :func:`kernel_manager`), from any
    thread: the chapter running in it then fails at once. A kernel already gone is ignored."""
    provisioner = getattr(manager, "provisioner", None)
    pid, pgid = getattr(provisioner, "pid", None), getattr(provisioner, "pgid", None)
    try:
        if pgid and pgid != os.getpgid(0):   # the kernel's own session (jupyter_client starts one)
            os.killpg(pgid, signal.SIGKILL)
        elif pid:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
