"""The JavaScript the offline book needs (Vega bundle, RequireJS, widgets manager, MathJax), vendored at build time."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .paths import ReportError, _log_default, js_cache_dir

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
        from .processes import run_child   # npm ends with the build, however it ends

        proc = run_child([npm, "pack", f"{package}@{version}", "--silent", "--pack-destination", tmp], cwd=tmp)
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


#: the manifest of a vendored tree in the cache (the versions it holds)
_TREE_MANIFEST = "versions.json"


def _vendored_tree(wanted: dict[str, Any], cache: Path, force: bool, log) -> Path:
    """The folder in ``cache`` holding ``vendor/`` as the book needs it for the versions ``wanted``:
    made once (the Vega bundle takes vl-convert seconds to write, the tarballs a while to unpack) and
    copied into every book. Made in a scratch folder and renamed into place, so builds running at once
    never see half a tree (the first rename wins; the others drop theirs)."""
    key = hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]
    tree = cache / f"vendor-{key}"
    needed = [VEGA_BUNDLE, REQUIRE_JS, WIDGETS_JS, MATHJAX_JS]
    if not force and (tree / _TREE_MANIFEST).is_file() and all((tree / f).is_file() for f in needed):
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{tree.name}-", dir=cache))
    try:
        vendor = tmp / "vendor"
        (vendor / "vega").mkdir(parents=True)
        text, versions = _vega_bundle_text()
        (tmp / VEGA_BUNDLE).write_text(text, encoding="utf-8")
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
        versions.update({p: v for p, v, _ in NPM_PACKAGES.values()})
        (tmp / _TREE_MANIFEST).write_text(json.dumps(versions, indent=1))
        if force and tree.exists():
            shutil.rmtree(tree, ignore_errors=True)
        try:
            os.rename(tmp, tree)
        except OSError:   # another build put its tree in place first (or an old one is in the way)
            if not all((tree / f).is_file() for f in [_TREE_MANIFEST, *needed]):
                shutil.rmtree(tree, ignore_errors=True)
                os.rename(tmp, tree)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tree


def vendor_js(
    dest: str | os.PathLike,
    *,
    cache: str | os.PathLike | None = None,
    force: bool = False,
    log: Callable[[str], None] | None = _log_default,
) -> dict[str, Any]:
    """Write the JavaScript the offline book needs under ``dest/vendor/``; return a manifest.

    ``dest`` is a folder listed in ``html_static_path`` (``generated/_vendor`` of the book's folder), so the
    files land in ``_static/vendor/`` of the site. Nothing is rewritten when the versions are
    unchanged (a stamp file records them), unless ``force``. The files are copied from a tree made
    once per set of versions in ``cache`` (:func:`_vendored_tree`; ``force`` makes it again too).
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
    tree = _vendored_tree(wanted, cache, force, log)
    if vendor.exists():
        shutil.rmtree(vendor)
    shutil.copytree(tree / "vendor", vendor)
    versions = json.loads((tree / _TREE_MANIFEST).read_text())
    (dest / WIDGETS_SETUP_JS).write_text(_EMBED_SETUP, encoding="utf-8")
    missing = [f for f in expected if not (dest / f).is_file()]
    if missing:
        raise ReportError(f"vendoring did not produce {missing} under {dest}")
    manifest = {
        "wanted": wanted,
        "versions": versions,
        "files": expected,
    }
    stamp.write_text(json.dumps(manifest, indent=1))
    log(f"vendored JavaScript into {vendor} in {time.perf_counter() - t0:.1f}s")
    return manifest
