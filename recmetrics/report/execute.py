"""Execute the notebooks with papermill (widget state stored, charts made offline, parameters shown)."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import unknown_name
from .findings_page import write_findings_page
from .kernel import kernel_arguments
from .offline import offline_outputs
from .paths import ReportError, _log_default, default_book_dir, default_notebooks_dir
from .profiles import executed_parameters, hide_default_parameters, notebook_parameters, show_parameters


def execute_notebook(
    source: str | os.PathLike,
    target: str | os.PathLike,
    parameters: Mapping[str, Any],
    *,
    kernel_name: str | None = None,
    timeout: float | None = None,
    cwd: str | os.PathLike | None = None,
    offline: bool = True,
    shown_parameters: Mapping[str, Any] | None = None,
    log: Callable[[str], None] | None = _log_default,
) -> Path:
    """Execute one notebook with papermill (widget state stored) and make its charts offline.

    ``shown_parameters`` (every declared parameter with its executed value) is shown as a
    Markdown table under the chapter's title.
    Raises :class:`ReportError` when a cell fails. Tracebacks that a cell only *printed* (e.g.
    Altair reports a chart it cannot serialise that way, and the cell still succeeds) are
    logged as warnings, naming the cell.
    """
    import nbformat
    import papermill

    source, target = Path(source), Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(source),
            str(target),
            parameters=dict(parameters),
            kernel_name=kernel_name,
            cwd=str(cwd or source.parent),
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            execution_timeout=timeout,
            store_widget_state=True,
            # quiet kernel start-up; pandas shows whole tables in the book (see .kernel)
            extra_arguments=kernel_arguments(),
        )
    except Exception as exc:  # papermill's error names the cell; add the notebook and where it went
        raise ReportError(
            f"notebook {source.name} failed with parameters {dict(parameters)!r}; "
            f"the partially executed notebook is {target}:\n{exc}"
        ) from exc
    nb = nbformat.read(str(target), as_version=4)
    for warning in printed_tracebacks(nb):
        (log or (lambda msg: None))(f"WARNING {source.name}: {warning}")
    if offline:
        offline_outputs(nb)
        hide_default_parameters(nb)
    if shown_parameters is not None:
        show_parameters(nb, shown_parameters)
    if offline or shown_parameters is not None:
        nbformat.write(nb, str(target))
    return target


def printed_tracebacks(nb) -> list[str]:
    """Cells of an executed notebook whose outputs show a Python traceback (one line each)."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            if not text and out.get("output_type") in ("display_data", "execute_result"):
                text = out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if "Traceback (most recent call last)" in text or (
                out.get("output_type") == "error"
            ):
                last = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines() if ln.strip()]
                found.append(f"cell {i} printed a traceback: {last[-1] if last else out.get('ename', '?')}")
                break
    return found


def execute_notebooks(
    profile: str,
    dataset: str,
    *,
    notebooks_dir: str | os.PathLike | None = None,
    generated_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    kernel_name: str | None = None,
    timeout: float | None = None,
    log: Callable[[str], None] | None = _log_default,
) -> list[Path]:
    """Execute every notebook of ``notebooks_dir`` into ``generated_dir``; return their paths.

    ``only``: notebook stems (or file names) to run; executed notebooks that no longer have a
    source are removed from ``generated_dir`` so the book never shows a stale chapter.
    """
    import papermill

    log = log or (lambda msg: None)
    nb_dir = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    out_dir = Path(generated_dir) if generated_dir else default_book_dir() / "generated"
    sources = sorted(p for p in nb_dir.glob("*.ipynb") if not p.name.startswith((".", "_")))
    if only is not None:
        wanted = {Path(o).stem for o in only}
        unknown = wanted - {p.stem for p in sources}
        if unknown:
            raise unknown_name("notebook", sorted(unknown)[0], [p.stem for p in sources])
        sources = [p for p in sources if p.stem in wanted]
    if not sources:
        raise ReportError(f"no notebook found in {nb_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.ipynb"):
        if not (nb_dir / stale.name).exists():
            stale.unlink()
    findings_dir = out_dir / "findings"
    findings_dir.mkdir(exist_ok=True)
    for stale in findings_dir.glob("*.json"):
        if not (nb_dir / f"{stale.stem}.ipynb").exists():
            stale.unlink()
    done = []
    previous = os.environ.get("RECMETRICS_FINDINGS_DIR")
    os.environ["RECMETRICS_FINDINGS_DIR"] = str(findings_dir.resolve())  # the kernels inherit it
    try:
        for src in sources:
            declared = papermill.inspect_notebook(str(src)).keys()
            params = notebook_parameters(profile, dataset, src, declared)
            (findings_dir / f"{src.stem}.json").unlink(missing_ok=True)
            t0 = time.perf_counter()
            log(f"executing {src.name} with {params}")
            done.append(execute_notebook(src, out_dir / src.name, params, kernel_name=kernel_name,
                                         timeout=timeout, shown_parameters=executed_parameters(src, params, profile=profile),
                                         log=log))
            log(f"executed {src.name} in {time.perf_counter() - t0:.1f}s")
    finally:
        if previous is None:
            os.environ.pop("RECMETRICS_FINDINGS_DIR", None)
        else:
            os.environ["RECMETRICS_FINDINGS_DIR"] = previous
    write_findings_page(out_dir)
    return done
