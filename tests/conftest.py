import numpy as np
import pandas as pd
import pytest


def make_case(seed: int = 0, n_users: int = 300, n_items: int = 400, max_len: int = 120):
    """Judgments and a tied, ragged run covering the parity edge cases.

    - half-star ratings 0.5-5 (so the oracle scales them by 2);
    - users with no relevant item, users with no judged non-relevant item;
    - users missing from the run, lists shorter than the cut-offs, empty lists;
    - many score ties (scores rounded to one decimal), string-sorting item ids (10 < 9).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        n = rng.integers(1, 40)
        items = rng.choice(n_items, size=n, replace=False)
        kind = u % 7
        if kind == 0:      # no relevant item
            ratings = rng.choice(np.arange(0.5, 4.0, 0.5), size=n)
        elif kind == 1:    # no judged non-relevant item
            ratings = rng.choice([4.0, 4.5, 5.0], size=n)
        else:
            ratings = rng.choice(np.arange(0.5, 5.5, 0.5), size=n)
        rows += [(u, int(i), float(r)) for i, r in zip(items, ratings)]
    qrels = pd.DataFrame(rows, columns=["user", "item", "rating"])
    run_rows = []
    for u in range(n_users):
        if u % 11 == 3:    # missing from the run
            continue
        length = int(rng.integers(0, max_len)) if u % 5 else int(rng.integers(0, 8))
        judged = qrels.loc[qrels.user == u, "item"].to_numpy()
        pool = np.unique(np.concatenate([judged, rng.choice(n_items, size=length, replace=False)]))
        chosen = rng.choice(pool, size=min(length, len(pool)), replace=False)
        scores = np.round(rng.random(len(chosen)), 1)
        run_rows += [(u, int(i), float(s)) for i, s in zip(chosen, scores)]
    run = pd.DataFrame(run_rows, columns=["user", "item", "score"])
    return qrels, run


@pytest.fixture(scope="session")
def case():
    return make_case()
