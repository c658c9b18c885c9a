"""Aspect-aware metrics: hand-computed cases, loop references, ndeval parity, bad input."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.judged import judge
from recmetrics.metrics import diversity as dv
from recmetrics.metrics import parse

R_MAX = 5.0


# ------------------------------------------------------------------------------------------
# loop references, written from the papers' definitions (one user, plain Python)
# ------------------------------------------------------------------------------------------
def weights_eq9(profile_ratings, aspects, labels):
    """Eq. 9 over (item, rating) pairs."""
    mass = {a: 0.0 for a in labels}
    for item, r in profile_ratings:
        for a in aspects.get(item, ()):
            mass[a] += r
    tot = sum(mass.values())
    if tot <= 0:
        return {a: 1.0 / len(labels) for a in labels}
    return {a: m / tot for a, m in mass.items()}


def ab_dcg_ref(ranking, ratings, aspects, gamma, alpha, beta, k):
    seen = {a: 1.0 for a in gamma}          # prod_{j<k} 1 - P(a|u,i_j)
    dcg = 0.0
    for pos, item in enumerate(ranking[:k], start=1):
        r = ratings.get(item)
        p = alpha if r is None else beta * r / R_MAX
        keep = 1.0
        for a in aspects.get(item, ()):
            keep *= 1.0 - p * gamma[a] * seen[a]
        dcg += (1.0 - keep) / math.log2(pos + 1)
        for a in aspects.get(item, ()):
            seen[a] *= 1.0 - p
    return dcg


def ab_idcg_ref(ratings, aspects, gamma, alpha, beta, k):
    """Greedy over the judged items; ties to the largest item id string (ndeval's rule)."""
    left = sorted(ratings, key=str, reverse=True)
    seen = {a: 1.0 for a in gamma}
    idcg = 0.0
    for pos in range(1, k + 1):
        if not left:
            break
        best, best_g = None, -1.0
        for item in left:
            p = beta * ratings[item] / R_MAX
            keep = 1.0
            for a in aspects.get(item, ()):
                keep *= 1.0 - p * gamma[a] * seen[a]
            if 1.0 - keep > best_g:
                best, best_g = item, 1.0 - keep
        idcg += best_g / math.log2(pos + 1)
        p = beta * ratings[best] / R_MAX
        for a in aspects.get(best, ()):
            seen[a] *= 1.0 - p
        left.remove(best)
    return idcg


def alpha_dcg_ref(ranking, ratings, aspects, alpha, k):
    seen = {}
    dcg = 0.0
    for pos, item in enumerate(ranking[:k], start=1):
        J = (ratings.get(item) or 0.0) / R_MAX
        g = sum(J * seen.get(a, 1.0) for a in aspects.get(item, ()))
        dcg += g / math.log2(pos + 1)
        for a in aspects.get(item, ()):
            seen[a] = seen.get(a, 1.0) * (1.0 - alpha * J)
    return dcg


def err_ia_ref(ranking, ratings, aspects, gamma, k):
    total = 0.0
    for a, w in gamma.items():
        reach, err = 1.0, 0.0
        for pos, item in enumerate(ranking[:k], start=1):
            r = ratings.get(item)
            R = (2 ** r - 1) / 2 ** R_MAX if (r is not None and a in aspects.get(item, ())) else 0.0
            err += reach * R / pos
            reach *= 1.0 - R
        total += w * err
    return total


def utility_ref(ranking, ratings, aspects, gamma, p, e, alpha, k, per_aspect=False):
    """EU (alpha given) or RBU (alpha None): (1-p) sum_k p^(k-1) (sum_a w_a g D_a - e).

    per_aspect: grades divided by 2^(highest grade of the aspect among the judged items), the rule
    of the RBU authors' code (jCarrilloDeAlbornoz/RBU, RBU.java); else by 2^R_MAX."""
    top = {a: max((r for i, r in ratings.items() if a in aspects.get(i, ())), default=None) for a in gamma}
    seen = {a: 1.0 for a in gamma}
    total = 0.0
    for pos, item in enumerate(ranking[:k], start=1):
        r = ratings.get(item)
        gain = 0.0
        for a in aspects.get(item, ()):
            scale = top[a] if per_aspect else R_MAX
            g = (2 ** r - 1) / 2 ** scale if r is not None else 0.0
            gain += gamma[a] * g * seen[a]
            seen[a] *= 1.0 - (g if alpha is None else alpha * g)
        total += p ** (pos - 1) * (gain - e)
    return (1.0 - p) * total


def s_recall_ref(ranking, ratings, aspects, k, threshold=4.0):
    user = {a for i, r in ratings.items() if r >= threshold for a in aspects.get(i, ())}
    shown = {a for i in ranking[:k] if ratings.get(i, -1) >= threshold for a in aspects.get(i, ())}
    return len(user & shown) / len(user) if user else 0.0


def s_rr_ref(ranking, ratings, aspects, threshold=4.0):
    user = {a for i, r in ratings.items() if r >= threshold for a in aspects.get(i, ())}
    shown = set()
    for pos, i in enumerate(ranking, start=1):
        if ratings.get(i, -1) >= threshold:
            shown |= set(aspects.get(i, ()))
        if user and user <= shown:
            return 1.0 / pos
    return 0.0


def ndcg_ia_ref(ranking, ratings, aspects, gamma, k):
    total = 0.0
    for a, w in gamma.items():
        dcg = sum((ratings.get(i) or 0.0) / math.log2(pos + 1)
                  for pos, i in enumerate(ranking[:k], start=1) if a in aspects.get(i, ()))
        ideal = sorted((r for i, r in ratings.items() if a in aspects.get(i, ()) and r > 0), reverse=True)[:k]
        idcg = sum(r / math.log2(pos + 1) for pos, r in enumerate(ideal, start=1))
        total += w * (dcg / idcg if idcg > 0 else 0.0)
    return total


# ------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------
ASPECTS = {"a": ("x",), "b": ("y",), "c": ("x", "y"), "d": (), "e": ("z",), "f": ("x", "z")}
RATINGS = {"a": 5.0, "b": 3.0, "c": 4.0, "e": 1.0}
WEIGHTS = {"x": 0.5, "y": 0.3, "z": 0.2}


def score(metric, ranking, ratings=RATINGS, aspects=ASPECTS, weights=WEIGHTS):
    return float(dv.score_lists([ranking], ratings, aspects, [metric], profile=weights).iloc[0, 0])


def test_ab_ndcg_hand_computed():
    # a (x, r=5): P=.5 -> G1 = .5*.5 = .25; b (y, r=3): P=.3 -> G2 = .3*.3 = .09;
    # c (x,y, r=4): P=.4, R_x=.5, R_y=.7 -> G3 = 1 - (1-.4*.5*.5)(1-.4*.3*.7) = .1756
    dcg = 0.25 + 0.09 / math.log2(3) + 0.1756 / 2
    # greedy ideal: c (.296), then a (.5*.5*.6 = .15), then b (.3*.3*.6 = .054)
    idcg = 0.296 + 0.15 / math.log2(3) + 0.054 / 2
    assert score("ab-nDCG@3", ["a", "b", "c"]) == pytest.approx(dcg / idcg, abs=1e-12)
    assert score("ab-nDCG@3", ["c", "a", "b"]) == pytest.approx(1.0, abs=1e-12)


def test_paper_default_parameters_and_names():
    spec = parse("ab-nDCG@10(alpha=0.005,beta=0.5)")
    assert dict(spec.params)["alpha"] == 0.005 and dict(spec.params)["beta"] == 0.5
    assert str(spec) == "ab-nDCG@10"
    assert str(parse("ab-nDCG@10(beta=0.9,profile=test)")) == "ab-nDCG@10(beta=0.9,profile='test')"
    assert dict(parse("NRBP").params) == {"alpha": 0.25, "beta": 0.9, "max_rating": 0.0}
    assert dict(parse("EU").params)["e"] == 0.05 and dict(parse("EU").params)["alpha"] == 0.25
    assert dict(parse("RBU@10").params)["p"] == 0.99 and dict(parse("RBU@10").params)["e"] == 0.05
    for name in ("ab-nDCG", "a-nDCG", "S-Recall", "S-RR", "NRBP", "EU", "RBU", "ERR-IA", "P-IA", "nDCG-IA"):
        assert rm.metrics.get(name).family == "diversity"
    assert rm.metrics.get("alpha-nDCG").name == "a-nDCG"
    assert rm.metrics.get("strec").name == "S-Recall"


scene_strategy = st.fixed_dictionaries({
    "aspects": st.lists(st.frozensets(st.sampled_from("xyz"), max_size=3), min_size=6, max_size=6),
    "ratings": st.lists(st.sampled_from([None, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), min_size=6, max_size=6),
    "order": st.permutations(range(6)),
    "length": st.integers(1, 6),
    "weights": st.lists(st.integers(0, 5), min_size=3, max_size=3),
    "k": st.integers(1, 7),
})


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(scene_strategy)
def test_kernels_match_loop_references(sc):
    items = [f"i{t}" for t in range(6)]
    aspects = {i: tuple(sorted(a)) for i, a in zip(items, sc["aspects"])}
    ratings = {i: r for i, r in zip(items, sc["ratings"]) if r is not None}
    if not any(r >= 4 for r in ratings.values()):
        ratings["i0"] = 5.0
    ranking = [items[t] for t in sc["order"]][: sc["length"]]
    raw_w = dict(zip("xyz", map(float, sc["weights"])))
    if sum(raw_w.values()) == 0:
        raw_w["x"] = 1.0
    gamma = weights_eq9([(f"p{a}", w) for a, w in raw_w.items()], {f"p{a}": (a,) for a in "xyz"}, "xyz")
    k = sc["k"]
    names = [f"ab-nDCG@{k}", f"a-nDCG@{k}", f"ERR-IA@{k}", f"EU@{k}", f"RBU@{k}", f"S-Recall@{k}",
             "S-RR", f"nDCG-IA@{k}", f"NRBP@{k}", f"RBU@{k}(norm=aspect)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dv.score_lists([ranking], ratings, aspects, names, profile=raw_w).iloc[0]
    ab_i = ab_idcg_ref(ratings, aspects, gamma, 0.005, 0.5, k)
    assert got.iloc[0] == pytest.approx(ab_dcg_ref(ranking, ratings, aspects, gamma, 0.005, 0.5, k) / ab_i
                                        if ab_i > 0 else 0.0, abs=1e-10)
    assert got.iloc[2] == pytest.approx(err_ia_ref(ranking, ratings, aspects, gamma, k), abs=1e-12)
    assert got.iloc[3] == pytest.approx(utility_ref(ranking, ratings, aspects, gamma, 0.99, 0.05, 0.25, k), abs=1e-12)
    assert got.iloc[4] == pytest.approx(utility_ref(ranking, ratings, aspects, gamma, 0.99, 0.05, None, k), abs=1e-12)
    assert got.iloc[5] == pytest.approx(s_recall_ref(ranking, ratings, aspects, k), abs=1e-12)
    assert got.iloc[6] == pytest.approx(s_rr_ref(ranking, ratings, aspects), abs=1e-12)
    assert got.iloc[7] == pytest.approx(ndcg_ia_ref(ranking, ratings, aspects, gamma, k), abs=1e-12)
    n_pos = len({a for i, r in ratings.items() if r > 0 for a in aspects[i]})
    nrbp = 0.0
    seen = {}
    for pos, item in enumerate(ranking[:k], start=1):
        J = (ratings.get(item) or 0.0) / R_MAX
        nrbp += 0.9 ** (pos - 1) * sum(J * seen.get(a, 1.0) for a in aspects[item])
        for a in aspects[item]:
            seen[a] = seen.get(a, 1.0) * (1 - 0.25 * J)
    assert got.iloc[8] == pytest.approx((1 - 0.75 * 0.9) * nrbp / n_pos if n_pos else 0.0, abs=1e-12)
    assert got.iloc[9] == pytest.approx(utility_ref(ranking, ratings, aspects, gamma, 0.99, 0.05, None, k,
                                                    per_aspect=True), abs=1e-12)
    assert got.iloc[1] >= 0   # α-nDCG (and its greedy ideal) is checked against ndeval below


def test_rbu_normalises_by_the_aspects_top_grade_as_the_authors_code():
    """jCarrilloDeAlbornoz/RBU (RBU.java): REL = (2^grade - 1) / 2^(grade of the first item of the
    aspect's perfect ranking), i.e. the user's highest grade of that aspect, not 2^r_max."""
    asp = {"a": ("x",), "b": ("y",), "c": ("x",)}
    rat = {"a": 3.0, "b": 5.0, "c": 2.0}
    w = {"x": 0.6, "y": 0.4}
    p, e = 0.99, 0.05
    # x's top grade is 3: a -> 7/8, c -> 3/8; y's is 5: b -> 31/32. Ranking a, c, b:
    gain = [0.6 * 7 / 8, 0.6 * 3 / 8 * (1 - 7 / 8), 0.4 * 31 / 32]
    rbu = (1 - p) * sum(p ** t * (g - e) for t, g in enumerate(gain))
    kw = dict(ratings=rat, aspects=asp, weights=w)
    assert score("RBU@3(norm=aspect)", ["a", "c", "b"], **kw) == pytest.approx(rbu, abs=1e-12)
    gain_scale = [0.6 * 7 / 32, 0.6 * 3 / 32 * (1 - 7 / 32), 0.4 * 31 / 32]
    assert score("RBU@3", ["a", "c", "b"], **kw) == pytest.approx(
        (1 - p) * sum(p ** t * (g - e) for t, g in enumerate(gain_scale)), abs=1e-12)
    with pytest.raises(InputError, match="norm"):
        score("RBU@3(norm=max)", ["a"], **kw)


def test_ideal_ordering_tie_break_is_a_parameter():
    """Sec. 5.1 breaks rating ties "based on the number of aspects": both directions are offered."""
    from recmetrics.meta import perturbations as pt

    test = pd.DataFrame({"user": [1, 1, 1], "item": ["one", "two", "three"], "rating": [5.0, 5.0, 5.0]})
    asp = {"one": ("x",), "two": ("x", "y"), "three": ("x", "y", "z")}
    more = pt.ideal_ordering(test, asp, tie_break="more")
    fewer = pt.ideal_ordering(test, asp, tie_break="fewer")
    assert list(more.items[0]) [0] == "three" and list(fewer.items[0])[0] == "one"
    assert more.metadata["tie_break"] == "more" and fewer.metadata["tie_break"] == "fewer"
    with pytest.raises(InputError):
        pt.ideal_ordering(test, asp, tie_break="random")
    res = pt.run_perturbations(test, asp, ["NRBP"], levels={"swap": 1}, k=3, tie_break="fewer")
    assert res.metadata["tie_break"] == "fewer"


def test_hand_computed_eu_rbu_srr():
    # one aspect x with weight 1; ranking a (x, r=5), d (no aspect), c (x,y: r=4)
    asp = {"a": ("x",), "c": ("x",), "d": ()}
    rat = {"a": 5.0, "c": 4.0, "d": 0.0}
    g5, g4 = 31 / 32, 15 / 32
    p, e = 0.99, 0.05
    eu = (1 - p) * ((g5 - e) + p * (0 - e) + p ** 2 * (g4 * (1 - 0.25 * g5) - e))
    rbu = (1 - p) * ((g5 - e) + p * (0 - e) + p ** 2 * (g4 * (1 - g5) - e))
    kw = dict(ratings=rat, aspects=asp, weights={"x": 1.0})
    assert score("EU", ["a", "d", "c"], **kw) == pytest.approx(eu, abs=1e-12)
    assert score("RBU@3", ["a", "d", "c"], **kw) == pytest.approx(rbu, abs=1e-12)
    # S-RR: the user's aspects {x} are covered at rank 1 by a relevant item; only at rank 3 if a is absent
    assert score("S-RR", ["a", "d", "c"], **kw) == 1.0
    assert score("S-RR", ["d", "c"], **kw) == 1.0 / 2
    assert score("S-RR", ["d"], **kw) == 0.0


# ------------------------------------------------------------------------------------------
# ndeval parity (binary judgments: ratings 0/1, r_max = 1, relevant from 1)
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def binary_case():
    rng = np.random.default_rng(7)
    items = [f"d{i}" for i in range(60)]
    aspects = {it: tuple(f"s{a}" for a in range(5) if rng.random() < 0.35) for it in items}
    qrows, runs = [], {}
    for u in range(40):
        for it in rng.choice(items, size=rng.integers(3, 25), replace=False):
            qrows.append((f"q{u}", str(it), int(rng.random() < 0.5)))
        runs[f"q{u}"] = [str(x) for x in rng.choice(items, size=rng.integers(1, 30), replace=False)]
    q = pd.DataFrame(qrows, columns=["user", "item", "rating"])
    qrels = rm.Qrels(q, threshold=1, max_rating=1)
    judged = dv.attach_judgments(judge(rm.Run.from_lists(runs), qrels, depth=30, users="all"), qrels)
    nd_q = [(r.user, a, r.item, int(r.rating)) for r in q.itertuples() for a in aspects[r.item]]
    nd_run = [(u, it, float(len(lst) - i)) for u, lst in runs.items() for i, it in enumerate(lst)]
    return judged, pd.Series(aspects), nd_q, nd_run


def test_a_users_cascade_value_does_not_depend_on_the_other_users():
    # the α-nDCG / NRBP cascade is summed per (user, aspect) from zero: a user's value is bit for bit
    # the same alone or after other users' lists (a running sum over every user carried their rounding)
    rng = np.random.default_rng(11)
    items = [f"d{i}" for i in range(80)]
    aspects = pd.Series({it: tuple(f"s{a}" for a in range(6) if rng.random() < 0.4) for it in items})
    q = pd.DataFrame([(f"q{u}", str(it), int(rng.random() < 0.6)) for u in range(60)
                      for it in rng.choice(items, size=25, replace=False)], columns=["user", "item", "rating"])
    runs = {f"q{u}": [str(x) for x in rng.choice(items, size=40, replace=False)] for u in range(60)}

    def values(users):
        qrels = rm.Qrels(q[q["user"].isin(users)], threshold=1, max_rating=1)
        judged = dv.attach_judgments(judge(rm.Run.from_lists({u: runs[u] for u in users}), qrels, depth=40,
                                           users="all"), qrels)
        return {m: dict(zip(judged.users, parse(m)(judged, aspects=aspects)))
                for m in ("a-nDCG@20(alpha=0.3)", "NRBP(alpha=0.7,beta=0.9)", "ab-nDCG@20(beta=0.6,profile=test)",
                          "ERR-IA@20(profile=test)", "EU@20(profile=test)", "RBU@20(profile=test)", "S-RR@20", "S-Recall@20",
                          "nDCG-IA@20(profile=test)", "P-IA@20(profile=test)")}

    every = values(list(runs))
    for u in ("q59", "q33", "q7"):
        alone = values([u])
        for m in alone:
            assert alone[m][u] == every[m][u], (m, u, alone[m][u] - every[m][u])


@pytest.mark.parametrize("alpha,beta", [(0.5, 0.5), (0.25, 0.9), (0.1, 0.3)])
def test_ndeval_parity(binary_case, alpha, beta):
    pyndeval = pytest.importorskip("pyndeval")
    judged, aspects, nd_q, nd_run = binary_case
    measures = [f"{m}@{k}" for m in ("alpha-nDCG", "strec", "P-IA", "ERR-IA") for k in (5, 10, 20)] + ["NRBP"]
    res = pyndeval.ndeval(nd_q, nd_run, measures=measures, alpha=alpha, beta=beta)
    empty = pd.DataFrame({"user": [], "item": [], "rating": []})

    def nd(m):
        return np.array([res.get(u, {}).get(m, 0.0) for u in judged.users])

    for k in (5, 10, 20):
        np.testing.assert_allclose(parse(f"a-nDCG@{k}(alpha={alpha})")(judged, aspects=aspects),
                                   nd(f"alpha-nDCG@{k}"), atol=1e-12)
        np.testing.assert_allclose(parse(f"S-Recall@{k}")(judged, aspects=aspects), nd(f"strec@{k}"), atol=1e-12)
        np.testing.assert_allclose(parse(f"P-IA@{k}(profile=uniform)")(judged, aspects=aspects, train=empty),
                                   nd(f"P-IA@{k}"), atol=1e-12)
        # ndeval's ERR-IA: stop probability alpha per subtopic (= (2^1-1)/2^1 only for alpha = .5),
        # divided by the "ideal ideal" sum_{i<=k} |S| (1-alpha)^(i-1) / i
        scale = alpha * sum((1 - alpha) ** (i - 1) / i for i in range(1, k + 1))
        ours = parse(f"ERR-IA@{k}(profile=uniform)")(judged, aspects=aspects, train=empty)
        if alpha == 0.5:
            np.testing.assert_allclose(ours, scale * nd(f"ERR-IA@{k}"), atol=1e-12)
        else:   # equal only at alpha = 0.5 (as the docstring says)
            assert np.abs(ours - scale * nd(f"ERR-IA@{k}")).max() > 1e-3
    np.testing.assert_allclose(parse(f"NRBP(alpha={alpha},beta={beta})")(judged, aspects=aspects),
                               nd("NRBP"), atol=1e-12)


# ------------------------------------------------------------------------------------------
# properties and conventions
# ------------------------------------------------------------------------------------------
def test_greedy_ideal_scores_one_and_bounds():
    rng = np.random.default_rng(3)
    items = [f"i{t}" for t in range(12)]
    aspects = {i: tuple(a for a in "xyzw" if rng.random() < 0.4) for i in items}
    ratings = {i: float(rng.integers(0, 6)) for i in items[:9]}
    ratings["i0"] = 5.0
    weights = {"x": 0.4, "y": 0.3, "z": 0.2, "w": 0.1}
    gamma = weights_eq9([(f"p{a}", w) for a, w in weights.items()], {f"p{a}": (a,) for a in weights}, weights)
    # rebuild the greedy ideal order from the reference and score it
    left, seen, order = sorted(ratings, key=str, reverse=True), {a: 1.0 for a in gamma}, []
    while left:
        def gain(i):
            p = 0.5 * ratings[i] / 5
            return 1 - np.prod([1 - p * gamma[a] * seen[a] for a in aspects[i]] or [1.0])
        best = max(left, key=lambda i: (gain(i), -left.index(i)))
        order.append(best)
        left.remove(best)
        for a in aspects[best]:
            seen[a] *= 1 - 0.5 * ratings[best] / 5
    assert score("ab-nDCG@9", order, ratings, aspects, weights) == pytest.approx(1.0, abs=1e-12)
    vals = dv.score_lists([list(rng.permutation(items[:9])) for _ in range(20)], ratings, aspects,
                          ["ab-nDCG@9", "a-nDCG@9", "S-Recall@9", "NRBP", "ERR-IA@9", "P-IA@9"], profile=weights)
    assert ((vals >= 0) & (vals <= 1 + 1e-9)).all().all()


def test_items_without_aspects_contribute_nothing():
    base = score("ab-nDCG@4", ["a", "b"])
    # an aspect-less item (d) and an item absent from the mapping (zz) take a rank but add no gain
    assert score("ab-nDCG@4", ["a", "b", "d", "zz"]) == pytest.approx(base, abs=1e-15)
    assert score("a-nDCG@4", ["a", "b", "d", "zz"]) == pytest.approx(score("a-nDCG@4", ["a", "b"]), abs=1e-15)
    # ... but they still cost e in EU / RBU
    assert score("RBU@4", ["a", "b", "d"]) < score("RBU@4", ["a", "b"])


def test_missing_rating_gets_alpha_and_rated_zero_gets_nothing():
    asp = {"j": ("x",), "k": ("x",), "top": ("x",)}
    rated = {"top": 5.0, "j": 0.0}
    w = {"x": 1.0}
    zero = score("ab-nDCG@2", ["top", "j"], rated, asp, w)
    missing = score("ab-nDCG@2", ["top", "k"], rated, asp, w)
    # k unrated: P = alpha = .005, R_x = .5 after "top" -> gain .0025 at rank 2
    idcg = 0.5  # judged items: top (gain .5), j (gain 0)
    assert zero == pytest.approx(1.0)
    assert missing == pytest.approx((0.5 + 0.005 * 0.5 / math.log2(3)) / idcg)
    assert missing > 1.0   # documented: unjudged items can push αβ-nDCG above 1


def test_users_without_rated_aspects_fall_back_with_warning():
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rating": [5.0, 3.0, 4.0]}))
    j = dv.attach_judgments(judge(rm.Run.from_lists({1: ["a", "b"], 2: ["b", "a"]}), qrels), qrels)
    train = pd.DataFrame({"user": [1, 2], "item": ["c", "d"], "rating": [4.0, 5.0]})   # d has no aspect
    asp = pd.Series({"a": ("x",), "b": ("y",), "c": ("x",), "d": ()})
    with pytest.warns(UserWarning, match="1 user"):
        w = dv.aspect_weights(j, asp, train, "train")
    np.testing.assert_allclose(w, [[1.0, 0.0], [0.5, 0.5]])
    with pytest.warns(UserWarning):
        v = parse("ab-nDCG@2")(j, aspects=asp, train=train.iloc[:0])
    assert np.isfinite(v).all()


def test_profiles_train_test_uniform():
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rating": [5.0, 3.0, 4.0]}))
    j = dv.attach_judgments(judge(rm.Run.from_lists({1: ["a"]}), qrels), qrels)
    asp = pd.Series({"a": ("x",), "b": ("y",), "c": ("x", "y"), "t": ("y",)})
    train = pd.DataFrame({"user": [1], "item": ["t"], "rating": [2.0]})
    np.testing.assert_allclose(dv.aspect_weights(j, asp, train, "train"), [[0.0, 1.0]])
    np.testing.assert_allclose(dv.aspect_weights(j, asp, None, "test"), [[9 / 16, 7 / 16]])   # Eq. 9 on a, b, c
    np.testing.assert_allclose(dv.aspect_weights(j, asp, None, "uniform"), [[0.5, 0.5]])     # relevant: a, c


@pytest.mark.parametrize("metric", ["ab-nDCG@3(alpha=0)", "ab-nDCG@3(alpha=1.5)", "ab-nDCG@3(beta=0)",
                                    "ab-nDCG@3(beta=2)", "a-nDCG@3(alpha=-0.1)", "NRBP(beta=0)",
                                    "EU(p=1)", "RBU(e=-1)", "ab-nDCG@3(profile=nope)", "EU(alpha=1.01)"])
def test_parameters_out_of_range_raise(metric):
    with pytest.raises(InputError):
        score(metric, ["a", "b"])


@pytest.mark.parametrize("metric", ["ERR-IA@3", "ab-nDCG@3", "a-nDCG@3", "NRBP", "EU", "RBU@3",
                                    "RBU@3(norm=aspect)"])
def test_max_rating_below_the_top_grade_is_rejected_naming_user_and_item(metric):
    """ERR-IA@3(max_rating=4) gave 1.125 > 1 and αβ-nDCG 1.015: a gain r/r_max or (2^r-1)/2^r_max above
    1 is no probability. Rejected as ERR and Qrels reject it, naming the user and item with the larger
    grade; a max_rating at or above every grade (a dataset's declared scale) is accepted."""
    qrels = rm.Qrels(pd.DataFrame({"user": [7, 7, 8], "item": ["a", "b", "c"], "rating": [5.0, 4.0, 4.5]}))
    run = rm.Run.from_lists({7: ["a", "b"], 8: ["c"]})
    aspects = pd.Series({"a": ("x",), "b": ("y",), "c": ("x", "y"), "z": ("x", "y")})
    train = pd.DataFrame({"user": [7, 8], "item": ["z", "z"], "rating": [3.0, 4.0]})

    def value(name):
        return rm.evaluate(run, qrels, [name], aspects=aspects, train=train).per_user.iloc[:, 0]

    with_param = (lambda r: metric[:-1] + f",max_rating={r})") if "(" in metric else (lambda r: metric + f"(max_rating={r})")
    with pytest.raises(InputError, match=r"max_rating=4 is below the grade 5 user 7 gave item 'a'; 2 judgment"):
        value(with_param(4))
    with pytest.raises(InputError, match=r"max_rating=4.9 is below the grade 5 user 7 gave item 'a'; 1 judgment"):
        value(with_param(4.9))
    default = value(metric)
    np.testing.assert_allclose(value(with_param(5)), default)    # the qrels' max_rating is 5
    assert (value(with_param(10)) <= default + 1e-12).all()       # a larger scale never raises a gain


def test_max_rating_above_every_grade_of_the_evaluated_users_is_accepted():
    # the qrels are declared on a 1-10 scale; the evaluated user's grades stop at 5
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rating": [5.0, 3.0]}), max_rating=10)
    run = rm.Run.from_lists({1: ["a", "b"]})
    v = rm.evaluate(run, qrels, ["ERR-IA@2(max_rating=5)"], aspects=pd.Series({"a": ("x",), "b": ("x",), "c": ("x",)}),
                    train=pd.DataFrame({"user": [1], "item": ["c"], "rating": [4.0]})).per_user.iloc[0, 0]
    assert 0 < v <= 1


def test_alpha_beta_of_one_are_allowed_and_the_greedy_ideal_can_be_beaten():
    # beta = 1: rated 5 saturates its aspect at once; greedy takes c (gain .544) then a, but a, b, c
    # collects more (documented: the greedy ideal approximates an NP-complete optimum)
    v = score("ab-nDCG@3(alpha=1,beta=1)", ["a", "b", "c"])
    ref = ab_dcg_ref(["a", "b", "c"], RATINGS, ASPECTS, WEIGHTS, 1, 1, 3) / ab_idcg_ref(RATINGS, ASPECTS, WEIGHTS, 1, 1, 3)
    assert v == pytest.approx(ref) and v > 1


def test_cutoff_beyond_the_list_and_beyond_the_judged_depth():
    # lists shorter than k: the missing ranks contribute nothing (the ideal still has k ranks)
    short = score("ab-nDCG@6", ["a"])
    g = 0.5 * 0.5
    ideal = ab_idcg_ref(RATINGS, ASPECTS, WEIGHTS, 0.005, 0.5, 6)
    assert short == pytest.approx(g / ideal)
    qrels = rm.Qrels(pd.DataFrame({"user": [1], "item": ["a"], "rating": [5.0]}))
    j = dv.attach_judgments(judge(rm.Run.from_lists({1: ["a", "b"]}), qrels), qrels)   # depth 2
    with pytest.raises(InputError, match="cut-off 5 exceeds"):
        parse("ab-nDCG@5")(j, aspects=pd.Series(ASPECTS), train=pd.DataFrame(columns=["user", "item", "rating"]))


@pytest.mark.filterwarnings("ignore:.*fall back to the uniform")
def test_users_without_a_list_score_zero_and_judged_without_qrels_raises():
    qrels = rm.Qrels(pd.DataFrame({"user": [1, 2], "item": ["a", "b"], "rating": [5.0, 4.0]}))
    run = rm.Run.from_lists({1: ["a", "b"]})
    j = judge(run, qrels, depth=3)
    asp = pd.Series(ASPECTS)
    v = parse("a-nDCG@3")(j, aspects=asp)
    assert v[1] == 0.0 and v[0] == pytest.approx(1.0)
    for m in ("ab-nDCG@3", "EU", "RBU@3", "ERR-IA@3", "nDCG-IA@3", "P-IA@3", "S-RR", "NRBP"):
        assert parse(m)(j, aspects=asp, train=pd.DataFrame(columns=["user", "item", "rating"]))[1] == 0.0

    class Bare:   # a judged-like object that did not keep its Qrels
        users, metadata, __dict__ = np.array([1]), {}, {}
    with pytest.raises(InputError, match="Qrels"):
        dv.judgments_of(Bare(), asp)


def test_bad_aspects_and_train():
    with pytest.raises(InputError, match="more than once"):
        dv.aspect_index(pd.Series([("x",), ("y",)], index=["a", "a"]))
    with pytest.raises(InputError, match="not a tuple"):
        dv.aspect_index(pd.Series({"a": 3}))
    with pytest.raises(InputError):
        dv.aspect_index(None)
    idx = dv.aspect_index({"a": "x", "b": None, "c": ["x", "y"]})   # str = one label, None = none
    assert list(idx.labels) == ["x", "y"] and idx.lookup(["a", "b", "c", "zz"]).sum(axis=1).tolist() == [1, 0, 2, 0]
    qrels = rm.Qrels(pd.DataFrame({"user": [1], "item": ["a"], "rating": [5.0]}))
    j = dv.attach_judgments(judge(rm.Run.from_lists({1: ["a"]}), qrels), qrels)
    with pytest.raises(InputError, match="lacks column"):
        parse("ab-nDCG@1")(j, aspects=pd.Series(ASPECTS), train=pd.DataFrame({"user": [1]}))
    with pytest.raises(InputError, match="needs aspects="):
        parse("ab-nDCG@1")(j, train=pd.DataFrame(columns=["user", "item", "rating"]))


def test_vectorised_over_users_matches_one_by_one():
    rng = np.random.default_rng(11)
    items = [f"m{t}" for t in range(30)]
    asp = pd.Series({i: tuple(a for a in "pqrs" if rng.random() < 0.35) for i in items})
    rows = [(u, i, float(rng.integers(0, 6))) for u in range(15) for i in rng.choice(items, 8, replace=False)]
    q = pd.DataFrame(rows, columns=["user", "item", "rating"])
    qrels = rm.Qrels(q, max_rating=5.0)
    runs = {u: list(rng.choice(items, 10, replace=False)) for u in range(15)}
    train = pd.DataFrame([(u, i, float(rng.integers(1, 6))) for u in range(15) for i in rng.choice(items, 5)],
                         columns=["user", "item", "rating"]).drop_duplicates(["user", "item"])
    metrics = ["ab-nDCG@10", "a-nDCG@5", "ERR-IA@10", "EU", "RBU@10", "nDCG-IA@10", "P-IA@10", "S-Recall@10",
               "S-RR", "NRBP"]
    j = dv.attach_judgments(judge(rm.Run.from_lists(runs), qrels, users="all"), qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        together = np.stack([parse(m)(j, aspects=asp, train=train) for m in metrics])
        for col, u in enumerate(j.users):
            qu = rm.Qrels(q[q.user == u], max_rating=5.0)
            ju = dv.attach_judgments(judge(rm.Run.from_lists({u: runs[u]}), qu, users="all"), qu)
            alone = np.array([parse(m)(ju, aspects=asp, train=train)[0] for m in metrics])
            np.testing.assert_allclose(together[:, col], alone, atol=1e-12)


def test_through_evaluate():
    ds_ratings = pd.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "c", "a"], "rating": [5.0, 2.0, 4.0, 1.0]})
    qrels = rm.Qrels(ds_ratings)
    run = rm.Run.from_lists({1: ["b", "a"], 2: ["c", "a"]})
    ev = rm.evaluate(run, qrels, ["ab-nDCG@2", "a-nDCG@2"], aspects=pd.Series(ASPECTS),
                     train=pd.DataFrame({"user": [1, 2], "item": ["f", "e"], "rating": [3.0, 4.0]}))
    assert ev.per_user.shape == (2, 2)
    assert ev.per_user["a-nDCG@2"].tolist() == pytest.approx([
        score("a-nDCG@2", ["b", "a"], {"a": 5.0, "b": 2.0}), score("a-nDCG@2", ["c", "a"], {"c": 4.0, "a": 1.0})])


def test_eu_labelled_a_reconstruction_and_err_ia_parity_scope_stated():
    table = rm.metrics.table().set_index("metric")
    assert "RECONSTRUCTION" in table.loc["EU", "description"]
    assert "reconstruction" in dv.expected_utility.__doc__
    assert "only at ndeval's α = 0.5" in table.loc["ERR-IA", "description"]
    assert "authors' code" in table.loc["RBU", "description"]


def test_paper_claims_verdicts_from_results():
    """The paper's claims (notebook 03) are data; their verdicts are computed from results."""
    from recmetrics.meta import axioms as ax
    from recmetrics.meta import findings
    from recmetrics.papers import parapar2021 as pt

    m = ["ab-nDCG@100(profile='test')", "NRBP", "EU(profile='test')", "RBU@100(profile='test')",
         "a-nDCG@100", "S-Recall@100", "S-RR"]
    tau_vals = {"swap": [1, 1, 1, 1, 1, -0.5, -0.2], "redundancy": [1, 1, 0.4, 0.5, 1, 0.1, 0.1],
                "aspect": [1, -0.78, 1, 1, 0.02, np.nan, 0.9]}
    tau = pd.DataFrame([(f, mm, t, 11) for f, ts in tau_vals.items() for mm, t in zip(m, ts)],
                       columns=["family", "metric", "tau", "n_systems"])
    shape = pd.DataFrame([(f, mm, 0.001, 1.0, 0.0 if mm.startswith("ab") or f != "aspect" else 2.0,
                           mm.startswith("ab") or f != "aspect") for f in tau_vals for mm in m],
                         columns=["family", "metric", "p_level1", "first_significant", "largest_rise", "monotone"])
    # se 0: exact numbers (an unknown se -- no column -- would leave the Exp. 3 claims undecided)
    # (τ 0.85 to 0.925: a τ of exactly 0.8, the project's 'high', would flip at 0.85 -- inconclusive, issue 25 §2)
    rob = pd.DataFrame([(k, b, f, 0.95 - 0.1 * b, 0.01, 0.0) for k in (10, 100) for b in (0.25, 1.0) for f in (0.2, 0.5)],
                       columns=["cutoff", "beta", "fraction", "tau", "sd", "se"])
    report_table = pd.DataFrame({a: [ax.PAPER_TABLE1[n.split("@")[0]][a] for n in ax.PAPER_METRICS]
                                 for a in ax.AXIOMS}, index=list(ax.PAPER_METRICS), dtype=object)
    # Exp. 2's p-values against the ideal: the subtopic metrics (S-Recall, S-RR) spot the degradations worse
    pvalues = pd.DataFrame([(f, mm, lvl, 0.3 if mm.startswith("S-") else 0.001) for f in tau_vals for mm in m
                            for lvl in (1, 2)], columns=["family", "metric", "level", "pvalue"])
    out = findings.assess(pt.paper_claims(), {"table1": report_table, "tau": tau, "pshape": shape,
                                              "robustness": rob, "pvalues": pvalues}).set_index("id")
    assert out.loc["table1-EU", "verdict"] == "not testable"           # EU is a reconstruction
    out = out.drop("table1-EU")
    assert (out.verdict == "agrees").all(), out[out.verdict != "agrees"][["our_evidence"]]
    tau.loc[(tau.family == "aspect") & (tau.metric == "NRBP"), "tau"] = 1.0
    out = findings.assess(pt.paper_claims(), {"tau": tau}).set_index("id")
    assert out.loc["exp1-aspect-nrbp-worse", "verdict"] == "inconclusive"   # NRBP ties with αβ-nDCG: no order
    tau.loc[(tau.family == "aspect") & (tau.metric == "RBU@100(profile='test')"), "tau"] = 0.5
    out = findings.assess(pt.paper_claims(), {"tau": tau}).set_index("id")
    assert out.loc["exp1-aspect-nrbp-worse", "verdict"] == "disagrees"      # RBU below NRBP
    assert out.loc["table1-ab-nDCG", "verdict"] == "inconclusive"      # not computed
