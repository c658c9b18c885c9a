"""Build the recmetrics report: run every notebook with papermill, then build the Jupyter Book.

``recmetrics report --profile quick|paper --dataset NAME [--out DIR]`` calls :func:`build`:

1. **Execute** every ``notebooks/*.ipynb`` with papermill into ``book/generated/``. Each notebook
   receives the parameters of the chosen profile (:data:`PROFILES`, overridden per notebook by
   :data:`NOTEBOOK_PARAMETERS`) that its ``parameters`` cell declares, plus ``dataset``.
   Widget state is stored in the executed notebooks (nbclient ``store_widget_state``).
2. **Make the outputs offline**: every Altair/Vega-Lite output is rewritten to call the
   ``vegaEmbed`` function of the vendored bundle instead of Altair's loader, which fetches
   vega, vega-lite and vega-embed from a CDN (:func:`offline_outputs`).
3. **Vendor the JavaScript** the pages need into ``book/generated/_vendor/vendor/`` (copied to
   ``_static/vendor/`` by Sphinx, see ``book/_config.yml``; :func:`vendor_js`):

   ====================  ===============================================  =====================
   file(s)               source                                           used by
   ====================  ===============================================  =====================
   ``vega/``             ``vl_convert.javascript_bundle()`` (Vega,         ``html_js_files``
                         Vega-Lite, Vega-Embed, one classic script)
   ``requirejs/``        npm ``requirejs`` (``require.js``)               ``nb_ipywidgets_js``
   ``html-manager/``     npm ``@jupyter-widgets/html-manager`` ``dist/``  ``nb_ipywidgets_js``
                         (+ ``embed-setup.js``, written here)
   ``mathjax/``          npm ``mathjax`` v3 ``es5/`` (CHTML + fonts)      ``mathjax_path``
   ====================  ===============================================  =====================

   npm tarballs are fetched once with ``npm pack`` (exact versions, checked against their
   sha512 integrity) into a cache directory (``$RECMETRICS_JS_CACHE``, else
   ``$XDG_CACHE_HOME/recmetrics/js``, else ``~/.cache/recmetrics/js``); later builds are offline.
4. **Build the book** (``jupyter-book``'s Sphinx build, in a subprocess, execution off) and
   check that no page loads a script or stylesheet from another host (:func:`external_assets`).

Importing this module is cheap: papermill, nbformat, altair and jupyter-book load inside the
functions that need them.
"""
from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .errors import RecmetricsError, unknown_name

__all__ = [
    "PROFILES",
    "NOTEBOOK_PARAMETERS",
    "NPM_PACKAGES",
    "ReportError",
    "build",
    "execute_notebooks",
    "executed_parameters",
    "parameters_markdown",
    "show_parameters",
    "write_findings_page",
    "execute_notebook",
    "offline_outputs",
    "hide_default_parameters",
    "printed_tracebacks",
    "vendor_js",
    "build_book",
    "external_assets",
    "notebook_parameters",
]

# --------------------------------------------------------------------------------------------
# profiles

#: Parameters shared by every notebook, per profile. A notebook only receives the names that its
#: ``parameters`` cell declares, so adding a key here never breaks another notebook.
PROFILES: dict[str, dict[str, Any]] = {
    # small and fast: CI smoke runs and drafts (the whole report in minutes)
    "quick": {
        "seed": 0,
        "test_size": 0.2,
        "cutoffs": [5, 10, 20],
    },
    # the settings of the papers the notebooks reproduce
    "paper": {
        "seed": 0,
        "test_size": 0.2,
        "cutoffs": [5, 10, 20, 50, 100],
    },
}

