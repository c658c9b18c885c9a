"""The recommender zoo: interface, determinism, closed forms, bad input, and a sanity ordering on
one fold of movielens-small (personalised > Pop > Random)."""
import itertools

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.data.qrels import Qrels
from recmetrics.errors import InputError, UnknownNameError
from recmetrics.recommenders import FAMILIES, ZOO, create


def synthetic(seed=1, n_users=80, n_items=120, str_ids=False):
    """Three taste groups: users rate items of their own group high, others low."""
    rng = np.random.default_rng(seed)
    g_u = rng.integers(0, 3, n_users)
    g_i = rng.integers(0, 3, n_items)
    rows = []
    for u in range(n_users):
        for i in rng.choice(n_items, size=rng.integers(5, 30), replace=False):
            r = 4.5 if g_u[u] == g_i[i] else 2.0
            rows.append((u, int(i), float(np.clip(np.round(r + rng.normal(0, 0.7)), 1, 5))))
    df = pd.DataFrame(rows, columns=["user", "item", "rating"])
    if str_ids:
        df["user"] = "u" + df.user.astype(str)
        df["item"] = "i" + df.item.astype(str)
    return df


@pytest.fixture(scope="module")
def data():
    return synthetic()


# ------------------------------------------------------------------------------------- the zoo
def test_zoo_size_families_and_table():
    assert len(ZOO) >= 20 and len(set(ZOO)) == len(ZOO)
    assert set(FAMILIES) == set(ZOO)
    assert len(set(FAMILIES.values())) >= 12
    names = [create(s).name for s in ZOO]
    assert len(set(names)) == len(names)
    table = rm.recommenders.zoo()
    assert list(table.columns) == ["system", "family", "source", "reference", "description"]
    assert len(table) == len(ZOO) and table.source.str.len().gt(0).all()
    # paper 000 section 5.3 systems are all there
    for s in ["Random", "Pop", "CHI2", "KLD", "RSV", "Rocchio", "RM1", "RM2", "LM-WSR-UB", "LM-WSR-IB",
              "NNCosNgbr-UB", "NNCosNgbr-IB", "SLIM", "HT", "SVD", "PureSVD", "BPRMF", "WRMF", "LDA", "UIR-Item"]:
        assert s in ZOO


@pytest.mark.parametrize("spec", ZOO)
def test_every_system_interface_and_determinism(data, spec):
    users = np.array([0, 5, 7, 999])  # 999 is cold
    rec = create(spec).fit(data)
    run = rec.recommend(users, n=10)
    assert list(run.users) == [0, 5, 7]                       # cold user: no list
    assert (run.lengths == 10).all()
    seen = data.groupby("user").item.apply(set)
    for u, row in zip(run.users, run.items):
        assert not (set(row.tolist()) & seen[u])              # AllItems: training items excluded
    assert np.isfinite(run.scores).all()
    again = create(spec).fit(data).recommend(users, n=10)
    assert np.array_equal(run.items, again.items) and np.array_equal(run.scores, again.scores)
    s = rec.score(users)
    assert s.shape == (4, len(rec.items_))
    assert np.isneginf(s[3]).all() and np.isfinite(s[:3]).all()
    s2 = rec.score([0, 5], items=[3, -1, 10])                 # item -1 was never seen in training
    assert np.isneginf(s2[:, 1]).all()
    np.testing.assert_array_equal(s2[:, [0, 2]], rec.score([0, 5])[:, rec.items_.get_indexer([3, 10])])


def test_string_ids():
    df = synthetic(str_ids=True)
    for spec in ["Pop", "EASE", "RM2", "WRMF"]:
        run = create(spec).fit(df).recommend(["u1", "u2", "nobody"], n=5)
        assert list(run.users) == ["u1", "u2"] and run.items.dtype.kind in "UO"


