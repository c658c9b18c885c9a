r"""The eight axioms of Parapar & Radlinski (RecSys 2021, Sec. 4.1) as executable checks.

``rm.axioms.check("Pri", "ab-nDCG@10")`` builds the rankings and user profiles the axiom
quantifies over and returns an :class:`AxiomResult`: satisfied or violated, with a concrete
example (the rankings, the user's ratings and aspect weights, and the scores).
``rm.axioms.table(metrics)`` gives the satisfaction matrix (the paper's Table 1),
``rm.axioms.evaluate(metrics)`` the full :class:`AxiomReport` with every example.

Where things are
----------------
``scenes``         :class:`Scene` (one hypothetical user), :class:`Example` (rankings, scores, verdict)
``strategies``     hypothesis strategies generating the scenes of the universal axioms
``constructions``  the constructed scenes (grids of witnesses) of the existential axioms
``checkers``       scoring scenes, the counterexample and witness searches, :class:`AxiomResult`
``definitions``    the eight axioms (:func:`pri` ... :func:`miss_over_non`), :func:`check`,
                   :func:`more_asp_threshold`
``report``         :func:`evaluate` -> :class:`AxiomReport`, :func:`table`, the paper's Table 1

How each axiom is checked
-------------------------
A *scene* is one hypothetical user: a few aspects ``g0, g1, ...`` (``A``, ``B``, ``C`` in the
constructed ones), the aspect weights :math:`w(u,a)` of the user's profile (given to the metrics
as training ratings whose Eq. 9 estimate is exactly these weights), items with aspects, and the
user's test ratings on a 0-5 scale (``r_max = 5``, relevant from 4; an item may be unrated).
The rankings an axiom compares are scored as separate users with the same judgments, so they
share one ideal and one profile. Every scene's user has at least one relevant judgment (like the
evaluated users of ``rm.evaluate``), so normalised metrics are defined. Rankings are never longer than the metric's cut-off (the
evaluated list); metrics without a cut-off get lists of up to 8 items in the universal checks
and up to 1000 in the existential ones ("a value n large enough" needs room).

*Universal* axioms (Pri, Deep, AspRel, MoreAsp, MissOverNon: "for all rankings and users ...")
are searched with ``hypothesis`` (:func:`hypothesis.find`) for a counterexample among generated
scenes: random aspects, weights, items, ratings (including unrated items) and positions, with
the items the axiom talks about placed as it prescribes. A counterexample found is shrunk to a
minimal one and reported; if none is found in ``max_examples`` scenes, the axiom is reported
satisfied. *Existential* axioms (NonPriSatAsp, TopHeav, TopHeavComp: "there is a saturation /
a depth n such that ...") are checked by direct construction over a grid of witnesses, for each
of two scenes (the listed aspects only; and a user who also likes an aspect the lists never
show); the axiom holds if every scene has a witness.

Formalisations (where the paper's wording leaves room, the choice is stated):

* **Pri** (Eq. 17): items at p < q show only aspect :math:`a_n`, both rated, :math:`r_q > r_p`;
  swapping them must increase Q.
* **Deep** (Eq. 18): four items at p, p+1, q, q+1 (q >= p+2) show only :math:`a_n`, with
  :math:`r_p = r_q < r_{p+1} = r_{q+1}`; correcting the pair at p must beat correcting it at q.
* **NonPriSatAsp** (Eq. 19): aspect B is saturated by m <= 20 relevant B-items (rating 5) at the top;
  then an A-item rated r, (gap-1) unrated-aspect fillers rated 0, and a B-item rated r + Δ;
  w(A) = w(B). Some (m, gap, r, Δ) must make the swap (B-item first) lower Q.
* **TopHeav** (Eq. 20, "n large enough"): one relevant item (rating r) then 2n-1 rated 0, against
  n rated 0 then n rated r, all showing the same aspect (so only relevance quantity and depth
  differ); for some r the first must win at the largest n the list allows (n = k/2 for a cut-off
  k, n = 500 without one): a top-heavy metric must eventually prefer the single top item.
* **TopHeavComp** (Eq. 21, "m small enough"): the same rankings; for some m (and r) the second
  must win.
* **The rating r of TopHeav / TopHeavComp** (``r_quantifier``): the paper does not say whether
  the witness may pick the relevant items' rating. ``"exists"`` (default): a witness at *some*
  r in 1..5 suffices; ``"forall"``: there must be a witness for *every* r > 0 (1..5), and every r
  without one is returned as a counterexample (e.g. αβ-nDCG with β = 0.5 violates TopHeavComp
  for every r >= 3 under ``"forall"``).
* **AspRel** (Eq. 22): equally rated (r > 0) items j above j' show only :math:`a_n` and
  :math:`a_{n'}`, with :math:`w(u,a_n) > w(u,a_{n'})`, and no other listed item shows either
  aspect (:math:`s = 0`); swapping them must decrease Q.
* **MoreAsp** (Eq. 23): equally rated (r > 0) items j above j' show disjoint aspect sets, all of
  positive weight, that no other listed item shows (so none is saturated and
  :math:`w(\vec\imath, a) = 0`); j's remaining interest :math:`\sum_{a\in j} w(u,a)` is larger;
  swapping them must decrease Q. (Eq. 23 prints the inequality of the remaining interests the
  other way round, which contradicts its own prose "the presence of the item with higher
  remaining interest yields higher quality"; we follow the prose.)
* **MissOverNon** (Eq. 24): j rated 0 above an unrated j' that shows at least one aspect;
  swapping them must increase Q.

Domain of the user's weights (``zero_weights``): by default every aspect in a scene has a
positive weight (the situation of the paper's Sec. 5, where weights come from the ground truth,
which includes the rated items themselves). With ``zero_weights=True`` generated users may have
no interest at all in some aspects (possible with a training profile), which breaks Pri and Deep
for every metric that weights aspects by the profile: a user's ratings of items whose only aspect
has weight 0 do not count.
"""
from __future__ import annotations

from .checkers import AxiomResult
from .definitions import (AXIOMS, QUANTIFIER, R_QUANTIFIERS, asp_rel, check, deep, miss_over_non,
                          more_asp, more_asp_threshold, non_pri_sat_asp, pri, top_heav, top_heav_comp)
from .report import ACCURACY_METRICS, PAPER_METRICS, PAPER_TABLE1, AxiomReport, evaluate, table
from .scenes import Example, Scene

# names of the single module this package replaced, so that old code and pickles still resolve them
from .checkers import TOLERANCE  # noqa: F401
from .scenes import R_MAX, THRESHOLD, UNBOUNDED_LENGTH, UNIVERSAL_LENGTH, _Case  # noqa: F401
from .strategies import RATINGS  # noqa: F401

__all__ = ["AXIOMS", "QUANTIFIER", "R_QUANTIFIERS", "more_asp_threshold", "PAPER_TABLE1", "PAPER_METRICS", "ACCURACY_METRICS", "Scene",
           "Example", "AxiomResult", "AxiomReport", "check", "evaluate", "table", "pri", "deep",
           "non_pri_sat_asp", "top_heav", "top_heav_comp", "asp_rel", "more_asp", "miss_over_non"]
