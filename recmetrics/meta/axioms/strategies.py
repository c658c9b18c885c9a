"""Generated scenes of the universal axioms (Pri, Deep, AspRel, MoreAsp, MissOverNon).

A universal axiom ("for all rankings and users ...") is searched for a counterexample among
scenes that ``hypothesis`` generates: 2-4 aspects ``g0, g1, ...`` with integer weights, 2-8 items
with random aspect sets and ratings in ``RATINGS`` (``None`` = unrated), up to two other judged
items, and one unlisted relevant item (every scene's user is an evaluated user). Each axiom's
strategy then places the items the axiom talks about as it prescribes (the formalisations are in
the docstring of :mod:`recmetrics.meta.axioms`) and draws a ``_Case``: the scene, the original
and swapped rankings and the relation the axiom expects. ``_UNIVERSAL`` maps each universal axiom
to its strategy and the shortest list it needs.

``hypothesis`` (of the ``notebooks`` extra, which the book's chapter on the axioms needs) is imported
only when a strategy is built.
"""
from __future__ import annotations

from .scenes import R_MAX, THRESHOLD, Scene, _Case, _swap

RATINGS = (None, 0, 1, 2, 3, 4, 5)


def _strategies():
    from hypothesis import strategies as st

    return st


def _base_scene(draw, st, *, zero_weights: bool, n_aspects=(2, 4), length=(2, 8), max_weight: int = 20):
    c = draw(st.integers(*n_aspects))
    labels = [f"g{i}" for i in range(c)]
    lo = 0 if zero_weights else 1
    weights = draw(st.lists(st.integers(lo, max_weight), min_size=c, max_size=c))
    if sum(weights) == 0:
        weights[0] = 1
    L = draw(st.integers(*length))
    items = [f"i{t}" for t in range(L)]
    item_aspects = [draw(st.frozensets(st.integers(0, c - 1), max_size=c)) for _ in range(L)]
    item_ratings = [draw(st.sampled_from(RATINGS)) for _ in range(L)]
    n_extra = draw(st.integers(0, 2))
    extras = [(f"x{t}", draw(st.frozensets(st.integers(0, c - 1), max_size=c)),
               draw(st.integers(0, 5))) for t in range(n_extra)]
    # the user is an evaluated user: at least one relevant judgment (here an unlisted item)
    extras.append(("x_rel", draw(st.frozensets(st.integers(0, c - 1), min_size=1, max_size=c)),
                   draw(st.integers(int(THRESHOLD), int(R_MAX)))))
    return dict(labels=labels, weights=weights, items=items, aspects=item_aspects,
                ratings=item_ratings, extras=extras)


def _scene_from(raw) -> Scene:
    labels = raw["labels"]
    aspects, ratings = {}, {}
    for it, asp, r in zip(raw["items"], raw["aspects"], raw["ratings"]):
        aspects[it] = tuple(labels[a] for a in sorted(asp))
        if r is not None:
            ratings[it] = float(r)
    for it, asp, r in raw["extras"]:
        aspects[it] = tuple(labels[a] for a in sorted(asp))
        ratings[it] = float(r)
    return Scene(aspects, ratings, {labels[a]: float(w) for a, w in enumerate(raw["weights"])})


def _pri_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        n = draw(st.integers(0, len(raw["labels"]) - 1))
        lo = draw(st.integers(0, 4))
        hi = draw(st.integers(lo + 1, 5))
        raw["aspects"][p], raw["aspects"][q] = frozenset([n]), frozenset([n])
        raw["ratings"][p], raw["ratings"][q] = lo, hi
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", ">", "original",
                     f"ranks {p + 1} and {q + 1} show only {raw['labels'][n]}, ratings {lo} < {hi}")

    return case()


def _deep_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(4, max_len))
        L = len(raw["items"])
        p = draw(st.integers(0, L - 4))
        q = draw(st.integers(p + 2, L - 2))
        n = draw(st.integers(0, len(raw["labels"]) - 1))
        lo = draw(st.integers(0, 4))
        hi = draw(st.integers(lo + 1, 5))
        for pos, r in ((p, lo), (p + 1, hi), (q, lo), (q + 1, hi)):
            raw["aspects"][pos] = frozenset([n])
            raw["ratings"][pos] = r
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "fixed_at_p": _swap(orig, p, p + 1),
                                        "fixed_at_q": _swap(orig, q, q + 1)},
                     "fixed_at_p", ">", "fixed_at_q",
                     f"p={p + 1}, q={q + 1}: ranks p, p+1, q, q+1 show only {raw['labels'][n]}, "
                     f"ratings {lo}, {hi}, {lo}, {hi}")

    return case()