def test_score_targets(data):
    rec = create("ItemKNN").fit(data)
    targets = [np.array([1, 2, -5]), np.array([], dtype=int), np.array([4])]
    out = rec.score_targets([0, 1, 12345], targets)
    assert [len(t) for t in out] == [3, 0, 1]
    full = rec.score([0])[0]
    np.testing.assert_array_equal(out[0][:2], full[rec.items_.get_indexer([1, 2])])
    assert np.isneginf(out[0][2]) and np.isneginf(out[2]).all()    # unseen item, cold user
    with pytest.raises(InputError, match="one target array per user"):
        rec.score_targets([0, 1], targets)


def test_score_targets_across_chunks_equal_the_score_rows(data):
    """Users scored a few at a time, cold users and empty target lists between them, targets in any
    order and unseen items among them: each value is the user's row of ``score`` at the item."""
    rec = create("ItemKNN").fit(data)
    rec.chunk = 2
    rng = np.random.default_rng(5)
    users = rng.permutation(np.r_[rec.users_.to_numpy()[:9], [-1, -2, -3]])
    pool = np.r_[rec.items_.to_numpy(), [10**9, -7]]
    targets = [rng.choice(pool, size=int(rng.integers(0, 12)), replace=False) for _ in users]
    out = rec.score_targets(users, targets)
    for u, t, got in zip(users, targets, out):
        i = rec.items_.get_indexer(t)
        want = np.full(len(t), -np.inf)
        if u in set(rec.users_):
            want[i >= 0] = rec.score([u])[0][i[i >= 0]]
        np.testing.assert_array_equal(got, want)


def test_exclude_seen_false_can_recommend_training_items(data):
    rec = create("Pop").fit(data)
    top = rec.recommend([0], n=30, exclude_seen=False).items[0]
    want = rm.Run.from_scores(rec.popularity_[None, :], [0], rec.items_.to_numpy(), 30).items[0]
    assert list(top) == list(want)
    seen = set(data.item[data.user == 0])
    assert seen & set(top.tolist())
    assert not seen & set(rec.recommend([0], n=30).items[0].tolist())


def test_cold_user_scores_zero_in_evaluation(data):
    test = pd.DataFrame({"user": [0, 999], "item": [1, 2], "rating": [5.0, 5.0]})
    run = create("Pop").fit(data).recommend(test.user.unique(), n=20)
    ev = rm.evaluate(run, Qrels(test), ["P@10", "nDCG@20"])
    assert (ev.per_user.loc[999] == 0).all()


# ------------------------------------------------------------------------------------- closed forms
def _dense_probs(rec):
    return rec.S_.toarray() + rec.c_[:, None] * rec.base_[None, :]


@pytest.mark.parametrize("smoothing,param", [("jm", 0.5), ("dirichlet", 50.0), ("additive", 0.1)])
def test_rm1_rm2_match_brute_force(data, smoothing, param):
    """RM1/RM2 from the definitions, with p(i|v) smoothed from the raw ratings here (not from the
    model's internals). RM2 as Valcarce's reference code computes it (filmyou-core,
    AbstractRM2Reducer.java): uniform item prior, sum_j log sum_v p(i|v) p(j|v); both rank only the
    items rated by a neighbour, then all the others."""
    for name in ("RM1", "RM2"):
        rec = create(f"{name}(k=10,smoothing={smoothing},smoothing_param={param})").fit(data)
        R = rec.R_.toarray()
        length, p_c = R.sum(1), R.sum(0) / R.sum()
        if smoothing == "jm":
            P = (1 - param) * R / length[:, None] + param * p_c[None, :]
        elif smoothing == "dirichlet":
            P = (R + param * p_c[None, :]) / (length[:, None] + param)
        else:
            P = (R + param) / (length[:, None] + param * R.shape[1])
        N = rec.N_.toarray() > 0
        got = rec._score(np.arange(5))
        for u in range(5):
            V = np.flatnonzero(N[u])
            I = np.flatnonzero(R[u] > 0)
            assert u not in V  # the user is not its own neighbour
            cand = (R[V] > 0).any(axis=0)
            if name == "RM1":
                want = np.log(np.exp(np.log(P[V][:, I]).sum(axis=1)) @ P[V])
                mine = np.log(got[u][cand])
            else:
                want = np.log(P[V].T @ P[V][:, I]).sum(axis=1)
                mine = got[u][cand]
            want = want[cand]
            np.testing.assert_allclose(mine - mine.mean(), want - want.mean(), rtol=1e-4, atol=1e-4)
            if (~cand).any():  # every non-candidate after every candidate
                assert got[u][~cand].max() < got[u][cand].min()