#: Per-notebook overrides: ``{profile: {notebook stem: {parameter: value}}}`` (applied after
#: :data:`PROFILES`). Notebooks added to ``notebooks/`` put their profile-specific settings here.
NOTEBOOK_PARAMETERS: dict[str, dict[str, dict[str, Any]]] = {
    "quick": {
        "02_recommender_zoo": {"folds": 2, "systems": ["Random", "Pop", "UserKNN", "RM2", "HT", "EASE", "PureSVD", "WRMF"]},
        "03_unified_accuracy_diversity": {},   # the notebook's defaults are the quick settings
        "04_choosing_a_metric": {"svd": "SVD(factors=10,iterations=5)"},
        "08_popularity_bias": {"users": 150, "removed": [0.0, 0.4, 0.8], "sizes": [50, 100, 200],
                               "alphas": [0.0, 1.0, 2.0]},
    },
    "paper": {
        "02_recommender_zoo": {"folds": 5, "systems": None},
        "03_unified_accuracy_diversity": {
            "n_users": None, "swap_levels": 50, "redundancy_levels": 50, "aspect_levels": 10, "n_systems": 50,
            "n_removals": 50, "removal_fractions": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
            "betas": [0.25, 0.5, 0.75, 1.0], "axiom_examples": 100},
        "08_popularity_bias": {"users": None, "removed": [0.0, 0.2, 0.4, 0.6, 0.8], "sizes": [100, 200, 400, 800],
                               "alphas": [0.0, 0.5, 1.0, 1.5, 2.0],
                               "sweep_systems": ["Random", "Pop", "UserKNN", "PureSVD", "pLSA"]},
        # 003 §6 / 000 §4-7: 5 folds, the 21 systems, 100% .. 1% test sizes, 50 samples, 100,000 permutations
        "05_cutoffs": {"folds": 5, "systems": None, "cutoff_grid": [5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
                       "sizes": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01], "n_samples": 50,
                       "n_permutations": 100_000},
        "06_comparing_metrics": {"folds": 5, "systems": None,
                                 "sizes": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01],
                                 "n_samples": 50, "n_permutations": 100_000},
        "07_arithmetic_vs_geometric": {"folds": 5, "systems": None,
                                       "sizes": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.01],
                                       "n_samples": 50, "n_permutations": 100_000},
    },
}

# --------------------------------------------------------------------------------------------
# vendored JavaScript

#: npm packages vendored into the book: key -> (package, exact version, sha512 integrity).
NPM_PACKAGES: dict[str, tuple[str, str, str]] = {
    "requirejs": (
        "requirejs",
        "2.3.8",
        "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",
    ),
    "html-manager": (
        "@jupyter-widgets/html-manager",
        "1.0.15",
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
    ),
    "mathjax": (
        "mathjax",
        "3.2.2",
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
    ),
}

#: Files the pages reference, relative to ``_static/`` (book/_config.yml points at these).
VEGA_BUNDLE = "vendor/vega/vega-bundle.js"
REQUIRE_JS = "vendor/requirejs/require.js"
WIDGETS_JS = "vendor/html-manager/embed-amd.js"
WIDGETS_SETUP_JS = "vendor/html-manager/embed-setup.js"
MATHJAX_JS = "vendor/mathjax/tex-mml-chtml.js"

#: MathJax's es5/ tree minus what the pages never load (other combined bundles, SVG output,
#: the node entry point): about 10 MB instead of 24 MB.
_MATHJAX_SKIP = re.compile(
    r"^(?:(?!tex-mml-chtml\.js$)[a-z-]+-(?:chtml|svg)(?:-full)?(?:-speech)?\.js"
    r"|node-main\.js|output/svg(?:\.js|/.*)|adaptors/.*|latest\.js)$"
)

_STAMP = ".recmetrics-vendor.json"

