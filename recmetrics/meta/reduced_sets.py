"""Reduced test sets for the robustness study (:mod:`recmetrics.meta.robustness`): one fold's
judgments and what each incompleteness scenario samples from (:class:`_Fold`); a subset of a
:class:`~recmetrics.data.qrels.Qrels` without re-validating it (:func:`_subset_qrels`); a judged run
re-judged against such a subset by masking its judged positions, never looking a list up again
(:func:`mask_judged`); and the engine that scores every system on a sample at once, re-scoring
only the users a sample changes (:class:`_Context`). Masking equals re-judging from scratch, and
the shared work leaves every value bit-identical to scoring each sample alone (both tested).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..arrays import ranges
from ..data.qrels import Qrels
from ..errors import InputError
from ..judged import Hits, Judged


class _Fold:
    """One fold's judgments in storage order, with what the scenarios sample from."""

    def __init__(self, qrels: Qrels, profile: pd.Series | None):
        self.qrels = qrels
        self.frame = qrels.to_frame()
        # the frame's user and item codes (its rows are the storage order: no id look-up needed)
        self.ucodes = np.asarray(qrels._ucodes, dtype=np.intp)
        self.icodes = np.asarray(qrels._icodes, dtype=np.intp)
        self.keys = self.ucodes.astype(np.int64) * len(qrels.item_index) + self.icodes
        self.item_pop = np.bincount(self.icodes, minlength=len(qrels.item_index))
        users = qrels.user_index.to_numpy()
        prof = profile.reindex(users).fillna(0).to_numpy() if profile is not None else None
        self.user_size = prof if prof is not None else np.bincount(self.ucodes, minlength=len(users))

    def keep(self, scenario: str, size: float, rng: np.random.Generator) -> np.ndarray:
        """Which judgments (storage order) one sample of ``scenario`` at ``size`` keeps."""
        codes, sel = self.select(scenario, size, rng)
        return sel if codes is None else sel[codes]

    def order(self, scenario: str, rng: np.random.Generator) -> np.ndarray:
        """popular-items / large-users: item or user codes from the smallest count to the largest
        (removal takes them from the end), equal counts in a random order drawn from ``rng``."""
        weight = self.item_pop if scenario.endswith("items") else self.user_size
        return np.lexsort((rng.random(len(weight)), weight))

    def select(self, scenario: str, size: float, rng: np.random.Generator) -> tuple[np.ndarray | None, np.ndarray]:
        """``(codes, kept)``: for the item and user scenarios the judgments' item or user codes and
        which codes are kept; for ``ratings`` ``(None, kept judgments)``."""
        n = len(self.frame)
        if scenario == "ratings":
            keep = np.zeros(n, dtype=bool)
            keep[rng.choice(n, size=max(1, int(round(size * n))), replace=False)] = True
            return None, keep
        by_item = scenario.endswith("items")
        codes, count = (self.icodes, len(self.item_pop)) if by_item else (self.ucodes, len(self.user_size))
        k = max(1, int(round(size * count)))
        if scenario.startswith("random"):
            sel = np.zeros(count, dtype=bool)
            sel[rng.choice(count, size=k, replace=False)] = True
            return codes, sel
        return codes, self.first(scenario, k, rng)

    def first(self, scenario: str, k: int, rng: np.random.Generator) -> np.ndarray:
        """Which codes ``order(scenario, rng)[:k]`` holds (a mask; the same draw from ``rng``), without
        sorting them all: every code of a count below the ``k``-th smallest, and the codes of that
        count first in the random order (ties by code, as :func:`numpy.lexsort` breaks them)."""
        weight = self.item_pop if scenario.endswith("items") else self.user_size
        key = rng.random(len(weight))
        memo = self.__dict__.setdefault("_sorted", {})
        if scenario not in memo:
            memo[scenario] = np.sort(weight)
        at = memo[scenario][k - 1]
        sel = weight < at
        tied = np.flatnonzero(weight == at)
        sel[tied[np.argsort(key[tied], kind="stable")[:k - int(sel.sum())]]] = True
        return sel