def test_rm2_hand_example():
    """Two neighbours, three items, JM lambda = 0.5: the RM2 scores worked by hand."""
    train = pd.DataFrame({"user": [0, 0, 1, 1, 2, 2], "item": [0, 1, 0, 2, 0, 1],
                          "rating": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]})
    rec = create("RM2(k=2,smoothing=jm,smoothing_param=0.5)").fit(train)
    # p(i|C) = (3, 2, 1)/6; p(i|v) = 0.5 r(v,i)/2 + 0.5 p(i|C); user 0 rated {0, 1}, neighbours {1, 2}
    pc = np.array([3, 2, 1]) / 6
    p1 = 0.25 * np.array([1, 0, 1]) + 0.5 * pc
    p2 = 0.25 * np.array([1, 1, 0]) + 0.5 * pc
    want_2 = np.log(p1[2] * p1[0] + p2[2] * p2[0]) + np.log(p1[2] * p1[1] + p2[2] * p2[1])
    want_0 = np.log(p1[0] * p1[0] + p2[0] * p2[0]) + np.log(p1[0] * p1[1] + p2[0] * p2[1])
    got = rec._score(np.array([0]))[0]
    assert got[2] - got[0] == pytest.approx(want_2 - want_0)


def test_prf_formulas(data):
    r = {s: create(f"{s}(k=10)").fit(data) for s in ["Rocchio", "RSV", "CHI2", "KLD"]}
    rec = r["Rocchio"]
    R = rec.R_.toarray()
    N = rec.N_.toarray()
    p_c = R.sum(0) / R.sum()
    u = 3
    S = N[u] @ R
    p_v = S / (N[u] @ R.sum(1))
    cand = S > 0
    want = {"Rocchio": S / N[u].sum(), "RSV": S / N[u].sum() * (p_v - p_c), "CHI2": (p_v - p_c) ** 2 / p_c,
            "KLD": np.where(cand, p_v * np.log(np.where(cand, p_v, 1) / p_c), 0)}
    for name, model in r.items():
        got = model._score(np.array([u]))[0]
        np.testing.assert_allclose(got[cand], want[name][cand], rtol=1e-10)
        assert got[~cand].max() < got[cand].min()               # non-candidates come after


def test_ease_dual_equals_primal(data):
    rec = create("EASE(lam=7)").fit(data)                      # 80 users < 120 items: dual form
    assert rec.dual_
    X = rec.X_.toarray()
    P = np.linalg.inv(X.T @ X + 7 * np.eye(X.shape[1]))
    W = np.eye(X.shape[1]) - P / np.diag(P)
    np.testing.assert_allclose(np.diag(W), 0, atol=1e-12)
    np.testing.assert_allclose(rec._score(np.arange(10)), X[:10] @ W, atol=1e-8)
    wide = data[data.item < 40]                                # fewer items than users: primal form
    rec2 = create("EASE(lam=7)").fit(wide)
    assert not rec2.dual_
    X2 = rec2.X_.toarray()
    P2 = np.linalg.inv(X2.T @ X2 + 7 * np.eye(X2.shape[1]))
    np.testing.assert_allclose(rec2._score(np.arange(5)), X2[:5] @ (np.eye(X2.shape[1]) - P2 / np.diag(P2)),
                               atol=1e-8)