#: Loaded between require.js and embed-amd.js (``embed-setup.js``), for two fixes:
#:
#: * the widget bundles locate their fonts next to their RequireJS module URL, which by default
#:   is the *page's* folder plus the module id (``generated/@jupyter-widgets/html-manager/dist/``):
#:   map the ids to this script's folder so they resolve to the vendored copies at any page depth;
#: * ipywidgets' ``typeset()`` calls the MathJax 2 API (``MathJax.Hub.Queue``) while the book
#:   loads MathJax 3: give MathJax 3 a ``Hub.Queue`` that typesets through ``typesetPromise``.
_EMBED_SETUP = r"""/* recmetrics: set-up for the vendored @jupyter-widgets/html-manager (offline book) */
(function () {
  var script = document.currentScript;
  if (script && window.require && window.require.config) {
    var base = script.src.replace(/[?#].*$/, "").replace(/\/[^\/]*$/, "");
    var paths = { "@jupyter-widgets/html-manager/dist": base };
    ["base", "base7", "controls", "controls7", "html-manager", "output"].forEach(function (name) {
      paths["@jupyter-widgets/" + name] = base + "/" + name;
    });
    window.require.config({ paths: paths });
  }
  function mathjaxHub() {
    var MJ = window.MathJax;
    if (!MJ || MJ.Hub || !MJ.startup) { return; }  /* not loaded yet, MathJax 2, or done */
    MJ.Hub = { Queue: function () {
      var elements = [];
      Array.prototype.forEach.call(arguments, function (job) {
        if (Array.isArray(job) && job[0] === "Typeset" && job[2]) { elements.push(job[2]); }
      });
      Promise.resolve(MJ.startup.promise).then(function () {
        if (typeof MJ.typesetPromise === "function") {
          return MJ.typesetPromise(elements.length ? elements : undefined);
        }
      }).catch(function (err) { console.warn("MathJax typesetting of a widget failed", err); });
    } };
  }
  mathjaxHub();
  document.addEventListener("DOMContentLoaded", mathjaxHub);
  window.addEventListener("load", mathjaxHub);  /* before embed-amd's own "load" handler */
})();
"""


class ReportError(RecmetricsError, RuntimeError):
    """A step of the report build failed (the message names the notebook or the tool)."""


# --------------------------------------------------------------------------------------------
# paths


def repo_root() -> Path:
    """The checkout holding ``notebooks/`` and ``book/`` (the parent of the package folder)."""
    return Path(__file__).resolve().parent.parent


def default_book_dir() -> Path:
    return repo_root() / "book"


def default_notebooks_dir() -> Path:
    return repo_root() / "notebooks"


def js_cache_dir() -> Path:
    """Where npm tarballs are cached (``$RECMETRICS_JS_CACHE`` or the XDG cache)."""
    from .cache import cache_dir

    return cache_dir("js", "RECMETRICS_JS_CACHE")