def _subset_qrels(qrels: Qrels, keep: np.ndarray, users: np.ndarray | None = None) -> Qrels:
    """The judgments of ``qrels`` where ``keep`` (storage order, as :meth:`Qrels.to_frame`), without
    re-validating or re-sorting: a subset of sorted storage stays sorted, and the user/item indices
    are kept (a user left without judgments has zero counts). Equal, metric for metric, to
    ``Qrels(qrels.to_frame()[keep], ...)`` (tested); ~10x cheaper at ML-1M scale. ``users``
    (ascending user codes): only these users' judgments, read from their ranges of the storage
    (sorted by user), so the cost follows their judgments, not the fold's."""
    out = Qrels.__new__(Qrels)
    out.threshold, out.max_rating, out.negative = qrels.threshold, qrels.max_rating, qrels.negative
    out.user_index, out.item_index = qrels.user_index, qrels.item_index
    order = qrels._desc_order  # the parent's (user, rating descending) order, restricted to the subset
    if users is None:  # positions, then takes: cheaper than boolean indexing each array
        idx, desc = np.flatnonzero(keep), order.take(np.flatnonzero(keep.take(order)))
    else:
        counts, starts = qrels._offsets
        pos = ranges(starts[users], counts[users])   # the users' storage positions, also their blocks of `order`
        idx, desc = pos[keep[pos]], order[pos]
        desc = desc[keep[desc]]
    out._ucodes, out._icodes = qrels._ucodes.take(idx), qrels._icodes.take(idx)
    out._ratings, out._keys = qrels._ratings.take(idx), qrels._keys.take(idx)
    out.__dict__["_desc"] = qrels._ratings.take(desc)
    return out


def _hit_sources(j: Judged, fold: _Fold) -> np.ndarray:
    """Index (in ``fold.frame``) of the judgment behind each judged position of ``j``: kept in its
    metadata when the run's lists were dropped (:mod:`recmetrics.prepared`), else read from the run."""
    from ..judged import judgment_index

    sources = j.metadata.get("sources")
    return np.asarray(sources, dtype=np.int64) if sources is not None else judgment_index(j)


def mask_judged(j: Judged, hit_keep: np.ndarray, qrels: Qrels, users: np.ndarray | None = None, *,
                codes: np.ndarray | None = None, sources: np.ndarray | None = None) -> Judged:
    """``j`` re-judged against ``qrels`` (a subset of its judgments): keep the judged positions where
    ``hit_keep``, restrict to ``users`` (rows of ``j``, in the order given; default: the users with a
    relevant judgment left) and take per-user totals from ``qrels``. No list is looked up again.
    ``codes``: the rows' user codes in ``qrels.user_index`` when known (saves a look-up);
    ``sources``: the judgment behind each judged position, ``hit_keep`` then being per judgment
    (read only at the kept rows' positions)."""
    u = qrels.user_index.get_indexer(j.users) if codes is None else codes  # the totals are looked up by code
    if users is None:
        rows_kept = np.flatnonzero(np.where(u >= 0, qrels.n_relevant[u], 0) > 0)
    else:
        rows_kept = np.asarray(users, dtype=np.int64)
    uk = u[rows_kept]
    known = uk >= 0
    n_rel = np.where(known, qrels.n_relevant[uk], 0)
    n_nonrel = np.where(known, qrels.n_nonrelevant[uk], 0)
    span = (int(rows_kept[0]), int(rows_kept[-1]) + 1) if len(rows_kept) else (0, 0)
    if len(rows_kept) and _spanned(j.hit_offsets, rows_kept, span) and (np.diff(rows_kept) > 0).all():
        # ascending rows holding most of their span's judged positions (a block of the samples' rows, or
        # the whole run): one pass over those positions, which are contiguous (hits are sorted by row)
        lo, hi = j.hit_offsets[span[0]], j.hit_offsets[span[1]]
        ok = hit_keep[lo:hi] if sources is None else hit_keep.take(sources[lo:hi])
        local = j.hits.rows[lo:hi] - span[0]
        gaps = len(rows_kept) < span[1] - span[0]   # rows of the span left out
        if gaps:
            row_on = np.zeros(span[1] - span[0], dtype=bool)
            row_on[rows_kept - span[0]] = True
            ok = ok & row_on.take(local)
        sel = np.flatnonzero(ok)
        hit_rows = local.take(sel)
        if gaps:
            hit_rows = (np.cumsum(row_on) - 1).take(hit_rows)   # the rows' new numbers
        sel += lo
    else:  # rows in any order, or few in their span: gather their ranges of judged positions, in their order
        lo = j.hit_offsets[rows_kept]
        n = j.hit_offsets[rows_kept + 1] - lo
        idx = ranges(lo, n)
        on = hit_keep[idx] if sources is None else hit_keep[sources[idx]]
        sel = idx[on]
        hit_rows = np.repeat(np.arange(len(rows_kept)), n)[on]
    hits = Hits(hit_rows, j.hits.cols.take(sel), j.hits.vals.take(sel))
    out = Judged(users=j.users[rows_kept], hits=hits, lengths=j.lengths[rows_kept], in_run=j.in_run[rows_kept],
                 n_rel=n_rel, n_nonrel=n_nonrel,
                 depth=j.depth, threshold=j.threshold, max_rating=j.max_rating, qrels=qrels, run=j.run,
                 run_rows=j.run_rows[rows_kept], metadata={**j.metadata, "masked": True})
    out.__dict__["_qrels_rows"] = uk   # the users' rows in qrels (Judged.ideal_dcg): known, not looked up again
    return out