def test_slim_solves_nonnegative_elastic_net(data):
    rec = create("SLIM(k=200,l1=0.5,l2=2,iterations=500,tol=1e-10)").fit(data)  # k >= n_items: full SLIM
    X = rec.X_.toarray()
    W = rec.W_.toarray()
    assert (W >= 0).all() and np.allclose(np.diag(W), 0)
    j = 7
    w = W[:, j]
    grad = X.T @ (X @ w - X[:, j]) + 2 * w                     # KKT of 1/2||x - Xw||^2 + .5|w| + 1||w||^2
    active = w > 0
    others = np.arange(len(w)) != j
    np.testing.assert_allclose(grad[active], -0.5, atol=1e-5)
    assert (grad[~active & others] >= -0.5 - 1e-5).all()


def test_hitting_time_small_graph():
    # user 0 rated item 0; user 1 rated items 0 and 1; user 2 rated items 1 and 2
    df = pd.DataFrame({"user": [0, 1, 1, 2, 2], "item": [0, 0, 1, 1, 2], "rating": [1.0] * 5})
    rec = create("HT(steps=3000)").fit(df)          # long walks: truncation is negligible
    h = -rec.score([0])[0]
    # exact hitting times to user 0 (absorbing chain): h0 = 1 + h(u1)/2, h(u1) = 1 + (h0 + h1)/2,
    # h1 = 1 + (h(u1) + h(u2))/2, h(u2) = 1 + (h1 + h2)/2, h2 = 1 + h(u2)
    A = np.array([[1, -0.5, 0, 0, 0], [-0.5, 1, -0.5, 0, 0], [0, -0.5, 1, -0.5, 0],
                  [0, 0, -0.5, 1, -0.5], [0, 0, 0, -1, 1]])
    exact = np.linalg.solve(A, np.ones(5))                     # order: i0, u1, i1, u2, i2
    np.testing.assert_allclose(h, exact[[0, 2, 4]], rtol=1e-6)


def test_svd_predict(data):
    rec = create("SVD").fit(data)
    pred = rec.predict(data.user.to_numpy(), data.item.to_numpy())
    assert pred.shape == (len(data),)
    rmse = np.sqrt(np.mean((pred - data.rating) ** 2))
    assert rmse < np.sqrt(np.mean((data.rating.mean() - data.rating) ** 2)) * 0.8
    cold = rec.predict(np.array([999, 0, 999]), np.array([0, -3, -3]))
    np.testing.assert_allclose(cold[2], np.clip(rec.mu_, *rec.range_))
    np.testing.assert_allclose(cold[0], np.clip(rec.mu_ + rec.b_i_[rec.items_.get_loc(0)], *rec.range_))
    assert (pred >= data.rating.min()).all() and (pred <= data.rating.max()).all()
    with pytest.raises(InputError, match="pairs"):
        rec.predict([0, 1], [0])


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("spec,param", [
    ("UserKNN(k=0)", "k"), ("ItemKNN(k=-3)", "k"), ("PureSVD(k=0)", "k"), ("WRMF(factors=-1)", "factors"),
    ("BPRMF(factors=0)", "factors"), ("SVD(factors=-2)", "factors"), ("EASE(lam=0)", "lam"),
    ("RM2(smoothing=foo)", "smoothing"), ("RM1(smoothing_param=1.5)", "smoothing_param"),
    ("LM-WSR-IB(mu=-1)", "mu"), ("HT(steps=0)", "steps"), ("pLSA(factors=0)", "factors"),
    ("LDA(iterations=0)", "iterations"), ("SLIM(l1=-1)", "l1"), ("NNCosNgbr-UB(shrink=-1)", "shrink"),
])
def test_invalid_hyper_parameters(spec, param):
    with pytest.raises(InputError, match=rf"\b{param}\b"):
        create(spec)


def test_invalid_hyper_parameters_direct_and_at_fit(data):
    from recmetrics.recommenders.neighbourhood import UserKNN

    with pytest.raises(InputError, match="hyper-parameter k must be an integer >= 1, got 0"):
        UserKNN(k=0)
    with pytest.raises(InputError, match="k"):
        UserKNN(k=2.5)
    with pytest.raises(InputError, match=r"k=500 must be smaller"):
        create("PureSVD(k=500)").fit(data)