def _log_default(msg: str) -> None:
    print(f"[recmetrics report] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# parameters


def notebook_parameters(
    profile: str, dataset: str, notebook: str | os.PathLike, declared: Iterable[str] | None = None
) -> dict[str, Any]:
    """The parameters given to ``notebook`` (a path or a stem) under ``profile``.

    Only names in ``declared`` (the notebook's ``parameters`` cell; read from the file when
    ``None``) are returned, so profile keys meant for other notebooks are not injected.
    """
    if profile not in PROFILES:
        raise unknown_name("report profile", profile, PROFILES)
    if not isinstance(dataset, str) or not dataset:
        raise ValueError(f"dataset must be a non-empty dataset name, got {dataset!r}")
    stem = Path(notebook).stem
    params: dict[str, Any] = copy.deepcopy(PROFILES[profile])
    params.update(copy.deepcopy(NOTEBOOK_PARAMETERS.get(profile, {}).get(stem, {})))
    params["dataset"] = dataset
    params["profile"] = profile
    if declared is None:
        path = Path(notebook)
        if not path.suffix:
            return params
        import papermill

        declared = papermill.inspect_notebook(str(path)).keys()
    declared = set(declared)
    return {k: v for k, v in params.items() if k in declared}


# --------------------------------------------------------------------------------------------
# execution


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
            # the kernel's own start-up log (e.g. ipykernel's "Kernel is running over TCP without
            # encryption" warning, and its "KeyboardInterrupt caught" at shut-down) is noise in the report output;
            # errors of the notebook's code still reach the cells and fail the build
            extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
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


def parameters_markdown(values: Mapping[str, Any]) -> str:
    """A Markdown table of the parameter values a notebook ran with (name, value)."""
    rows = "\n".join(f"| `{name}` | `{value!r}` |" for name, value in values.items())
    return "**This chapter was computed with these parameters:**\n\n| parameter | value |\n|---|---|\n" + rows


def show_parameters(nb, values: Mapping[str, Any]) -> None:
    """Insert a Markdown cell listing ``values`` after the notebook's title cell (or at the top).

    Replaces a previous such cell, so re-processing a notebook does not stack tables."""
    import nbformat

    cells = [c for c in nb.cells if "recmetrics-parameters" not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(parameters_markdown(values))
    cell.metadata["tags"] = ["recmetrics-parameters"]
    at = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("#") else 0
    cells.insert(at, cell)
    nb.cells = cells


def executed_parameters(
    notebook: str | os.PathLike, given: Mapping[str, Any], profile: str | None = None
) -> dict[str, Any]:
    """Every parameter the notebook declares with the value it runs with: ``given`` where given,
    else the default written in its ``parameters`` cell (evaluated when it is a literal); led by
    the report ``profile`` when one is given (a notebook need not declare it to show it)."""
    import ast

    import papermill

    values: dict[str, Any] = {} if profile is None else {"profile": profile}
    for name, spec in papermill.inspect_notebook(str(notebook)).items():
        if name in given:
            values[name] = given[name]
            continue
        try:
            values[name] = ast.literal_eval(spec["default"])
        except (ValueError, SyntaxError):
            values[name] = spec["default"]
    return values


def write_findings_page(generated_dir: str | os.PathLike) -> Path | None:
    """Gather every chapter's saved findings (``generated/findings/*.json``, written by the
    notebooks through :func:`recmetrics.meta.findings.save`) into the book page
    ``generated/99_findings.md``; removes a stale page when there are none."""
    from .meta import findings

    generated = Path(generated_dir)
    page = generated / "99_findings.md"
    table = findings.collect(generated / "findings")
    if table.empty:
        page.unlink(missing_ok=True)
        return None
    counts = table.verdict.value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in findings.VERDICTS)
    parts = ["# Findings: the papers' claims, tested", "",
             f"Every claim of the papers that a chapter tests, with the paper's evidence, the evidence "
             f"computed by that chapter for the dataset and profile it ran with, and the verdict its code "
             f"gave ({len(table)} claims: {summary}). Nothing on this page is typed by hand: it is "
             f"gathered from the JSON files the chapters wrote.", ""]
    for chapter, group in table.groupby("chapter", sort=True):
        where = ", ".join(f"{c} `{group[c].iloc[0]}`" for c in ("dataset", "profile") if c in group)
        parts += [f"## {chapter}" + (f" ({where})" if where else ""), "", findings.to_markdown(group), ""]
    page.write_text("\n".join(parts), encoding="utf-8")
    return page


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


def hide_default_parameters(nb) -> bool:
    """Tag the notebook's own ``parameters`` cell ``remove-cell`` when papermill injected the
    values actually used (so the book shows one parameter cell, the right one)."""
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    if not any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in cells):
        return False
    changed = False
    for cell in cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
            changed = True
    return changed


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


# --------------------------------------------------------------------------------------------
# Altair/Vega-Lite outputs -> vendored vegaEmbed

_VEGA_MIME = re.compile(r"^application/vnd\.vega(lite)?\.v(\d+)\+json$")
_ALTAIR_CALL = re.compile(r"\}\)\(\s*(?=\{)")

_EMBED_TEMPLATE = """<div id="{div_id}" class="recmetrics-vega"></div>
<script type="text/javascript">
(function (spec, embedOpt) {{
  var el = document.getElementById("{div_id}");
  function fail(err) {{
    el.innerHTML = '<div class="error" style="color:red;">' + String(err && err.message || err) + '</div>';
  }}
  function show() {{
    if (typeof window.vegaEmbed !== "function") {{
      fail("vega-embed is not loaded: expected the vendored _static/{bundle} (see recmetrics.report)");
      return;
    }}
    window.vegaEmbed(el, spec, embedOpt).then(function (result) {{ el.vegaView = result.view; }}).catch(fail);
  }}
  if (typeof window.vegaEmbed === "function" || document.readyState !== "loading") {{ show(); }}
  else {{ document.addEventListener("DOMContentLoaded", show); }}
}})({spec}, {embed_opt});
</script>"""