#: :func:`mask_judged` reads the whole span of ascending rows when it holds at most this many times
#: their judged positions (one pass over contiguous positions costs about a third of gathering each
#: row's range; the tie-breaks of a deterministic scenario re-score a few rows spread over the run)
SPAN_RATIO = 3


def _spanned(offsets: np.ndarray, rows: np.ndarray, span: tuple[int, int]) -> bool:
    """Whether the judged positions of ``rows``' span are at most :data:`SPAN_RATIO` times theirs."""
    if span[1] - span[0] <= 2 * len(rows):   # most rows of the span: no need to count
        return True
    own = int((offsets[rows + 1] - offsets[rows]).sum())
    return offsets[span[1]] - offsets[span[0]] <= SPAN_RATIO * own


#: judged positions scored at once by :func:`score_rows`: temporaries of a few MB, which the
#: allocator reuses from chunk to chunk (arrays of 100+ MB are mapped anew, page by page, each time)
CHUNK_HITS = 1 << 18


def score_rows(j: Judged, hit_keep: np.ndarray, qrels: Qrels, rows: np.ndarray, specs, *, codes: np.ndarray | None = None,
               sources: np.ndarray | None = None, chunk: int = CHUNK_HITS) -> np.ndarray:
    """``score_judged(mask_judged(j, hit_keep, qrels, rows, codes=codes, sources=sources), specs).T``:
    one row of scores per user (the layout the samples gather rows from), computed over consecutive
    blocks of ``rows`` of about ``chunk`` judged positions each. A user's scores depend on its own
    judged positions only (every kernel sums within the user's row), so the values equal those of
    one call, bit for bit (tested); only the memory is smaller and reused."""
    from ..evaluation import score_judged

    rows = np.asarray(rows, dtype=np.int64)
    values = np.empty((len(rows), len(specs)))
    if not len(rows):
        return values
    total = np.cumsum(j.hit_offsets[rows + 1] - j.hit_offsets[rows])   # judged positions up to each row
    bounds = np.r_[0, np.searchsorted(total, np.arange(chunk, total[-1], chunk), side="right"), len(rows)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            masked = mask_judged(j, hit_keep, qrels, rows[a:b], codes=codes, sources=sources)
            values[a:b] = score_judged(masked, specs).T
    return values


def _user_codes(judged: list, qrels: Qrels) -> list:
    """Each judged run's user codes in ``qrels``, looked up once for runs that evaluate the same users
    (every run of a fold, usually)."""
    out, last = [], None
    for j in judged:
        if last is None or not (j.users is last[0] or np.array_equal(j.users, last[0])):
            last = (j.users, qrels.user_index.get_indexer(j.users))
        out.append(last[1])
    return out


class _Context:
    """What a sample needs (picklable): folds, and per fold every system's judged run stacked into
    one :class:`Judged` (:func:`recmetrics.judged.stack`) with the judgment behind each judged
    position, so one mask and one scoring call per fold serve all systems."""

    def __init__(self, study, specs, profile):
        from ..judged import stack

        self.systems = list(study.systems)
        self.specs = specs
        self.folds = [_Fold(q, profile) for q in study.qrels]
        self.stacked, self.sources, self.row_system, self.row_ucodes = [], [], [], []
        for f, fold in enumerate(self.folds):
            judged = [study.judged(s, f) for s in self.systems]
            self.stacked.append(stack(judged))
            self.sources.append(np.concatenate([_hit_sources(j, fold) for j in judged]))
            self.row_system.append(np.repeat(np.arange(len(judged)), [len(j) for j in judged]))
            self.row_ucodes.append(np.concatenate(_user_codes(judged, fold.qrels)))
            if (self.row_ucodes[-1] < 0).any():  # pragma: no cover - judged against these qrels
                raise InputError("a judged user has no judgment in the fold's qrels (judged against other qrels?)")
        self.offsets = [j.metadata["offsets"] for j in self.stacked]   # per fold, each system's first row
        self.users_shortcut = True
        self.grouped = True   # every system's means at once (_grouped_means); False: system by system
        self._full: list | None = None
        self.row_rep: list | None = None   # per fold, the replicate of each stacked row (set_replicates)
        self.n_replicates = 0

    def set_replicates(self, study, labels: np.ndarray) -> None:
        """Aggregate every sample also per replicate: ``labels[f, u]`` is the replicate (0..R-1) of
        ``study.users[u]`` in fold ``f`` (:func:`recmetrics.meta.replicates.unit_labels`); the samples
        then give ``(1 + R, n_specs, n_systems)``: the pooled value first, then one per replicate."""
        labels = np.asarray(labels)
        users = pd.Index(study.users)
        self.row_rep = [labels[f][users.get_indexer(self.stacked[f].users)] for f in range(len(self.folds))]
        self.n_replicates = int(labels.max()) + 1 if labels.size else 0

    @property
    def full_scores(self) -> list:
        """Per fold, the ``(stacked rows, n_specs)`` scores (a row per user) on the full test set (computed once)."""
        if self._full is None:   # in blocks of rows, as the samples (the whole stacked run never memoises its terms)
            self._full = [score_rows(j, np.ones(len(fold.frame), dtype=bool), fold.qrels, np.arange(len(j)), self.specs,
                                     codes=ucodes, sources=sources)
                          for j, fold, ucodes, sources in zip(self.stacked, self.folds, self.row_ucodes, self.sources)]
        return self._full

    def sample(self, scenario: str, size: float, seed: int, aggregate: str) -> np.ndarray:
        """(n_specs, n_systems) aggregated values on one reduced test set (NaN if nobody is left)."""
        return self.samples(scenario, size, [seed], aggregate)[0]

    def samples(self, scenario: str, size: float, seeds: Sequence[int], aggregate: str) -> list[np.ndarray]:
        """:meth:`sample` for each seed, sharing the work samples have in common.

        Per fold, samples that keep the same judgments are scored once, and a sample that differs
        from the fold's first one only in some users' judgments (a tie-break among equally popular
        items, say) re-scores only those users' rows: a user's scores depend on its own judgments
        only. Every row is scored by the same code as alone, so the values are bit-identical to
        scoring each sample by itself (tested)."""
        seeds = list(seeds)
        if size >= 1.0:
            return self._aggregate([self._full_rows()], aggregate) * len(seeds)
        rngs = [np.random.default_rng(s) for s in seeds]
        picks = [[fold.select(scenario, size, rng) for fold in self.folds] for rng in rngs]  # seed-major, as alone
        per_fold = []
        for f, fold in enumerate(self.folds):
            memo: dict[bytes, tuple] = {}
            base = None
            out = []
            for pick in picks:
                codes, sel = pick[f]
                key = np.packbits(sel).tobytes()
                if key not in memo:
                    memo[key] = self._fold_rows(f, scenario, codes, sel, base)
                    base = base or (codes, sel, memo[key])
                out.append(memo[key])
            per_fold.append(out)
        return self._aggregate([[per_fold[f][i] for f in range(len(self.folds))] for i in range(len(seeds))],
                               aggregate)

    def _full_rows(self) -> list[tuple]:
        return [(self.full_scores[f], np.ones(len(self.row_system[f]), dtype=bool), self._identity(f), None, None)
                for f in range(len(self.folds))]

    def _identity(self, f: int) -> np.ndarray:
        memo = self.__dict__.setdefault("_identities", {})
        if f not in memo:
            memo[f] = np.arange(len(self.row_system[f]))
        return memo[f]

    def _fold_rows(self, f: int, scenario: str, codes, sel, base) -> tuple:
        """Fold ``f`` under one selection as ``(values, kept, cols, rows, row_values)``: which stacked
        rows are evaluated (``kept``) and their scores, a row of ``n_specs`` per user: row ``cols[r]``
        of ``values`` for row ``r`` (``cols`` None: ``values`` holds the kept rows in order), except the
        ``rows`` whose scores are ``row_values`` (when not None). ``base``: an earlier selection of the
        same fold and scenario whose scores are reused for the users whose judgments it keeps alike."""
        fold = self.folds[f]
        keep = sel if codes is None else sel[codes]
        ucodes = self.row_ucodes[f]
        if not keep.any():
            return self.full_scores[f], np.zeros(len(ucodes), dtype=bool), self._identity(f), None, None
        if scenario.endswith("users") and self.users_shortcut:
            # removing a user's judgments changes no other user's scores: the kept users' rows of the
            # full test set's scores (equal to re-scoring the mask; tested)
            return self.full_scores[f], sel[ucodes], self._identity(f), None, None
        j, sources = self.stacked[f], self.sources[f]
        if base is None or not self.users_shortcut:
            q = _subset_qrels(fold.qrels, keep)
            kept = q.n_relevant[ucodes] > 0  # q shares the fold's user codes
            rows = np.flatnonzero(kept)
            return score_rows(j, keep, q, rows, self.specs, codes=ucodes, sources=sources), kept, None, None, None
        # re-score only the rows of the users whose judgments differ from the base selection's, against
        # the kept judgments of those users only (a user's scores depend on its own judgments only)
        b_codes, b_sel, (b_values, b_kept, b_cols, _, _) = base
        touched = np.unique(fold.ucodes[keep != (b_sel if b_codes is None else b_sel[b_codes])])
        q = _subset_qrels(fold.qrels, keep, touched)
        rows = np.flatnonzero(np.isin(ucodes, touched))
        kept = b_kept.copy()
        kept[rows] = q.n_relevant[ucodes[rows]] > 0
        rows = rows[kept[rows]]
        row_values = score_rows(j, keep, q, rows, self.specs, codes=ucodes, sources=sources)
        if b_cols is None:  # the base holds its kept rows in order: map every row to its column there
            b_cols = np.maximum(np.cumsum(b_kept) - 1, 0)   # rows the base did not keep are all re-scored
            if not len(b_values):
                b_values = np.zeros((1, len(self.specs)))
        return b_values, kept, b_cols, rows, row_values

    def _aggregate(self, samples: list[list[tuple]], aggregate) -> list:
        """Per sample (a list of per-fold :meth:`_fold_rows` results), the ``(n_specs, n_systems)``
        aggregates of the kept rows of every fold (folds pooled, ``concat``: a system's values are its
        kept rows of fold 0, then fold 1, ...). ``aggregate``: a mean, or a tuple of means (then a
        tuple of arrays per sample, one per mean, the values gathered once)."""
        # several means at once (a tuple): one result per mean, from the same gathered values
        aggs = (aggregate,) if isinstance(aggregate, str) else tuple(aggregate)
        out = []
        reps = self.n_replicates if self.row_rep is not None else 0
        no_nan = self._nan_free()
        scale = self._scales(aggs, no_nan)
        for per_fold in samples:
            if self.grouped and len(self.specs) >= 2 and scale.ready(per_fold):
                packed = self._grouped_means(per_fold, aggs, reps, scale)
                out.append(packed[0] if isinstance(aggregate, str) else tuple(packed))
                continue
            results = [np.full((len(self.specs), len(self.systems)), np.nan) for _ in aggs]
            results_rep = [np.full((reps, len(self.specs), len(self.systems)), np.nan) for _ in aggs]
            # per fold: the kept rows, and where each system's block of rows starts among them
            index = [np.flatnonzero(kept) for _, kept, _, _, _ in per_fold]
            index = [(at, np.searchsorted(at, self.offsets[f])) for f, at in enumerate(index)]
            for c in range(len(self.systems)):
                parts, labels = [], []
                for f, ((v, _, cols, rows, row_values), (at, b)) in enumerate(zip(per_fold, index)):
                    if b[c + 1] == b[c]:
                        continue
                    if reps:
                        labels.append(self.row_rep[f][at[b[c]:b[c + 1]]])
                    if cols is None:   # the kept rows in order: the system's rows are a slice
                        parts.append(v[b[c]:b[c + 1]])
                        continue
                    at = at[b[c]:b[c + 1]]
                    part = v[cols[at]]
                    if rows is not None and len(rows):   # rows re-scored for this sample (all of them kept)
                        i, j = np.searchsorted(rows, [at[0], at[-1] + 1])
                        if j > i:
                            part[np.searchsorted(at, rows[i:j])] = row_values[i:j]
                    parts.append(part)
                if parts:
                    # C-ordered (x.T Fortran), as the values have always been laid out: the mean's float sums,
                    # hence the exact ties between systems that Kendall's τ counts, do not change with this code
                    x = parts[0] if len(parts) == 1 and parts[0].flags.c_contiguous else np.concatenate(parts)
                    lab = np.concatenate(labels) if reps else None
                    # read from arrays without NaN (each checked once, not once per system and sample)
                    clean = all(no_nan(v) and no_nan(rv) for (v, _, _, _, rv), (_, b) in zip(per_fold, index)
                                if b[c + 1] > b[c])
                    for res, res_rep, (pooled, (have, values)) in zip(results, results_rep,
                                                                      _means(x, aggs, self.specs, lab, reps, clean)):
                        res[:, c] = pooled
                        if len(have):
                            res_rep[have, :, c] = values
            # with replicates, each mean's values are (1 + R, specs, systems): the pooled value, then one per replicate
            packed = [np.concatenate([res[None], res_rep]) if reps else res for res, res_rep in zip(results, results_rep)]
            out.append(packed[0] if isinstance(aggregate, str) else tuple(packed))
        return out


    def _grouped_means(self, per_fold: list[tuple], aggs: tuple, reps: int, scale) -> list[np.ndarray]:
        """One sample's per-mean results (as :meth:`_aggregate`), every system and replicate at once:
        the kept rows' values on every mean's scale (each array transformed once, ``scale``) gathered
        system after system, then averaged per system (its rows of fold 0, then of fold 1, ...) and per
        (system, replicate), each group's rows summed in the order the per-system computation sums them
        (:func:`~recmetrics.meta.grouped_means.group_means`; bit-identical, tested)."""
        from ..metrics.aggregate import parse_aggregate
        from .grouped_means import group_means

        n_specs, n_sys = len(self.specs), len(self.systems)
        index = [np.flatnonzero(kept) for _, kept, _, _, _ in per_fold]
        # the kept rows on every mean's scale, system after system and each system's rows fold after fold
        # (where a stable sort by system puts the folds' rows, fold after fold): each group's rows are
        # contiguous, so they are summed where they are written, without a sorted copy
        counts = np.array([np.bincount(self.row_system[f][at], minlength=n_sys) for f, at in enumerate(index)])
        start = (np.cumsum(counts.T) - counts.T.ravel()).reshape(n_sys, len(index))   # of block (system, fold)
        live = [f for f, at in enumerate(index) if len(at)]
        alone = len(live) == 1 and per_fold[live[0]][2] is None   # one fold's kept rows, in order: as they are
        t = scale.of(per_fold[live[0]][0]) if alone else np.empty((int(counts.sum()), len(scale.columns)))
        labels = np.empty(len(t), dtype=np.intp) if reps else None
        for f, ((v, _, cols, rows, row_values), at) in enumerate(zip(per_fold, index)):
            if not len(at):
                continue
            values = scale.of(v)
            first = np.cumsum(counts[f]) - counts[f]   # where each system's rows start among the fold's kept rows
            for c in ([] if alone else np.flatnonzero(counts[f]).tolist()):
                d, n, r = int(start[c, f]), int(counts[f, c]), int(first[c])
                if cols is None:   # v holds the kept rows in order
                    t[d:d + n] = values[r:r + n]
                else:              # row r's values are row cols[r] of v, except the re-scored rows
                    np.take(values, cols[at[r:r + n]], axis=0, out=t[d:d + n])
            dest = np.arange(len(at)) + np.repeat(start[:, f] - first, counts[f])   # each kept row's place in t
            if cols is not None and rows is not None and len(rows):
                t[dest[np.searchsorted(at, rows)]] = scale.of(row_values)
            if reps:
                labels[dest] = self.row_rep[f][at]
        system = np.repeat(np.arange(n_sys), counts.sum(axis=0))
        results = [np.full((n_specs, n_sys), np.nan) for _ in aggs]
        results_rep = [np.full((reps, n_specs, n_sys), np.nan) for _ in aggs]
        if len(t):
            means = [parse_aggregate(a)[0] for a in aggs]
            have, values = group_means(t, system, n_sys, means, scale.where, grouped=True)
            for res, val in zip(results, values):
                res[:, have] = val.T
            if reps:
                key = system * reps + labels
                have, values = group_means(t, key, n_sys * reps, means, scale.where)
                for res_rep, val in zip(results_rep, values):
                    res_rep[have % reps, :, have // reps] = val
        return [np.concatenate([res[None], res_rep]) if reps else res for res, res_rep in zip(results, results_rep)]

    def _scales(self, aggs: tuple, no_nan) -> "_Scale":
        """How one call of :meth:`_aggregate` puts arrays of scores on every mean of ``aggs``' scale
        (:func:`~recmetrics.meta.grouped_means.transform_columns`, each array once: :meth:`_per_array`),
        and whether every array a sample reads can be transformed whole (no NaN; no negative value for
        a mean other than the arithmetic one), so that nothing the per-system computation would refuse
        is read."""
        from ..metrics.aggregate import parse_aggregate
        from .grouped_means import column_plan, transform_columns

        columns, where = column_plan(aggs, self.specs)
        arithmetic = all(parse_aggregate(a)[0] == "arithmetic" for a in aggs)
        non_negative = self._per_array("non-negative", lambda a: not (a < 0).any())

        def ok(a) -> bool:
            return no_nan(a) and (arithmetic or non_negative(a))

        def ready(per_fold) -> bool:
            return all(ok(v) and (rows is None or not len(rows) or ok(rv))
                       for v, kept_rows, _c, rows, rv in per_fold if kept_rows.any())

        return _Scale(self._per_array(("scales", aggs), lambda a: transform_columns(a, aggs, self.specs, columns)),
                      ready, columns, where)

    def _nan_free(self):
        """``no_nan(array)``: whether an array of scores (or None) has no NaN (:meth:`_per_array`)."""
        finite = self._per_array("no NaN", lambda a: not np.isnan(a).any())
        return lambda a: a is None or finite(a)

    def _per_array(self, store, compute):
        """``f(array)``: ``compute(array)``, computed once per array while the arrays are alive (one call
        of :meth:`_aggregate`), and the full test sets' arrays' once for all (kept on the context under
        ``store``). Arrays are told apart by identity, each memo holding its array (so no id is reused)."""
        kept = self.__dict__.setdefault("_per_full_array", {}).setdefault(store, {})
        seen: dict = {}

        def f(a):
            got = seen.get(id(a))
            if got is None or got[0] is not a:
                got = kept.get(id(a))
                if got is None or got[0] is not a:
                    got = (a, compute(a))
                    if self._full is not None and any(a is v for v in self._full):
                        kept[id(a)] = got
                seen[id(a)] = got
            return got[1]
        return f


@dataclass(frozen=True)
class _Scale:
    """Arrays of scores on the scales of several means (:meth:`_Context._scales`): ``of(array)`` its
    columns of :func:`~recmetrics.meta.grouped_means.column_plan`'s ``columns`` (``where``: each (mean,
    spec)'s column), ``ready(per_fold)`` whether a sample's arrays can all be transformed whole."""
    of: Callable
    ready: Callable
    columns: list
    where: np.ndarray


def _means(x: np.ndarray, aggs: Sequence[str], specs, labels: np.ndarray | None = None, reps: int = 0,
           clean: bool = False) -> list:
    """Per mean of ``aggs``, ``(pooled, (replicates, values))``: the ``(n_specs,)`` aggregates of the
    rows of ``x`` (units × specs, C-ordered) and, row by row of ``values``, of each replicate's rows
    (``labels``, 0..reps-1; a replicate without rows is left out of ``replicates``), each bit-identical to
    ``aggregate(x[labels == r].T, mean, axis=1, metric=specs)``. The values are transformed once per
    mean (:func:`~recmetrics.metrics.aggregate.transformed`, elementwise) and a replicate's rows of
    the transform are laid out as ``x[labels == r]`` (rows sorted stably by replicate, sliced), so
    numpy sums them in the same order. ``clean``: ``x`` is known to hold no NaN, so the arithmetic
    mean's transform (the values themselves, once checked for NaN) is ``x.T`` without a check."""
    from ..metrics.aggregate import parse_aggregate, transformed, untransformed

    if reps:
        order = np.argsort(labels, kind="stable")
        edges = np.searchsorted(labels[order], np.arange(reps + 1))
    out = []
    for a in aggs:
        if clean and parse_aggregate(a)[0] == "arithmetic":
            m, t = "arithmetic", x.T
        else:
            m, t = transformed(x.T, a, axis=1, metric=specs)
        by_rep = (np.zeros(0, dtype=np.intp), np.zeros((0, t.shape[0])))
        if reps:
            by_rep = _replicate_means(m, t.T[order], edges)
        out.append((untransformed(m, t.mean(axis=1)), by_rep))
    return out


def _replicate_means(m: str, rows: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(replicates, values)``: the mean ``m`` of each replicate's rows of ``rows`` (units × specs on
    the mean's scale, C-ordered, replicate ``r``'s rows ``edges[r]:edges[r + 1]``) for the replicates
    that have rows, each equal bit for bit to ``untransformed(m, rows[edges[r]:edges[r + 1]].T.mean(axis=1))``.
    numpy sums such a block row after row (the units are not the inner axis), so every replicate's
    rows are laid out in one ``(replicates, longest, specs)`` block padded with ``-0.0`` (which
    leaves any sum as it is, a ``-0.0`` too) and summed over its middle axis, in the same order, in
    one call (tested). One spec alone is summed pairwise by numpy (the units are then the inner
    axis): those are taken one replicate at a time, as written above."""
    from ..metrics.aggregate import untransformed

    counts = np.diff(edges)
    have = np.flatnonzero(counts)
    if rows.shape[1] < 2:
        return have, np.array([untransformed(m, rows[edges[r]:edges[r + 1]].T.mean(axis=1)) for r in have])
    block = np.full((len(counts), int(counts.max()), rows.shape[1]), -0.0)
    block[np.repeat(np.arange(len(counts)), counts), np.arange(len(rows)) - np.repeat(edges[:-1], counts)] = rows
    return have, untransformed(m, block.sum(axis=1)[have] / counts[have][:, None])


def _task(ctx: _Context, scenario: str, size: float, seeds: Sequence[int], aggregate: str) -> list[np.ndarray]:
    return ctx.samples(scenario, size, seeds, aggregate)
