"""Packaging beyond pyproject.toml: the book's sources ship inside the package.

The chapters (``notebooks/``), the book's sources (``book/``) and the benchmark tables the book's
appendix shows (``benchmarks/results/``) stay where they are in the repository (one copy) and are
mapped into the wheel under ``recmetrics/_bundle/`` (``recmetrics.report.paths.sources_root`` finds
them there when the package runs installed). Only source files are listed, folder by folder: a
clone's build output (``book/_build``, ``book/generated``) never enters a wheel, and a new folder of
sources must be added here (tests/test_installed.py compares the wheel with the repository's files).
"""
from setuptools import find_packages, setup

#: package inside the wheel -> (folder of the repository, its files that ship)
BUNDLE = {
    "recmetrics._bundle.notebooks": ("notebooks", ["*.ipynb"]),
    "recmetrics._bundle.notebooks.runs": ("notebooks/runs", ["*.ipynb"]),
    "recmetrics._bundle.book": ("book", ["_config.yml", "_toc.yml", "*.md"]),
    "recmetrics._bundle.book.guide": ("book/guide", ["*.md"]),
    "recmetrics._bundle.book.static": ("book/static", ["*.css", "*.svg"]),
    "recmetrics._bundle.benchmarks.results": ("benchmarks/results", ["*.json"]),
}

setup(
    packages=find_packages(include=["recmetrics", "recmetrics.*"]) + list(BUNDLE),
    package_dir={name: folder for name, (folder, _) in BUNDLE.items()},
    package_data={"recmetrics": ["py.typed"], **{name: files for name, (_, files) in BUNDLE.items()}},
)
