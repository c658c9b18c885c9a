r"""Aspect-aware metrics: accuracy and diversity together (Parapar & Radlinski, RecSys 2021).

Every kernel takes a :class:`~recmetrics.judged.Judged`, a cut-off ``k`` (None = the whole list)
and the *aspects* of the items (``aspects=``: a ``pd.Series``/mapping item id -> tuple of aspect
labels, e.g. MovieLens genres). The metrics that weight aspects by the user's interest also take
the user's *profile* (``train=``: the training ratings ``user, item, rating``). Pass both to
:func:`recmetrics.evaluate`: ``rm.evaluate(run, qrels, ["ab-nDCG@10"], aspects=ds.aspects,
train=train)``.

One idea per module; each imports only from the ones listed above it:

* :mod:`.params` — the parameter checks (``alpha``, ``beta``, ``p``, ``e``, ``profile``,
  :math:`r_{max}`) and :data:`PROFILES`;
* :mod:`.cache` — the small LRU cache (by object identity) of aspect indexes and ideals;
* :mod:`.aspects` — :class:`AspectIndex`, :func:`aspect_index`: item -> aspect membership;
* :mod:`.judgments` — the users' full test judgments with aspects (:class:`Judgments`,
  :func:`judgments_of`, :func:`judgments_from_qrels`, :func:`attach_judgments`) and the top
  rating :math:`r_{max}` checked against them;
* :mod:`.weights` — the aspect weights γ of Eq. 9 over the train / test / uniform profile
  (:func:`profile_weights`, :func:`aspect_weights`);
* :mod:`.lists` — the ranked lists as arrays, their (cell, aspect) pairs (:class:`ListPairs`,
  :func:`list_pairs`), the per-aspect redundancy cascade and the DCG :func:`discount`;
* :mod:`.ideal` — the greedy ideal ranking (:func:`greedy_ideal`) and its cache;
* :mod:`.alphabeta` — **αβ-nDCG** (Eq. 4-16): :func:`ab_gains`, :func:`ab_ideal_gains`;
* :mod:`.novelty` — **α-nDCG** and **NRBP** (Clarke et al. 2008, 2009), graded for ratings;
* :mod:`.coverage` — **S-Recall** and **S-RR** (Zhai et al. 2003);
* :mod:`.intent_aware` — **ERR-IA**, **P-IA**, **nDCG-IA** (Agrawal et al. 2009);
* :mod:`.utility` — **RBU** (Amigó et al. 2018) and **EU** (a reconstruction);
* :mod:`.handmade` — :func:`score_lists`: hand-made rankings of one user scored by any metric.

Importing the package registers its ten metrics (``ab-nDCG``, ``a-nDCG``, ``NRBP``,
``S-Recall``, ``S-RR``, ``ERR-IA``, ``P-IA``, ``nDCG-IA``, ``EU``, ``RBU``, in that order) with
:mod:`recmetrics.metrics.registry`; :mod:`recmetrics.metrics` imports it. Every public name of the
modules is importable from this package (``recmetrics.metrics.diversity.score_lists``, ...).

Notation: user :math:`u`, ranked list :math:`i_1, i_2, \dots`, aspects :math:`a_\phi`,
test rating :math:`r_{u,i}` (missing when the user did not rate :math:`i`), top rating
:math:`r_{max}` (the qrels' ``max_rating`` unless a metric's ``max_rating`` parameter is set),
aspect weights :math:`\gamma^u_\phi` (Eq. 9).

Conventions shared by every kernel (documented and tested; the modules give the others):

* **Items without aspects** (an empty tuple, or absent from ``aspects``) show no aspect: they
  contribute no aspect gain (but still take a rank, and still cost ``e`` in EU and RBU).
* **Profile** and the **fallback** of users with no rated aspect: :mod:`.weights`.
* **Ideal (greedy)** and scores above 1: :mod:`.ideal`.
* **Cut-off larger than a list**: positions past the end of a list contribute nothing (as in
  trec_eval); a cut-off deeper than the judged matrix raises
  :class:`~recmetrics.errors.InputError` (:mod:`.lists`).
* **Parameters**: ``alpha`` and ``beta`` (and NRBP's ``alpha``, ``beta``; EU's ``alpha``) must be
  in (0, 1]; RBU/EU's persistence ``p`` in (0, 1); the effort ``e`` >= 0; anything else raises
  :class:`~recmetrics.errors.InputError` (:mod:`.params`).
* **Top rating** :math:`r_{max}`: the metric's ``max_rating``, else the qrels' ``max_rating``
  (declare the dataset's scale there: ``rm.Qrels(test, max_rating=ds.rating_scale[1])``, not the
  test split's largest rating). A ``max_rating`` below a grade of an evaluated user raises
  :class:`~recmetrics.errors.InputError` naming the user and the item (:mod:`.judgments`), as
  ``ERR`` and ``Qrels`` do: the gains are probabilities.
"""
from __future__ import annotations

from .params import PROFILES
from .aspects import AspectIndex, aspect_index
from .judgments import (Judgments, aspects_rated_at_least, attach_judgments, judgments_from_qrels,
                        judgments_of)
from .weights import aspect_weights, profile_weights
from .lists import ListPairs, discount, list_pairs
from .ideal import greedy_ideal
# the kernels: importing them registers the metrics, in this order
from .alphabeta import ab_gains, ab_ideal_gains, ab_item_probability, ab_ndcg
from .novelty import alpha_gains, alpha_ideal_gains, alpha_ndcg, nrbp
from .coverage import s_recall, s_rr
from .intent_aware import err_ia, ndcg_ia, p_ia
from .utility import RBU_NORMS, aspect_top_grades, expected_utility, rank_biased_utility
from .handmade import PROFILE_PREFIX, score_lists

__all__ = [
    "PROFILES", "AspectIndex", "aspect_index", "attach_judgments", "judgments_of", "Judgments",
    "judgments_from_qrels", "profile_weights", "aspect_weights", "list_pairs", "ListPairs", "ab_gains", "ab_ideal_gains", "alpha_gains", "alpha_ideal_gains",
    "greedy_ideal", "score_lists", "discount",
]
