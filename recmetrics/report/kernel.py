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
"""
from __future__ import annotations

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
