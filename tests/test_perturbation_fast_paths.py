"""The fast paths of chapter 03 (Exp. 3's re-judging, the greedy ideal) against the definitions they replace.

Every comparison is bit for bit (``tobytes``): the fast paths promise the same floating-point
operations in the same order, not merely close values. The references are the library's own
definitions: ``ab_gains`` over all the lists at once followed by ``cumsum(g * disc)`` (what
``robustness`` computed before), ``ab_ideal_gains`` per β, ``judgments_from_qrels`` of
``qrels.mask(keep)``, and a per-step transcription of the greedy ideal.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.meta import perturbations as pt
from recmetrics.meta.perturbations.fixed_lists import FixedLists, ideal_dcg, reduced_judgments
from recmetrics.metrics import diversity as dv
from recmetrics.metrics.diversity.ideal import greedy_ideal
from recmetrics.metrics.diversity.lists import _P_MAX

BETAS = (0.25, 0.5, 1.0)


def _reference_greedy(row, value, decay, weights, n_rows, k, combine):
    """The greedy ideal as it was written before the live-prefix version: every candidate, every step."""
    out = np.zeros((n_rows, k))
    N = len(row)
    if N == 0 or k == 0:
        return out
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    sizes = np.diff(np.r_[starts, N])
    seg_rows = row[starts]
    seg_of = np.repeat(np.arange(len(starts)), sizes)
    cand, asp = np.nonzero(value)
    v = value[cand, asp]
    pair_row = row[cand]
    w = weights[pair_row, asp] if weights is not None else None
    R = np.ones((n_rows, value.shape[1]))
    avail = np.ones(N, dtype=bool)
    pos = np.arange(N)
    for step in range(min(k, int(sizes.max()))):
        Rp = R[pair_row, asp]
        if combine == "noisy-or":
            g = -np.expm1(np.bincount(cand, weights=np.log1p(-np.minimum(v * w * Rp, _P_MAX)), minlength=N))
        else:
            g = np.bincount(cand, weights=v * Rp, minlength=N)
        g = np.where(avail, g, -np.inf)
        best = np.maximum.reduceat(g, starts)
        ok = best > -np.inf
        first = np.minimum.reduceat(np.where(avail & (g == best[seg_of]), pos, N), starts)
        sel = first[ok]
        out[seg_rows[ok], step] = best[ok]
        R[row[sel]] *= 1.0 - decay[sel]
        avail[sel] = False
    return out


@pytest.mark.parametrize("lazy_from", [0, None])     # 0: the lazy path on every case; None: as shipped
@pytest.mark.parametrize("seed", range(60))
def test_greedy_ideal_equals_the_every_candidate_version(seed, lazy_from, monkeypatch):
    if lazy_from is not None:
        monkeypatch.setattr("recmetrics.metrics.diversity.ideal._LAZY_FROM", lazy_from)
    # users of very different sizes (the live prefix shrinks), empty users, equal values (ties),
    # candidates without any aspect, k below and above the largest user
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 9)), int(rng.integers(1, 5))
    sizes = rng.choice([0, 1, 2, 5, 12], n)
    row = np.repeat(np.arange(n), sizes)
    grades = rng.choice([0.0, 0.2, 0.5, 1.0], (len(row), 1)) if seed % 2 else np.full((len(row), 1), 0.5)
    value = np.where(rng.random((len(row), c)) < 0.5, grades, 0.0)
    decay = value * rng.choice([1.0, 0.5, 3.0])      # 3.0: R can grow, the lazy bound fails: every gain, every step
    w = rng.random((n, c))
    k = int(rng.integers(1, 15))
    for combine, weights in (("noisy-or", w), ("sum", None)):
        got = greedy_ideal(row, value, decay, weights, n, k, combine)
        want = _reference_greedy(row, value, decay, weights, n, k, combine)
        assert got.tobytes() == want.tobytes()


def _toy(seed, n_users=7, n_items=25, per_user=(1, 14)):
    """A test set with ties in rating, users with no relevant item, items without aspects and
    items showing many aspects (repeated aspects down a list)."""
    rng = np.random.default_rng(seed)
    aspects = {f"i{j}": tuple(a for a in "ABCD" if rng.random() < 0.45) for j in range(n_items)}
    aspects["i0"] = ()
    aspects["i1"] = ("A", "B", "C", "D")
    rows = []
    for u in range(n_users):
        m = int(rng.integers(*per_user))
        for j in rng.choice(n_items, m, replace=False):
            rows.append((u, f"i{j}", float(rng.integers(1, 6)) if u else float(rng.integers(1, 4))))
    return pd.DataFrame(rows, columns=["user", "item", "rating"]), aspects


def _setting(seed, n_systems=6, k=10):
    test, aspects = _toy(seed)
    qrels = rm.Qrels(test, threshold=4, max_rating=5.0)
    idx = dv.aspect_index(aspects)
    users = qrels.users                        # every judged user, user 0 without a relevant item
    ideal = pt.ideal_ordering(qrels, idx, users=users)
    stacks = pt.shuffled_runs(ideal, n_systems, k, seed)
    S, n, m = stacks.shape
    if m < k:                                  # as robustness pads lists shorter than the cut-off
        stacks = np.concatenate([stacks, np.repeat(stacks[:, :, :1], k - m, axis=2)], axis=2)
    items = stacks[:, :, :k].reshape(S * n, k)
    L = np.minimum(ideal.lengths, min(k, m))   # lists shorter than the cut-off and than the judgments
    valid = np.broadcast_to(np.arange(k)[None, None, :] < L[None, :, None], (S, n, k)).reshape(S * n, k)
    frame = qrels.to_frame()
    at = np.where(valid, qrels.positions(np.tile(users, S), items), -1)
    ratings = frame["rating"].to_numpy(dtype=np.float64)
    return qrels, idx, users, items, valid, at, ratings, S, n, k


@pytest.mark.filterwarnings("ignore::UserWarning")       # users emptied by a removal: uniform γ
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("given_positions", [False, True])
def test_fixed_lists_dcg_equals_ab_gains_over_all_lists(seed, given_positions):
    qrels, idx, users, items, valid, at, ratings, S, n, k = _setting(seed)
    lists = FixedLists(items, valid, np.tile(np.arange(n), S), idx, at, ratings,
                       positions=idx.positions(items) if given_positions else None)
    pairs = dv.list_pairs(items, valid, idx)
    disc = dv.discount(k)
    full_jd = dv.judgments_from_qrels(qrels, users, idx)
    rng = np.random.default_rng(seed)
    for f in (0.0, 0.5, 0.95):                 # 0.95: most users lose every judgment (their cells take alpha)
        keep = rng.random(len(ratings)) >= f
        keep[0] = True                         # a Qrels cannot be empty
        jd = dv.judgments_from_qrels(qrels.mask(keep), users, idx)
        gamma = dv.profile_weights(users, idx, "test", judgments=jd, threshold=qrels.threshold)
        got = lists.dcg(keep, gamma, 0.005, BETAS, 5.0, (1, 3, k), disc)
        labels = np.where((at >= 0) & keep[np.maximum(at, 0)], ratings[np.maximum(at, 0)], np.nan)
        for b in BETAS:
            g = dv.ab_gains(items, labels, valid, np.tile(gamma, (S, 1)), 0.005, b, 5.0, idx, pairs=pairs)
            want = np.cumsum(g * disc, axis=1)
            for c in (1, 3, k):
                assert got[(c, b)].tobytes() == want[:, c - 1].tobytes(), (f, b, c)
        # the reduced judgments and the stacked ideal
        mine = reduced_judgments(full_jd, qrels.positions(users[full_jd.row], full_jd.items[:, None])[:, 0], keep)
        for field in ("row", "items", "ratings", "member"):
            assert np.array_equal(getattr(mine, field), getattr(jd, field)), field
        ideal = ideal_dcg(mine, gamma, BETAS, 5.0, k, disc)
        for b in BETAS:
            want = np.cumsum(dv.ab_ideal_gains(jd, gamma, 0.005, b, 5.0, k) * disc, axis=1)
            assert ideal[b].tobytes() == want.tobytes()


def test_fixed_lists_unjudged_cells_take_alpha():
    # a list of items the test set never judged: every cell gains from alpha alone
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 4.0]}))
    aspects = {"a": ("x",), "b": ("x",), "q": ("x",), "r": ("x", "y")}
    idx = dv.aspect_index(aspects)
    items = np.array([["q", "r", "a"]])
    valid = np.ones((1, 3), dtype=bool)
    at = np.where(valid, qrels.positions(np.array([1]), items), -1)
    assert at.tolist() == [[-1, -1, 0]]
    ratings = qrels.to_frame()["rating"].to_numpy()
    lists = FixedLists(items, valid, np.array([0]), idx, at, ratings)
    gamma = np.array([[0.5, 0.5]])
    keep = np.ones(2, dtype=bool)
    got = lists.dcg(keep, gamma, 0.005, (0.5,), 5.0, (3,), dv.discount(3))[(3, 0.5)]
    labels = np.array([[np.nan, np.nan, 5.0]])
    want = np.cumsum(dv.ab_gains(items, labels, valid, gamma, 0.005, 0.5, 5.0, idx) * dv.discount(3), axis=1)
    assert got.tobytes() == want[:, 2].tobytes()


def test_fixed_lists_rejects_bad_input():
    idx = dv.aspect_index({"a": ("x",)})
    items = np.array([["a", "a"]])
    with pytest.raises(InputError, match=r"prefix.*row 0 is \[0, 1\]"):
        FixedLists(items, np.array([[False, True]]), np.array([0]), idx, np.array([[-1, 0]]), np.array([5.0]))
    lists = FixedLists(items, np.array([[True, False]]), np.array([0]), idx, np.array([[0, -1]]), np.array([5.0]))
    with pytest.raises(InputError, match="cut-offs must lie in 1..2"):
        lists.dcg(np.ones(1, bool), np.ones((1, 1)), 0.005, (0.5,), 5.0, (3,), dv.discount(2))


def _robustness_reference(qrels, aspects, cutoffs, betas, n_systems, n_removals, fractions, seed, systems="once"):
    """Exp. 3 as robustness computed it before the fast path (ab_gains over every list, per β): the
    systems shuffled from one stream (again for each removal after the first with ``"per-removal"``),
    the removals drawn from another."""
    from recmetrics.meta import agreement
    from recmetrics.meta.perturbations._inputs import _rng, _sample_users

    rng = _rng(seed)
    kmax = max(cutoffs)
    idx = dv.aspect_index(aspects)
    eval_users = _sample_users(qrels, None, None, rng)
    system_rng, removal_rng = (np.random.default_rng(int(s)) for s in rng.integers(0, 2**62, size=2))
    ideal = pt.ideal_ordering(qrels, idx, users=eval_users)
    disc = dv.discount(kmax)
    frame = qrels.to_frame()
    ratings = frame["rating"].to_numpy(dtype=np.float64)

    def shuffled():
        stacks = pt.shuffled_runs(ideal, n_systems, kmax, system_rng)
        S, n, m = stacks.shape
        if m < kmax:
            stacks = np.concatenate([stacks, np.repeat(stacks[:, :, :1], kmax - m, axis=2)], axis=2)
        items = stacks[:, :, :kmax].reshape(S * n, kmax)
        L = np.minimum(ideal.lengths, kmax)
        valid = np.broadcast_to(np.arange(kmax)[None, None, :] < L[None, :, None], (S, n, kmax)).reshape(S * n, kmax)
        at = np.where(valid, qrels.positions(np.tile(eval_users, S), items), -1)
        return items, valid, dv.list_pairs(items, valid, idx), at, S, n

    def means(lists, q, keep):
        items, valid, pairs, at, S, n = lists
        labels = np.where((at >= 0) & keep[at], ratings[at], np.nan)
        jd = dv.judgments_from_qrels(q, eval_users, idx)
        gamma = dv.profile_weights(eval_users, idx, "test", judgments=jd, threshold=q.threshold)
        out = {}
        for b in betas:
            dcg = np.cumsum(dv.ab_gains(items, labels, valid, np.tile(gamma, (S, 1)), 0.005, b, 5.0, idx,
                                        pairs=pairs) * disc, axis=1)
            idcg = np.cumsum(dv.ab_ideal_gains(jd, gamma, 0.005, b, 5.0, kmax) * disc, axis=1)
            for k in cutoffs:
                num, den = dcg[:, k - 1].reshape(S, n), idcg[:, k - 1][None, :]
                out[(k, b)] = np.divide(num, den, out=np.zeros_like(num), where=den > 0).mean(axis=1)
        return out

    everything = np.ones(len(frame), dtype=bool)
    lists = shuffled()
    full = means(lists, qrels, everything)
    rows = []
    for r in range(n_removals):
        if r and systems == "per-removal":
            lists = shuffled()
            full = means(lists, qrels, everything)
        rank = pt.proportional_removal_order(frame, idx, removal_rng)
        for f in fractions:
            keep = rank >= int(round(f * len(frame)))
            for (k, b), m_ in means(lists, qrels.mask(keep), keep).items():
                rows.append((k, b, f, r, agreement.kendall_tau(full[(k, b)], m_)))
    return pd.DataFrame(rows, columns=["cutoff", "beta", "fraction", "removal", "tau"])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_robustness_table_equals_the_reference():
    test, aspects = _toy(3, n_users=12, per_user=(2, 20))
    qrels = rm.Qrels(test, threshold=4, max_rating=5.0)
    kw = dict(cutoffs=(3, 8), betas=(0.25, 1.0), n_systems=8, n_removals=3, fractions=(0.2, 0.6, 0.9), seed=5)
    for systems in pt.SYSTEM_DRAWS:
        got = pt.robustness(qrels, aspects, systems=systems, **kw)
        pd.testing.assert_frame_equal(got, _robustness_reference(qrels, aspects, systems=systems, **kw), check_exact=True)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_robustness_by_draw_equals_each_draw_alone_on_common_removals():
    """Both draws of systems at once equal each draw alone, to the bit; they meet the same removals
    (the per-removal draw's removal 0 judges the set "once" keeps: equal τ there), and they differ
    afterwards (new systems per removal)."""
    test, aspects = _toy(4, n_users=14, per_user=(2, 20))
    qrels = rm.Qrels(test, threshold=4, max_rating=5.0)
    kw = dict(cutoffs=(3, 8), betas=(0.25, 1.0), n_systems=7, n_removals=4, fractions=(0.3, 0.7), seed=9)
    both = pt.robustness_by_draw(qrels, aspects, **kw)
    assert list(both) == list(pt.SYSTEM_DRAWS)
    for d in pt.SYSTEM_DRAWS:
        pd.testing.assert_frame_equal(both[d], pt.robustness(qrels, aspects, systems=d, **kw), check_exact=True)
        pd.testing.assert_frame_equal(pt.robustness_by_draw(qrels, aspects, draws=[d], **kw)[d], both[d],
                                      check_exact=True)
    once, fresh = both["once"], both["per-removal"]
    first = once.removal == 0
    assert once[first].equals(fresh[first]) and not once[~first]["tau"].equals(fresh[~first]["tau"])
    with pytest.raises(InputError, match="draws must be among"):
        pt.robustness_by_draw(qrels, aspects, draws=["twice"], **kw)
    with pytest.raises(InputError, match="draws must be among"):
        pt.robustness_by_draw(qrels, aspects, draws=[], **kw)
    with pytest.raises(InputError, match="systems must be one of"):
        pt.robustness(qrels, aspects, systems="twice", **kw)
    with pytest.raises(TypeError, match="'systems'"):
        pt.robustness_by_draw(qrels, aspects, systems="once", **kw)
    # the defaults are robustness' own
    small = dict(cutoffs=(3,), betas=(0.5,), n_systems=3, n_removals=2, fractions=(0.5,))
    pd.testing.assert_frame_equal(pt.robustness_by_draw(qrels, aspects, draws=["once"], **small)["once"],
                                  pt.robustness(qrels, aspects, **small), check_exact=True)


@pytest.mark.parametrize("seed", range(10))
def test_aspects_rated_at_least_equals_the_one_at_a_time_or(seed):
    # grouped rows (judgments_from_qrels' order) take the per-group path, ungrouped rows the other
    rng = np.random.default_rng(seed)
    n, c, N = 6, int(rng.integers(0, 4)), int(rng.integers(0, 30))
    row = np.sort(rng.integers(0, n, N)) if seed % 2 else rng.integers(0, n, N)
    jd = dv.Judgments(row, np.arange(N), rng.choice([0.0, 1.0, 4.0, 5.0], N), rng.random((N, c)) < 0.5, n)
    for minimum, strict in ((4.0, False), (0.0, True)):
        want = np.zeros((n, c), dtype=bool)
        sel = jd.ratings > minimum if strict else jd.ratings >= minimum
        np.logical_or.at(want, jd.row[sel], jd.member[sel])
        assert np.array_equal(dv.aspects_rated_at_least(jd, minimum, strict), want)


def test_test_profile_weights_shared_by_runs_still_warn_and_stay_unfilled():
    # two runs judged against one Qrels share γ (profile=test); the user without a rated aspect is
    # named by a warning on every run, and the shared Eq. 9 table keeps its NaN row (filled per call)
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "n"], "rating": [5.0, 3.0, 4.0]}))
    aspects = {"a": ("x",), "b": ("y",), "n": ()}
    first = rm.judge(rm.Run.from_lists({1: ["a", "b"], 2: ["n"]}), qrels)
    second = rm.judge(rm.Run.from_lists({1: ["b", "a"], 2: ["n"]}), qrels)
    for j in (first, second):
        with pytest.warns(UserWarning, match=r"1 user\(s\) have no rated item with an aspect.*e\.g\. 2"):
            w = dv.aspect_weights(j, aspects, profile="test")
        assert w.tolist() == [[0.625, 0.375], [0.5, 0.5]]
    jd = dv.judgments_of(first, aspects)
    assert jd is dv.judgments_of(second, aspects)
    from recmetrics.metrics.diversity.weights import _test_weights
    assert np.isnan(_test_weights(jd, 2)[1]).all()
