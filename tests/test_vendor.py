"""The offline book's JavaScript: made once per set of versions in the JavaScript cache, copied whole
into every book; a damaged cached copy is made again, as is every copy with ``force``."""
from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from recmetrics.report import vendor
from recmetrics.report.paths import js_cache_dir


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def cache(tmp_path):
    """A JavaScript cache of the test's own holding the npm tarballs (``npm pack`` into the user's cache
    on first use, as a build does)."""
    vendor.vendor_js(tmp_path / "seed", log=None)
    folder = tmp_path / "js"
    folder.mkdir()
    for tgz in js_cache_dir().glob("*.tgz"):
        shutil.copy(tgz, folder)
    return folder


def test_the_javascript_is_made_once_and_copied_into_every_book(tmp_path, cache, monkeypatch):
    first = vendor.vendor_js(tmp_path / "a", cache=cache, log=None)
    trees = [p for p in cache.iterdir() if p.is_dir()]
    assert [p.name[:7] for p in trees] == ["vendor-"]          # one tree, no scratch folder left
    made = vendor._vega_bundle_text

    def refuse():
        raise AssertionError("the Vega bundle was made again")

    monkeypatch.setattr(vendor, "_vega_bundle_text", refuse)
    again = vendor.vendor_js(tmp_path / "b", cache=cache, log=None)
    assert again == first
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert not filecmp.dircmp(tmp_path / "a", tmp_path / "b").diff_files
    assert vendor.VEGA_BUNDLE in first["files"] and first["versions"]["mathjax"] == "3.2.2"
    # a book's copy is its own: changing it leaves the cached tree and the next book alone
    (tmp_path / "b" / vendor.REQUIRE_JS).write_text("changed")
    vendor.vendor_js(tmp_path / "c", cache=cache, log=None)
    assert _files(tmp_path / "c") == _files(tmp_path / "a")

    # a cached tree that lost a file is made again, as is any with force
    monkeypatch.setattr(vendor, "_vega_bundle_text", made)
    (trees[0] / vendor.VEGA_BUNDLE).unlink()
    vendor.vendor_js(tmp_path / "d", cache=cache, log=None)
    assert _files(tmp_path / "d") == _files(tmp_path / "a")
    calls = []
    monkeypatch.setattr(vendor, "_vega_bundle_text", lambda: calls.append(1) or made())
    vendor.vendor_js(tmp_path / "d", cache=cache, force=True, log=None)
    assert calls == [1] and _files(tmp_path / "d") == _files(tmp_path / "a")
    assert [p.name for p in cache.iterdir() if p.is_dir()] == [trees[0].name]


def test_a_tree_another_build_put_in_place_first_is_kept(tmp_path, cache, monkeypatch):
    """Two builds making the tree at once: the second to finish keeps the first one's tree."""
    vendor.vendor_js(tmp_path / "a", cache=cache, log=None)
    tree = next(p for p in cache.iterdir() if p.is_dir())
    marker = tree / "vendor" / "first-build"
    marker.write_text("")
    real = vendor._vega_bundle_text
    # this build found no tree when it looked; the other build's lands while it makes its own
    monkeypatch.setattr(vendor, "_TREE_MANIFEST", "not-yet.json")
    (tree / "not-yet.json").unlink(missing_ok=True)
    monkeypatch.setattr(vendor, "_vega_bundle_text", lambda: ((tree / "not-yet.json").write_text(
        (tree / "versions.json").read_text()), real())[1])
    vendor.vendor_js(tmp_path / "b", cache=cache, log=None)
    assert (tmp_path / "b" / "vendor" / "first-build").is_file()
    assert [p.name for p in cache.iterdir() if p.is_dir()] == [tree.name]   # its scratch tree removed
