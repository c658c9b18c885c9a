"""Study.score_matrix: the values of Study.scores without the table — the same numbers in the same
memory layout (so a mean over the units adds them in the same order, bit for bit)."""
from __future__ import annotations

import numpy as np
import pytest

from recmetrics.data.simulate import simulate
from recmetrics.metrics.aggregate import aggregate
from recmetrics.study import Study


@pytest.fixture(scope="module")
def study():
    return Study(simulate(40, 60, 600, seed=0), ["Pop", "Random", "ItemKNN"], ["P", "nDCG", "F1", "RR"], [5, 10],
                 k=2, cache=False, progress=False)


@pytest.mark.parametrize("pool", ["concat", "mean"])
@pytest.mark.parametrize("metric", ["P@5", "nDCG@10", "RR@5", ("F1", 10)])
def test_score_matrix_is_the_scores_table_bit_for_bit(study, pool, metric):
    name, cutoff = (metric, None) if isinstance(metric, str) else metric
    table = study.scores(name, cutoff, pool).to_numpy()
    got = study.score_matrix(name, cutoff, pool)
    assert got.shape == table.shape and got.dtype == table.dtype and got.strides == table.strides
    assert got.tobytes(order="A") == table.tobytes(order="A")
    for method, floor in (("arithmetic", None), ("geometric", 1e-5)):
        assert (aggregate(got, method, axis=1, floor=floor).tobytes()
                == aggregate(table, method, axis=1, floor=floor).tobytes())


def test_score_matrix_refuses_what_scores_refuses(study):
    for call in (study.scores, study.score_matrix):
        with pytest.raises(Exception, match="pool"):
            call("P@5", pool="median")
