"""The recmetrics report: run every notebook with papermill, then build the Jupyter Book.

``recmetrics report --profile quick|paper --dataset NAME [--out DIR]`` calls :func:`build`:

1. **Execute** every ``notebooks/*.ipynb`` (shipped inside the package: :mod:`.paths`) with papermill
   into ``generated/`` of the book's work folder (in the cache; the book's sources are copied there
   first, :mod:`.workspace`), so a build writes only its site (``--out``) and the cache. Each notebook
   receives the parameters of the chosen profile (:data:`PROFILES`, overridden per notebook by
   :data:`NOTEBOOK_PARAMETERS`) that its ``parameters`` cell declares, plus ``dataset``.
   Widget state is stored in the executed notebooks (nbclient ``store_widget_state``).
2. **Make the outputs offline**: every Altair/Vega-Lite output is rewritten to call the
   ``vegaEmbed`` function of the vendored bundle instead of Altair's loader, which fetches
   vega, vega-lite and vega-embed from a CDN (:func:`offline_outputs`).
3. **Vendor the JavaScript** the pages need into ``generated/_vendor/vendor/`` (copied to
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
   The tree above is made there once per set of versions and copied into each book.
4. **Build the book** (``jupyter-book``'s Sphinx build, in a subprocess, execution off) and
   check that no page loads a script or stylesheet from another host (:func:`external_assets`).

Importing this module is cheap: papermill, nbformat, altair and jupyter-book load inside the
functions that need them.

Only what changed is executed again: every chapter's content key (:mod:`.cache`: its notebook,
parameters, data fingerprint, package sources, dependency versions, and the keys of the chapters it
reads) is stored in the executed notebook and in the manifest of its other outputs (meta tables,
findings, saved results: staged, then committed before the notebook, :mod:`.outputs`); a failed
or killed chapter never replaces the last good one, a chapter reads only outputs whose key is the
key this build planned for the chapters it depends on, and the book is built only from chapters
that all completed under one set of settings (:mod:`.state`). The site is built into a staging
folder of the build's own that replaces the old one whole (:mod:`.site`); one build at a time holds
a book and an output folder (:mod:`.lock`), and ``--out`` is refused at planning when it is among
the sources, holds them or the working folder, or holds files that are not a site of ours
(:func:`.plan.check_out`). Every chapter runs under a time limit and a kernel that stops answering
is stopped (:mod:`.kernel`); kernels, their workers and the Sphinx child end with the build
(:mod:`.processes`). Every build writes a reproducibility appendix (:mod:`.appendix`). The own-runs
book (:mod:`.own_runs`, :mod:`.own_book`) goes through the same machinery.
Every page links to the source repository the build knows (:mod:`.repository`), or to none.

Modules: :mod:`.profiles` (profiles, per-notebook parameters, chapter dependencies), :mod:`.plan`
(argument checks, execution order, content keys), :mod:`.cache` (content hashes), :mod:`.execute`
(papermill), :mod:`.outputs` (keyed chapter outputs), :mod:`.state` (chapter records, stale
chapters), :mod:`.appendix`, :mod:`.offline` (vendored ``vegaEmbed`` outputs, remote-asset scan),
:mod:`.vendor` (JavaScript), :mod:`.kernel` (the chapters' kernel start-up: quiet, pandas showing
whole tables), :mod:`.findings_page`, :mod:`.site` (the Sphinx build, staged), :mod:`.lock`,
:mod:`.processes` (children that end with the build), :mod:`.book` (:func:`build`), :mod:`.paths` (where
sources are read and builds write), :mod:`.workspace` (the work folder's sources), :mod:`.repository` (the
pages' repository link).
"""
from __future__ import annotations

from .appendix import write_appendix
from .book import build
from .execute import execute_notebook, execute_notebooks, execute_plan, printed_tracebacks
from .findings_page import write_findings_page
from .offline import EMBED_OPTIONS, embed_html, external_assets, offline_outputs
from .paths import ReportError, default_book_dir, default_notebooks_dir, js_cache_dir, repo_root
from .plan import Plan, make_plan
from .site import build_book
from .profiles import (DEPENDS, NOTEBOOK_PARAMETERS, PROFILES, executed_parameters, hide_default_parameters,
                       notebook_parameters, parameters_markdown, show_parameters)
from .vendor import MATHJAX_JS, NPM_PACKAGES, REQUIRE_JS, VEGA_BUNDLE, WIDGETS_JS, WIDGETS_SETUP_JS, vendor_js

__all__ = [
    "PROFILES",
    "NOTEBOOK_PARAMETERS",
    "DEPENDS",
    "Plan",
    "make_plan",
    "execute_plan",
    "write_appendix",
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
    "embed_html",
    "EMBED_OPTIONS",
    "repo_root",
    "default_book_dir",
    "default_notebooks_dir",
    "js_cache_dir",
    "VEGA_BUNDLE",
    "REQUIRE_JS",
    "WIDGETS_JS",
    "WIDGETS_SETUP_JS",
    "MATHJAX_JS",
]
