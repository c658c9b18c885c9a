"""The package's import graph: no circle, no upward import, no module over 600 lines.

The layers follow the data path (DESIGN.md, the README's "Architecture"): a module imports only
from its own layer or the layers below it. The imports are read with :mod:`ast` from the source
files (every ``import`` / ``from ... import``, also those inside functions), so a lazy import
counts like any other. A submodule importing its own package's ``__init__`` is not an edge (the
``__init__`` only re-exports), as in the shared ``import_cycles.py``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "recmetrics"

#: Layers from the bottom up; a module belongs to the first layer with a prefix matching its name
#: (``recmetrics.`` omitted; ``data`` matches ``data`` and ``data.io``). Every module must match one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # helpers every layer shares: errors, names, caches, parallel map, input checks, text escaping,
    # seeded resampling, index idioms
    ("base", ("errors", "names", "cache", "parallel", "checks", "markdown", "resampling", "arrays")),
    ("data", ("data",)),
    # judging a run against its qrels and the metric kernels on the judged label matrix
    ("metrics", ("judged", "metrics", "trec_measures")),
    # evaluate() and the argument helpers the commands share (meta.compare and cli)
    ("evaluation", ("evaluation", "arguments")),
    # systems and their runs, the score cube, evaluation designs (target sets)
    ("study", ("recommenders", "runs", "study", "protocols", "prepared")),
    ("meta", ("meta",)),
    ("papers", ("papers",)),
    # charts, explorer tables and widgets (what notebooks draw)
    ("viz", ("viz", "viz_explorers", "explorers", "widgets")),
    ("report", ("report",)),
    ("cli", ("cli",)),
)

#: Circles still in the code base, each to be removed by a change in flight; an edge listed here
#: must still exist (so the list only shrinks). Empty: no circle is left.
PENDING: set[tuple[str, str]] = set()

MAX_LINES = 600
#: Modules still over :data:`MAX_LINES`, each to be split by a change in flight; a module listed here
#: must still be over the limit. Empty: none is.
LONG_PENDING: set[str] = set()


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """``{dotted name without the package prefix: file}``; a package is named by its folder ('' = root)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.with_suffix("").relative_to(root).parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None, package: str) -> str | None:
    """The absolute dotted name (without ``package.``) an import statement names; None outside the package."""
    if level:
        base = module.split(".") if module else []
        base = base if is_package else base[:-1]
        if level - 1 > len(base):
            return None
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([name] if name else []))
    if name == package:
        return ""
    if name and name.startswith(package + "."):
        return name[len(package) + 1:]
    return None


def import_edges(root: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` read from the sources with ast."""
    package = root.name
    mods = modules(root)

    def known(target: str | None) -> str | None:
        while target:
            if target in mods:
                return target
            target = target.rpartition(".")[0]
        return "" if target == "" and "" in mods else None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str | None] = []
            if isinstance(node, ast.Import):
                names = [_resolve(mod, is_package, 0, a.name, package) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_package, node.level, node.module, package)
                if base is not None:
                    names = [f"{base}.{a.name}" if base else a.name for a in node.names] + [base]
            for name in names:
                target = known(name)
                if target is None or target == mod:
                    continue
                if mods[target].name == "__init__.py" and (target == "" or mod.startswith(target + ".")):
                    continue  # a submodule reading its own package's re-exports
                edges[mod].add(target)
    return edges


def layer_of(module: str) -> int | None:
    if module == "":
        return len(LAYERS)  # the package's front door re-exports from every layer
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    return None


def upward_imports(edges: dict[str, set[str]]) -> list[tuple[str, str, str, str]]:
    """``(module, its layer, imported module, that module's higher layer)`` for every upward edge."""
    out = []
    for mod, targets in edges.items():
        low = layer_of(mod)
        for t in targets:
            high = layer_of(t)
            if low is not None and high is not None and high > low:
                out.append((mod, LAYERS[low][0], t, LAYERS[high][0]))
    return sorted(out)


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def _without_pending(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    return {m: {t for t in ts if (m, t) not in PENDING} for m, ts in edges.items()}


# ------------------------------------------------------------------------------------------ tests
def test_every_module_has_a_layer():
    unplaced = [m for m in modules() if layer_of(m) is None]
    assert not unplaced, f"place these modules in a layer of LAYERS (tests/test_layers.py): {unplaced}"


def test_no_upward_import():
    up = upward_imports(_without_pending(import_edges()))
    assert not up, "a lower layer imports a higher one:\n" + "\n".join(
        f"  {m} ({lm}) imports {t} ({lt})" for m, lm, t, lt in up)


def test_no_import_circle():
    found = circles(_without_pending(import_edges()))
    assert not found, "import circles:\n" + "\n".join("  " + " <-> ".join(c) for c in found)


def test_pending_edges_still_exist():
    """An edge another branch removed must leave :data:`PENDING` too (the list only shrinks)."""
    edges = import_edges()
    gone = sorted((m, t) for m, t in PENDING if t not in edges.get(m, set()))
    assert not gone, f"remove these edges from PENDING in tests/test_layers.py, they are gone: {gone}"


def _lengths() -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in modules().items()}


def test_no_module_over_600_lines():
    long = {m or "recmetrics": n for m, n in _lengths().items() if n > MAX_LINES and m not in LONG_PENDING}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_long_pending_modules_are_still_long():
    lengths = _lengths()
    done = sorted(m for m in LONG_PENDING if lengths.get(m, 0) <= MAX_LINES)
    assert not done, f"remove these from LONG_PENDING in tests/test_layers.py, they are split: {done}"


# ------------------------------------------------------------------ the checker on made-up packages
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_checker_reads_relative_absolute_and_lazy_imports(tmp_path):
    root = _package(tmp_path, {
        "data/__init__.py": "from .io import read\n",
        "data/io.py": "from ..errors import InputError\ndef read():\n    from pkg.meta import x\n",
        "errors.py": "",
        "meta/__init__.py": "",
        "meta/x.py": "import pkg.data.io\nfrom . import y\n",
        "meta/y.py": "",
    })
    edges = import_edges(root)
    assert edges["data.io"] == {"errors", "meta", "meta.x"}   # the package and the module it names
    assert edges["meta.x"] == {"data.io", "meta.y"}
    assert edges["data"] == {"data.io"}          # a package importing its submodule
    assert edges["meta.y"] == set()


def test_checker_finds_an_upward_import_and_a_circle(tmp_path):
    root = _package(tmp_path, {
        "data/__init__.py": "",
        "data/io.py": "from ..meta.findings import order\n",
        "meta/__init__.py": "",
        "meta/findings.py": "from ..data.io import read\n",
        "meta/a.py": "from .b import f\n",
        "meta/b.py": "from . import a\n",
    })
    edges = import_edges(root)
    assert upward_imports(edges) == [("data.io", "data", "meta.findings", "meta")]
    assert circles(edges) == [["data.io", "meta.findings"], ["meta.a", "meta.b"]]


def test_checker_ignores_a_submodule_reading_its_package(tmp_path):
    root = _package(tmp_path, {
        "meta/__init__.py": "from .a import f\n",
        "meta/a.py": "from . import b\nfrom .. import meta\n",
        "meta/b.py": "",
    })
    edges = import_edges(root)
    assert circles(edges) == [] and edges["meta"] == {"meta.a"}


@pytest.mark.parametrize("name", ["data.io", "metrics.diversity.ideal", "meta", "report.plan", "cli", "widgets.guide"])
def test_layer_names_match_whole_components(name):
    assert layer_of(name) is not None
    assert layer_of("metricsx") is None and layer_of("datasets") is None