def test_unknown_names_suggest_closest():
    with pytest.raises(UnknownNameError, match="PureSVD"):
        create("PureSDV")
    with pytest.raises(UnknownNameError, match="'k'"):
        create("UserKNN(kk=3)")
    assert create("bpr").name == "BPRMF" and create("ALS").name == "WRMF"


def test_empty_training_and_unfitted(data):
    for spec in ["EASE", "RM2", "WRMF", "LDA"]:
        with pytest.raises(InputError, match="empty"):
            create(spec).fit(data.iloc[:0])
    with pytest.raises(InputError, match="not fitted"):
        create("EASE").recommend([0], n=5)


# ------------------------------------------------------------------------------------- sanity
def test_sanity_movielens_one_fold():
    ds = rm.datasets.load("movielens-small")
    train, test = rm.splits.kfold(ds.ratings, k=5, seed=0)[0]
    qrels = Qrels(test, threshold=4)
    users = test.user.unique()
    res = {}
    for spec in ["Random", "Pop", "PureSVD", "EASE", "WRMF"]:
        run = create(spec).fit(train).recommend(users, n=100)
        res[spec] = rm.evaluate(run, qrels, ["nDCG@100", "P@100"]).aggregate
    for m in ["nDCG@100", "P@100"]:
        assert res["Pop"][m] > 3 * res["Random"][m]
        for spec in ["PureSVD", "EASE", "WRMF"]:
            assert res[spec][m] > 1.2 * res["Pop"][m], (spec, m, res[spec][m], res["Pop"][m])


def test_nncosngbr_topn_form_matches_the_toolkit_definition():
    """Cremonesi et al.'s toolkit (createModel_cosineIIknn.m, onLineRecom_NNCosNgbr_II_knn.m):
    cosine on raw rating columns, optionally shrunk by n_ij / (n_ij + shrink), the k largest per
    column, score = userProfile * D. Brute force on a small matrix, item- and user-based; the default
    is unshrunk (the toolkit's top-N driver sets only knn)."""
    rng = np.random.default_rng(3)
    R = (rng.random((30, 12)) < 0.4) * rng.integers(1, 6, size=(30, 12)).astype(float)
    R[0, :2] = [5.0, 4.0]  # every user and item has a rating
    R[:, 11] += (R[:, 11] == 0) * (np.arange(30) % 3 == 0)
    rows, cols = np.nonzero(R)
    train = pd.DataFrame({"user": rows, "item": cols, "rating": R[rows, cols]})
    for (name, X), shrink in itertools.product((("NNCosNgbr-IB", R.T), ("NNCosNgbr-UB", R)), (None, 100.0)):
        rec = create(f"{name}(k=4)" if shrink is None else f"{name}(k=4,shrink={shrink:g})").fit(train)
        norms = np.linalg.norm(X, axis=1)
        cos = (X @ X.T) / np.outer(norms, norms)
        common = (X > 0).astype(float) @ (X > 0).T
        sim = cos if shrink is None else cos * common / (common + shrink)
        np.fill_diagonal(sim, -np.inf)
        D = np.zeros_like(sim)
        for i in range(len(sim)):
            keep = np.argsort(-sim[i], kind="stable")[:4]
            keep = keep[sim[i, keep] > 0]
            D[i, keep] = sim[i, keep]
        want = R @ D.T if name == "NNCosNgbr-IB" else D @ R
        got = rec._score(np.arange(30))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        if name == "NNCosNgbr-IB" and shrink is None:
            topn = want
    # the rating-prediction form stays available and differs
    other = create("NNCosNgbr-IB(k=4,form=rating)").fit(train)._score(np.arange(30))
    assert not np.allclose(other, topn)


