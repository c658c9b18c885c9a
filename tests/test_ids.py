"""`Ids` (the pandas-free id index) answers as pandas.Index does, and the trec_eval path of the
command line never imports pandas (its import is a third of a second of a run)."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from recmetrics.data.ids import Ids, id_kind

ids_st = st.one_of(st.lists(st.integers(-5, 30), max_size=12),
                   st.lists(st.text("ab0", min_size=1, max_size=3), max_size=12))


@settings(max_examples=200, deadline=None)
@given(values=ids_st, targets=ids_st)
def test_get_indexer_matches_pandas(values, targets):
    values = list(dict.fromkeys(values))  # unique, as every index recmetrics builds
    got = Ids(np.array(values, dtype=object)).get_indexer(np.array(targets, dtype=object))
    want = pd.Index(values, dtype=object).get_indexer(pd.Index(targets, dtype=object))
    np.testing.assert_array_equal(got, want)


def test_int_and_str_ids_never_match():
    assert Ids(np.array([1, 7])).get_indexer(np.array(["7", "1"], dtype=object)).tolist() == [-1, -1]
    assert Ids(np.array(["01", "1"], dtype=object)).get_indexer(np.array(["1", "01", "001"])).tolist() == [1, 0, -1]


def test_mixed_types_fall_back_to_pandas():
    values = np.array([1, "a", 2.5], dtype=object)
    assert id_kind(values) == "other"
    assert Ids(values).get_indexer(np.array(["a", 2.5, 3], dtype=object)).tolist() == [1, 2, -1]


def test_duplicated_marks_repeats_after_the_first():
    ids = Ids(np.array(["b", "a", "b", "c", "a"], dtype=object))
    assert ids.duplicated().tolist() == [False, False, True, False, True]
    assert ids.has_duplicates and not Ids(np.array([3, 1, 2])).has_duplicates


def test_is_sorted_and_order():
    ids = Ids(np.array(["b", "a", "c"], dtype=object))
    assert ids.values[ids.order()].tolist() == ["a", "b", "c"]
    s = Ids(np.array(["a", "b", "c"], dtype=object), is_sorted=True)
    assert s.get_indexer(np.array(["c", "a", "x"])).tolist() == [2, 0, -1]


def test_bool_ids_are_not_integers():
    assert id_kind(np.array([True, False], dtype=object)) == "other"


def test_trec_evaluate_does_not_import_pandas(tmp_path):
    (tmp_path / "q").write_text("u1 0 d1 1\nu1 0 d2 0\nu2 0 d3 2\n")
    (tmp_path / "r").write_text("u1 Q0 d1 1 0.9 t\nu1 Q0 d2 2 0.5 t\nu2 Q0 d9 1 0.1 t\n")
    code = ("import sys; from recmetrics import cli\n"
            f"rc = cli.main(['evaluate', '--format', 'trec', '-m', 'P.1', '-m', 'map', '-m', 'ndcg_cut.10', "
            f"'{tmp_path / 'q'}', '{tmp_path / 'r'}'])\n"
            "assert rc == 0 and 'pandas' not in sys.modules, sorted(m for m in sys.modules if 'pandas' in m)[:3]\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "P_1                   \tall\t0.5" in res.stdout


def test_nul_characters_are_not_dropped():
    values = np.array(["a", "b\0"], dtype=object)
    assert id_kind(values) == "other"
    assert Ids(values).get_indexer(np.array(["b", "b\0", "a"], dtype=object)).tolist() == [-1, 1, 0]