def _asp_rel_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        n, n2 = draw(st.lists(st.integers(0, c - 1), min_size=2, max_size=2, unique=True))
        w = raw["weights"]
        if w[n] == w[n2]:
            w[n] += 1
        if w[n] < w[n2]:
            n, n2 = n2, n
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        r = draw(st.integers(1, 5))
        for t in range(L):
            raw["aspects"][t] = frozenset(raw["aspects"][t] - {n, n2})
        raw["aspects"][p], raw["aspects"][q] = frozenset([n]), frozenset([n2])
        raw["ratings"][p] = raw["ratings"][q] = r
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", "<", "original",
                     f"rank {p + 1} shows only {raw['labels'][n]} (w={w[n]}), rank {q + 1} only "
                     f"{raw['labels'][n2]} (w={w[n2]}), both rated {r}")

    return case()


def _more_asp_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        perm = draw(st.permutations(list(range(c))))
        w = raw["weights"]
        if c >= 3 and draw(st.booleans()):
            # boundary family: several aspects against one whose weight is one unit less than theirs
            a = draw(st.integers(2, c - 1))
            S1, S2 = set(perm[:a]), {perm[a]}
            for x in S1:
                w[x] = draw(st.integers(1, 20))
            w[perm[a]] = sum(w[x] for x in S1) - 1
        else:
            a = draw(st.integers(1, c - 1))
            b = draw(st.integers(1, c - a))
            S1, S2 = set(perm[:a]), set(perm[a:a + b])
            for x in S1 | S2:
                w[x] = max(w[x], 1)
            if sum(w[x] for x in S1) == sum(w[x] for x in S2):
                w[min(S1)] += 1
            if sum(w[x] for x in S1) < sum(w[x] for x in S2):
                S1, S2 = S2, S1
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        r = draw(st.integers(1, 5))
        for t in range(L):
            raw["aspects"][t] = frozenset(raw["aspects"][t] - S1 - S2)
        raw["aspects"][p], raw["aspects"][q] = frozenset(S1), frozenset(S2)
        raw["ratings"][p] = raw["ratings"][q] = r
        orig = list(raw["items"])
        lab = raw["labels"]
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", "<", "original",
                     f"rank {p + 1} shows {sorted(lab[x] for x in S1)} (total weight "
                     f"{sum(w[x] for x in S1)}), rank {q + 1} shows {sorted(lab[x] for x in S2)} "
                     f"(total weight {sum(w[x] for x in S2)}) of {sum(w)}, both rated {r}")

    return case()


def _miss_over_non_strategy(zero_weights: bool, max_len: int):
    st = _strategies()

    @st.composite
    def case(draw):
        raw = _base_scene(draw, st, zero_weights=zero_weights, length=(2, max_len))
        c = len(raw["labels"])
        L = len(raw["items"])
        p = draw(st.integers(0, L - 2))
        q = draw(st.integers(p + 1, L - 1))
        raw["ratings"][p] = 0
        raw["ratings"][q] = None
        raw["aspects"][q] = draw(st.frozensets(st.integers(0, c - 1), min_size=1, max_size=c))
        if zero_weights and draw(st.booleans()):
            # boundary family: the user has no interest in any aspect of the unrated item
            shown = set(raw["aspects"][q])
            if len(shown) == c:
                shown = {min(shown)}
                raw["aspects"][q] = frozenset(shown)
            for a in shown:
                raw["weights"][a] = 0
            if sum(raw["weights"]) == 0:
                raw["weights"][min(set(range(c)) - shown)] = 1
        orig = list(raw["items"])
        return _Case(_scene_from(raw), {"original": orig, "swapped": _swap(orig, p, q)},
                     "swapped", ">", "original",
                     f"rank {p + 1} is rated 0, rank {q + 1} is unrated and shows an aspect")

    return case()


_UNIVERSAL = {
    "Pri": (_pri_strategy, 2),
    "Deep": (_deep_strategy, 4),
    "AspRel": (_asp_rel_strategy, 2),
    "MoreAsp": (_more_asp_strategy, 2),
    "MissOverNon": (_miss_over_non_strategy, 2),
}