def test_svd_biases_do_not_put_single_five_star_items_on_top():
    """Count-proportional bias regularisation left items with one 5-star rating unshrunk at the
    top of every list (P@10 0.002 on movielens-small); the count-independent shrinkage does not."""
    rng = np.random.default_rng(0)
    users, items, ratings = [], [], []
    for u in range(60):
        for i in rng.choice(20, size=12, replace=False):  # 20 popular items: 0-4 loved (4-5), the rest 2-4
            users.append(u), items.append(int(i)), ratings.append(float(rng.integers(4, 6) if i < 5 else rng.integers(2, 5)))
    for k in range(10):  # 10 obscure items, one 5-star rating each
        users.append(k), items.append(100 + k), ratings.append(5.0)
    train = pd.DataFrame({"user": users, "item": items, "rating": ratings})
    run = create("SVD").fit(train).recommend(np.arange(20, 60), n=5)
    top = run.to_frame()
    seen = train.groupby("user").item.apply(set)
    for u, lst in top.groupby("user").item:
        loved = {i for i in range(5) if i not in seen[u]}  # the user's unseen, universally loved items
        assert set(lst.iloc[:len(loved)]) == loved, (u, list(lst), loved)


def test_uir_item_matches_its_formula():
    """sum_{b in L_u} log(1 + (1-lam)/lam * P_ml(b|m) / P(b)) + log P(m), by brute force."""
    rng = np.random.default_rng(5)
    B = (rng.random((25, 10)) < 0.4).astype(float)
    B[np.arange(10), np.arange(10)] = 1.0
    rows, cols = np.nonzero(B)
    train = pd.DataFrame({"user": rows, "item": cols, "rating": rng.integers(1, 6, len(rows)).astype(float)})
    rec = create("UIR-Item(lam=0.3)").fit(train)
    c = B.sum(0)
    p = c / c.sum()
    C = B.T @ B
    want = np.zeros((25, 10))
    for u in range(25):
        for m in range(10):
            want[u, m] = np.log(p[m]) + sum(np.log1p(0.7 / 0.3 * C[b, m] / c[m] / p[b])
                                            for b in np.flatnonzero(B[u]) if b != m)
    np.testing.assert_allclose(rec._score(np.arange(25)), want, rtol=1e-10)


def test_paper_systems_are_the_21_of_paper_000():
    from recmetrics.recommenders import PAPER_SYSTEMS, ZOO

    assert len(PAPER_SYSTEMS) == len(set(PAPER_SYSTEMS)) == 21
    assert set(PAPER_SYSTEMS) <= set(ZOO)
    assert set(ZOO) - set(PAPER_SYSTEMS) == {"UserKNN", "ItemKNN", "EASE", "RP3beta"}
    for spec in PAPER_SYSTEMS:
        create(spec)


def test_ease_is_the_same_whatever_the_blas_threads():
    """LAPACK's inverse differs in the last bits with the number of BLAS threads (measured: 1e-18 at
    300 items), which can flip a near-tie: EASE fits on one thread, so its lists do not depend on the
    machine's cores or on what runs beside it. Both forms, with 1 and 2 threads around the fit."""
    from threadpoolctl import threadpool_limits

    from recmetrics.data.simulate import simulate

    for users, items in ((900, 300), (300, 900)):          # primal (items <= users), dual
        ratings = simulate(users, items, users * 30, seed=5)
        fitted = []
        for threads in (1, 2):
            with threadpool_limits(threads, "blas"):
                rec = create("EASE(lam=50)").fit(ratings)
            fitted.append(rec)
        a, b = fitted
        assert a.dual_ == b.dual_ == (users < items)
        for name in (("KX_", "diagP_") if a.dual_ else ("W_",)):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name