#: vega-embed options of the book's charts: no "Open in Vega Editor" action (it needs the web)
EMBED_OPTIONS: dict[str, Any] = {"actions": {"export": True, "source": True, "compiled": True, "editor": False}}


def _script_json(obj: Any) -> str:
    """JSON safe to inline inside a ``<script>`` element."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _altair_html_spec(html: str) -> tuple[dict, dict] | None:
    """(spec, embed options) from the HTML of Altair's ``html``/``default`` renderer, or None."""
    if "vegaEmbed" not in html or "altair-viz" not in html:
        return None
    decoder = json.JSONDecoder()
    for m in reversed(list(_ALTAIR_CALL.finditer(html))):
        try:
            spec, end = decoder.raw_decode(html, m.end())
            rest = html[end:].lstrip()
            opt: dict = {}
            if rest.startswith(","):
                opt, _ = decoder.raw_decode(rest[1:].lstrip())
        except ValueError:
            continue
        if isinstance(spec, dict) and isinstance(opt, dict):
            return spec, opt
    return None


def embed_html(
    spec: Mapping[str, Any],
    mode: str = "vega-lite",
    embed_options: Mapping[str, Any] | None = None,
    *,
    key: str = "",
) -> str:
    """HTML that renders ``spec`` with the vendored ``window.vegaEmbed`` (no network).

    The element id is derived from the spec and ``key`` (e.g. the cell and output index), so the
    executed notebooks are reproducible and two identical charts on a page stay distinct.
    """
    opt = dict(EMBED_OPTIONS)
    opt.update(embed_options or {})
    opt["mode"] = mode
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return _EMBED_TEMPLATE.format(
        div_id=f"rm-vega-{digest}" + (f"-{re.sub(r'[^A-Za-z0-9_-]', '-', key)}" if key else ""),
        bundle=VEGA_BUNDLE,
        spec=_script_json(spec),
        embed_opt=_script_json(opt),
    )


def offline_outputs(nb) -> int:
    """Rewrite the chart outputs of an executed notebook (in place) to use the vendored bundle.

    Handles Vega/Vega-Lite mime bundles (Altair's ``mimetype``/``jupyterlab`` renderers) and the
    ``text/html`` of Altair's default ``html`` renderer (whose loader pulls vega from a CDN).
    The mime JSON is kept so the executed notebook still renders in JupyterLab. Returns the
    number of outputs rewritten.
    """
    count = 0
    for ci, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for oi, out in enumerate(cell.get("outputs", [])):
            if out.get("output_type") not in ("display_data", "execute_result"):
                continue
            data = out.get("data", {})
            found = None
            for mime, value in data.items():
                m = _VEGA_MIME.match(mime)
                if m:
                    spec = json.loads(value) if isinstance(value, str) else value
                    found = (spec, "vega-lite" if m.group(1) else "vega", {})
                    break
            if found is None and "text/html" in data:
                html = data["text/html"]
                html = "".join(html) if isinstance(html, list) else html
                parsed = _altair_html_spec(html)
                if parsed:
                    spec, opt = parsed
                    mode = opt.pop("mode", "vega-lite")
                    found = (spec, mode, opt)
            if found is None:
                continue
            spec, mode, opt = found
            data["text/html"] = embed_html(spec, mode, opt, key=f"{ci}-{oi}")
            count += 1
    return count


# --------------------------------------------------------------------------------------------
# vendoring


