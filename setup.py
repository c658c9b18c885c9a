"""Packaging beyond pyproject.toml: the book's sources ship inside the package.

The chapters (``notebooks/``), the book's sources (``book/``) and the benchmark tables the book's
appendix shows (``benchmarks/results/``) stay where they are in the repository (one copy) and are
mapped into the wheel under ``recmetrics/_bundle/`` (``recmetrics.report.paths.sources_root`` finds
them there when the package runs installed). Only source files are listed: a clone's build output
(``book/_build``, ``book/generated``) never enters a wheel.
"""
from setuptools import find_packages, setup

#: package name inside the wheel -> folder of the repository
BUNDLE = {
    "recmetrics._bundle.notebooks": "notebooks",
    "recmetrics._bundle.book": "book",
    "recmetrics._bundle.benchmarks.results": "benchmarks/results",
}

setup(
    packages=find_packages(include=["recmetrics", "recmetrics.*"]) + list(BUNDLE),
    package_dir=BUNDLE,
    package_data={
        "recmetrics": ["py.typed"],
        "recmetrics._bundle.notebooks": ["*.ipynb", "runs/*.ipynb"],
        "recmetrics._bundle.book": ["_config.yml", "_toc.yml", "*.md", "guide/*.md", "static/*"],
        "recmetrics._bundle.benchmarks.results": ["*.json"],
    },
)