@pytest.mark.parametrize("chunk_cells", [16_000_000, 441 * 7])
def test_ridge_solve_sums_the_upper_triangle_to_the_bit(chunk_cells):
    """The ALS systems of BiasedMF, each matrix summed over its upper triangle (row by row of the
    pattern) and mirrored, equal to the byte the full outer products summed column by column of the
    pattern (the same products in the same order), across chunks of targets and of the other side,
    and whatever the order of the pattern's stored entries; each solves its ridge problem."""
    import scipy.sparse as sp

    from recmetrics.recommenders.factorization import _ridge_solve

    rng = np.random.default_rng(3)
    n_t, n_o, d = 37, 53, 21
    M = sp.random(n_t, n_o, density=0.3, random_state=4, format="csr")
    M.data[:] = 1.0
    Y = sp.csr_matrix((rng.normal(size=M.nnz), M.indices, M.indptr), shape=M.shape)
    F = rng.normal(size=(n_o, d))
    reg = rng.uniform(0.1, 2.0, size=(n_t, d))
    step = max(1, chunk_cells // (d * d))
    want = np.empty((n_t, d))
    for t0 in range(0, n_t, step):              # the former formulation: full products, columns of the pattern
        Mt = sp.csc_matrix(M[t0:t0 + step])
        A = np.zeros((Mt.shape[0], d * d))
        for o0 in range(0, n_o, step):
            Fo = F[o0:o0 + step]
            A += Mt[:, o0:o0 + step] @ (Fo[:, :, None] * Fo[:, None, :]).reshape(len(Fo), d * d)
        A = A.reshape(-1, d, d)
        A[:, np.arange(d), np.arange(d)] += reg[t0:t0 + step]
        want[t0:t0 + step] = np.linalg.solve(A, np.asarray(Y @ F)[t0:t0 + step, :, None])[:, :, 0]
    shuffled = M.copy()                          # the same pattern, its entries stored out of order
    for r in range(n_t):
        a, b = shuffled.indptr[r], shuffled.indptr[r + 1]
        shuffled.indices[a:b] = shuffled.indices[a:b][::-1].copy()
    shuffled.has_sorted_indices = False
    for pattern in (M, shuffled):
        got = _ridge_solve(pattern, Y, F, reg, chunk_cells=chunk_cells)
        assert got.tobytes() == want.tobytes()
    assert not shuffled.has_sorted_indices      # the caller's matrix is left as it was
    t = 5                                        # and each row solves its own normal equations
    cols = M.indices[M.indptr[t]:M.indptr[t + 1]]
    Ft = F[cols]
    direct = np.linalg.solve(Ft.T @ Ft + np.diag(reg[t]), Ft.T @ Y[t].toarray()[0, cols])
    np.testing.assert_allclose(got[t], direct, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("beta,weighted", [(1.0, True), (0.8, False)])
def test_plsa_em_steps_equal_the_textbook_steps_to_the_bit(beta, weighted):
    """pLSA's EM (buffers reused across steps) gives the bytes of the steps written plainly."""
    import scipy.sparse as sp

    from recmetrics.recommenders.topic import plsa_em

    rng = np.random.default_rng(5)
    R = sp.random(30, 40, density=0.2, random_state=6, format="csr")
    R.data = rng.integers(1, 6, R.nnz).astype(float)
    p_zu = rng.dirichlet(np.ones(4), size=30)
    p_iz = rng.dirichlet(np.ones(40), size=4).T
    coo = R.tocoo()
    w = coo.data if weighted else np.ones(coo.nnz)
    Eu = sp.csr_matrix((w, (coo.row, np.arange(coo.nnz))), shape=(30, coo.nnz))
    Ei = sp.csr_matrix((w, (coo.col, np.arange(coo.nnz))), shape=(40, coo.nnz))
    a, b = p_zu, p_iz
    for _ in range(7):
        q = a[coo.row] * b[coo.col]
        if beta != 1.0:
            q **= beta
        q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
        nz_u, nz_i = np.asarray(Eu @ q), np.asarray(Ei @ q)
        a = nz_u / np.maximum(nz_u.sum(axis=1, keepdims=True), 1e-300)
        b = nz_i / np.maximum(nz_i.sum(axis=0, keepdims=True), 1e-300)
    got_u, got_i = plsa_em(R, p_zu, p_iz, 7, beta, weighted)
    assert got_u.tobytes() == a.tobytes() and got_i.tobytes() == b.tobytes()