def _sri(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _npm_tarball(package: str, version: str, integrity: str, cache: Path, log) -> Path:
    """The npm tarball of ``package@version`` in ``cache`` (``npm pack`` on first use)."""
    cache.mkdir(parents=True, exist_ok=True)
    name = package.lstrip("@").replace("/", "-") + f"-{version}.tgz"
    tgz = cache / name
    if tgz.exists() and _sri(tgz) == integrity:
        return tgz
    npm = shutil.which("npm")
    if npm is None:
        raise ReportError(
            f"need {package}@{version} for the offline book but npm is not installed and {tgz} is not "
            "cached; install Node.js/npm (or copy the tarball into the cache, $RECMETRICS_JS_CACHE)"
        )
    log(f"npm pack {package}@{version} -> {cache}")
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        proc = subprocess.run(
            [npm, "pack", f"{package}@{version}", "--silent", "--pack-destination", tmp],
            cwd=tmp, capture_output=True, text=True,
        )
        got = Path(tmp) / name
        if proc.returncode != 0 or not got.exists():
            raise ReportError(
                f"npm pack {package}@{version} failed (exit {proc.returncode}):\n{proc.stderr.strip()}"
            )
        if _sri(got) != integrity:
            raise ReportError(f"{package}@{version}: tarball integrity {_sri(got)} != pinned {integrity}")
        os.replace(got, tgz)
    return tgz


def _extract(tgz: Path, members: Callable[[str], str | None], dest: Path) -> int:
    """Extract the files of an npm tarball whose ``package/``-relative path ``members`` maps to
    a destination (relative to ``dest``); return the number of files written."""
    n = 0
    with tarfile.open(tgz, "r:gz") as tar:
        for info in tar.getmembers():
            if not info.isfile() or not info.name.startswith("package/"):
                continue
            rel = members(info.name[len("package/"):])
            if rel is None:
                continue
            target = dest / rel
            if ".." in Path(rel).parts:
                raise ReportError(f"unsafe path {info.name!r} in {tgz}")
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            n += 1
    return n


def _vega_bundle_text() -> tuple[str, dict[str, str]]:
    import altair as alt
    import vl_convert as vlc

    want = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    available = list(vlc.get_vegalite_versions())
    vl_version = want if want in available else None
    versions = {
        "vega": vlc.get_vega_version(),
        "vega-lite": vl_version or available[-1],
        "vega-embed": vlc.get_vega_embed_version(),
        "vl-convert": getattr(vlc, "__version__", "") or _dist_version("vl-convert-python"),
        "altair": alt.__version__,
    }
    bundle = vlc.javascript_bundle(vl_version=vl_version)
    header = (
        "/* Vega {vega}, Vega-Lite {vega-lite}, Vega-Embed {vega-embed}: bundled by vl-convert-python "
        "{vl-convert} (vl_convert.javascript_bundle) for recmetrics' offline book. Wrapped in a function "
        "so that its top-level names stay private; it defines window.vegaEmbed. */\n"
    ).format(**versions)
    return header + "(function () {\n" + bundle + "\n})();\n", versions


def _dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # pragma: no cover
        return "unknown"


def vendor_js(
    dest: str | os.PathLike,
    *,
    cache: str | os.PathLike | None = None,
    force: bool = False,
    log: Callable[[str], None] | None = _log_default,
) -> dict[str, Any]:
    """Write the JavaScript the offline book needs under ``dest/vendor/``; return a manifest.

    ``dest`` is a folder listed in ``html_static_path`` (``book/generated/_vendor``), so the
    files land in ``_static/vendor/`` of the site. Nothing is rewritten when the versions are
    unchanged (a stamp file records them), unless ``force``.
    """
    log = log or (lambda msg: None)
    dest = Path(dest)
    cache = Path(cache) if cache else js_cache_dir()
    vendor = dest / "vendor"
    stamp = dest / _STAMP
    import altair as alt
    import vl_convert as vlc

    wanted = {
        "npm": {k: f"{p}@{v}" for k, (p, v, _) in NPM_PACKAGES.items()},
        "vl-convert": _dist_version("vl-convert-python"),
        "altair": alt.__version__,
        "vega-embed": vlc.get_vega_embed_version(),
        "layout": 5,
    }
    expected = [VEGA_BUNDLE, REQUIRE_JS, WIDGETS_SETUP_JS, WIDGETS_JS, MATHJAX_JS]
    if not force and stamp.exists():
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = {}
        if old.get("wanted") == wanted and all((dest / f).is_file() for f in expected):
            return old
    t0 = time.perf_counter()
    if vendor.exists():
        shutil.rmtree(vendor)
    vendor.mkdir(parents=True)

    text, versions = _vega_bundle_text()
    (vendor / "vega").mkdir()
    (dest / VEGA_BUNDLE).write_text(text, encoding="utf-8")

    tarballs = {k: _npm_tarball(p, v, sri, cache, log) for k, (p, v, sri) in NPM_PACKAGES.items()}
    _extract(tarballs["requirejs"], lambda r: r if r in ("require.js", "LICENSE", "package.json") else None,
             vendor / "requirejs")
    _extract(
        tarballs["html-manager"],
        lambda r: (r[len("dist/"):] if r.startswith("dist/") and not r.endswith(".map")
                   and Path(r).name not in ("embed.js", "embed.js.LICENSE.txt", "libembed-amd.js")
                   and Path(r).suffix not in (".eot", ".svg")
                   else ("package.json" if r == "package.json" else None)),
        vendor / "html-manager",
    )
    _extract(
        tarballs["mathjax"],
        lambda r: (r[len("es5/"):] if r.startswith("es5/") and not _MATHJAX_SKIP.match(r[len("es5/"):])
                   else (r if r in ("LICENSE", "package.json") else None)),
        vendor / "mathjax",
    )
    (dest / WIDGETS_SETUP_JS).write_text(_EMBED_SETUP, encoding="utf-8")
    missing = [f for f in expected if not (dest / f).is_file()]
    if missing:
        raise ReportError(f"vendoring did not produce {missing} under {dest}")
    manifest = {
        "wanted": wanted,
        "versions": dict(versions, **{p: v for p, v, _ in NPM_PACKAGES.values()}),
        "files": expected,
    }
    stamp.write_text(json.dumps(manifest, indent=1))
    log(f"vendored JavaScript into {vendor} in {time.perf_counter() - t0:.1f}s")
    return manifest


# --------------------------------------------------------------------------------------------
# book build

_SPHINX_RUNNER = r"""
import sys
from pathlib import Path
from jupyter_book.sphinx import build_sphinx
src, out, doctrees, quiet = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
result = build_sphinx(
    src, out, doctreedir=doctrees, noconfig=True, path_config=str(src / "_config.yml"),
    confoverrides={"external_toc_path": (src / "_toc.yml").as_posix(), "latex_individualpages": False},
    builder="html", quiet=quiet, keep_going=True,
)
if isinstance(result, BaseException):
    raise result
sys.exit(int(result or 0))
"""


def build_book(
    book_dir: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    *,
    quiet: bool = True,
    log: Callable[[str], None] | None = _log_default,
) -> Path:
    """Build the HTML site of ``book_dir`` into ``out`` (default ``book_dir/_build/html``).

    Runs jupyter-book's Sphinx build in a subprocess (a clean docutils state each time) with the
    notebooks' execution off; returns the path of ``index.html``.
    """
    log = log or (lambda msg: None)
    book_dir = Path(book_dir) if book_dir else default_book_dir()
    out = Path(out) if out else book_dir / "_build" / "html"
    doctrees = book_dir / "_build" / ".doctrees"  # kept outside the site, whatever `out` is
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _SPHINX_RUNNER, str(book_dir.resolve()), str(out.resolve()),
         str(doctrees.resolve()), "1" if quiet else "0"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise ReportError(
            f"the book build failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    warnings = [ln for ln in proc.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    for ln in warnings[:20]:
        log(ln)
    index = out / "index.html"
    if not index.exists():
        raise ReportError(f"the book build produced no {index}:\n{proc.stderr[-4000:]}")
    log(f"built the book into {out} in {time.perf_counter() - t0:.1f}s")
    return index


_ASSET_TAG = re.compile(r"<(script|link|img|iframe|source|embed|video|audio|object)\b[^>]*>", re.I)
_ATTR = re.compile(r"\b(src|href|data|rel)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.I)
_CSS_URL = re.compile(r"(?:url\(\s*['\"]?|@import\s+['\"])([^'\")\s]+)", re.I)
_REMOTE = re.compile(r"^(?:https?:|wss?:)?//", re.I)


def external_assets(html_dir: str | os.PathLike) -> dict[str, list[str]]:
    """Scripts, stylesheets, images, frames and CSS imports/fonts the site loads from elsewhere.

    Scans every ``*.html`` page (``src``/``href``/``data`` of asset tags; ``<link>`` only when it
    is a stylesheet, preload or icon, and plain ``<a href>`` links are not assets) and every
    ``*.css`` file (``url(...)``/``@import``, comments ignored). Returns ``{file: [url, ...]}``
    for the files that reference another host; empty when the site is self-contained.
    """
    found: dict[str, list[str]] = {}
    root = Path(html_dir)
    for page in sorted(root.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        bad = []
        for tag in _ASSET_TAG.finditer(text):
            attrs = {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
                     for m in _ATTR.finditer(tag.group(0))}
            if tag.group(1).lower() == "link" and not re.search(
                r"stylesheet|preload|icon|modulepreload|manifest", attrs.get("rel", ""), re.I
            ):
                continue
            bad += [u for k, u in attrs.items() if k in ("src", "href", "data") and _REMOTE.match(u)]
        if bad:
            found[str(page.relative_to(root))] = bad
    for sheet in sorted(root.rglob("*.css")):
        text = re.sub(r"/\*.*?\*/", "", sheet.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        bad = [m.group(1) for m in _CSS_URL.finditer(text) if _REMOTE.match(m.group(1))]
        if bad:
            found[str(sheet.relative_to(root))] = bad
    return found


def build(
    profile: str = "quick",
    dataset: str = "movielens-small",
    out: str | os.PathLike | None = None,
    *,
    book_dir: str | os.PathLike | None = None,
    notebooks_dir: str | os.PathLike | None = None,
    only: Iterable[str] | None = None,
    execute: bool = True,
    kernel_name: str | None = None,
    timeout: float | None = None,
    js_cache: str | os.PathLike | None = None,
    check_offline: bool = True,
    quiet: bool = True,
    log: Callable[[str], None] | None = _log_default,
) -> Path:
    """Run the notebooks with ``profile``'s parameters on ``dataset`` and build the book.

    ``out``: directory of the HTML site (default ``book/_build/html``). ``book_dir`` and
    ``notebooks_dir`` default to the checkout's ``book/`` and ``notebooks/``; the executed
    notebooks go to ``book_dir/generated/`` and the vendored JavaScript to
    ``book_dir/generated/_vendor/``. ``execute=False`` rebuilds the book from the notebooks
    already in ``generated/``. With ``check_offline`` (default) the build fails when a page or
    stylesheet still loads something from another host (:func:`external_assets`). Returns the
    path of the site's ``index.html``.
    """
    if profile not in PROFILES:
        raise unknown_name("report profile", profile, PROFILES)
    log = log or (lambda msg: None)
    book = Path(book_dir) if book_dir else default_book_dir()
    if not (book / "_config.yml").is_file() or not (book / "_toc.yml").is_file():
        raise ReportError(f"{book} is not a Jupyter Book folder (need _config.yml and _toc.yml)")
    generated = book / "generated"
    if execute:
        execute_notebooks(profile, dataset, notebooks_dir=notebooks_dir, generated_dir=generated,
                          only=only, kernel_name=kernel_name, timeout=timeout, log=log)
    elif not any(generated.glob("*.ipynb")):
        raise ReportError(f"no executed notebook in {generated}; run with execute=True first")
    else:
        write_findings_page(generated)
    vendor_js(generated / "_vendor", cache=js_cache, log=log)
    index = build_book(book, out, quiet=quiet, log=log)
    leaks = external_assets(index.parent) if check_offline else {}
    if leaks:
        raise ReportError(
            "the built pages load assets from other hosts (they would not render offline): "
            + "; ".join(f"{p}: {', '.join(u)}" for p, u in leaks.items())
        )
    return index
