"""Bad input gets a clear error naming the offending user/item/line."""
import warnings

import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import FormatError, InputError, UnknownNameError


def qrels_df():
    return pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5, 2, 4]})


def test_duplicate_item_in_a_users_list():
    with pytest.raises(InputError, match=r"item 10 appears more than once in the list of user 1"):
        rm.Run.from_lists({1: [10, 11, 10]})
    frame = pd.DataFrame({"user": [1, 1], "item": [5, 5], "score": [1.0, 0.5]})
    with pytest.raises(InputError, match="item 5 .* user 1"):
        rm.Run.from_frame(frame)


def test_duplicate_users_and_score_columns():
    with pytest.raises(InputError, match="user 1 appears twice in run"):
        rm.Run(np.array([1, 1]), np.array([[10], [11]]), np.array([1, 1]))
    with pytest.raises(InputError, match="item 5 labels two score columns"):
        rm.Run.from_scores(np.ones((1, 3)), [1], [4, 5, 5], n=2)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_scores(bad):
    frame = pd.DataFrame({"user": [1, 1], "item": [5, 6], "score": [1.0, bad]})
    with pytest.raises(InputError, match=r"score of user 1 item 6"):
        rm.Run.from_frame(frame)
    with pytest.raises(InputError, match=r"user 'a' item 'y'"):
        rm.Run.from_scores(np.array([[1.0, np.nan if np.isnan(bad) else np.inf]]), ["a"], ["x", "y"], n=1)


@pytest.mark.parametrize("rating,msg,negative", [("good", "'good'", "unjudged"), (np.nan, "nan", "unjudged"),
                                                  (-1, "-1", "error")])
def test_non_numeric_or_negative_ratings(rating, msg, negative):
    df = qrels_df().astype({"rating": object})
    df.loc[2, "rating"] = rating
    with pytest.raises(InputError, match=rf"rating {msg}.* of user 2 item 10"):
        rm.Qrels(df, negative=negative)   # a negative grade is refused only when asked (trec_eval: unjudged)


def test_empty_and_duplicate_qrels():
    with pytest.raises(InputError, match="qrels are empty"):
        rm.Qrels(qrels_df().iloc[:0])
    dup = pd.concat([qrels_df(), qrels_df().iloc[[0]]])
    with pytest.raises(InputError, match="user 1 item 10 is judged more than once"):
        rm.Qrels(dup)
    with pytest.raises(InputError, match="lacks column"):
        rm.Qrels(qrels_df().rename(columns={"rating": "stars"}))


@pytest.mark.parametrize("name", ["P@0", "nDCG@-3", "AP@x", "P", "RR@1.5"])
def test_bad_cutoffs(name):
    with pytest.raises(InputError, match="cut-off"):
        rm.metrics.parse(name)
    with pytest.raises(InputError):
        rm.Run.from_scores(np.ones((1, 2)), [1], [1, 2], n=0)


def test_unknown_metric_suggests_closest():
    with pytest.raises(UnknownNameError, match=r"unknown metric 'nDGC'; did you mean 'nDCG'"):
        rm.metrics.parse("nDGC@10")
    with pytest.raises(UnknownNameError, match="did you mean 'max_rating'"):
        rm.metrics.parse("ERR@10(max_ratin=5)")
    with pytest.raises(InputError, match="must be a float"):
        rm.metrics.parse("ERR@10(max_rating=high)")


def test_malformed_trec_lines_report_the_line(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 10 1 0.9 sys\n1 Q0 11 2 0.8 sys\n\n1 Q0 12 3 sys\n")
    with pytest.raises(FormatError, match=r"run.txt:4: expected 6 fields"):
        rm.io.read_trec_run(run)
    run.write_text("1 Q0 10 1 0.9 sys\n\n\n1 Q0 11 2 high sys\n")  # blank lines still count
    with pytest.raises(FormatError, match=r"run.txt:4: score 'high' is not a number"):
        rm.io.read_trec_run(run)
    run.write_text("1 Q0 10 1 0.9 sys\n\n1 Q0 10 2 0.8 sys\n")
    with pytest.raises(FormatError, match=r"run.txt:3: docno '10' appears twice for qid '1'"):
        rm.io.read_trec_run(run)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 10 1\n1 0 11 x2\n")
    with pytest.raises(FormatError, match=r"qrels.txt:2: relevance 'x2' is not a number"):
        rm.io.read_trec_qrels(qrels)
    qrels.write_text("1 0 10\n")
    with pytest.raises(FormatError, match=r"qrels.txt:1: expected 4 fields"):
        rm.io.read_trec_qrels(qrels)
    with pytest.raises(InputError, match="does not exist"):
        rm.io.read_trec_qrels(tmp_path / "nope.txt")


def test_run_users_absent_from_qrels_warn_and_are_counted():
    q = rm.Qrels(qrels_df())
    run = rm.Run.from_lists({1: [10], 2: [10], 7: [10], 8: [11]})
    with pytest.warns(UserWarning, match=r"2 user\(s\) have no judgments and are ignored"):
        res = rm.evaluate(run, q, ["P@1"])
    assert res.metadata["run_users_ignored"] == 2
    assert list(res.per_user.index) == [1, 2]


def test_unknown_user_policy_and_aggregation():
    q = rm.Qrels(qrels_df())
    run = rm.Run.from_lists({1: [10]})
    with pytest.raises(InputError, match="users policy"):
        rm.evaluate(run, q, ["P@1"], users="everyone")
    with pytest.raises(UnknownNameError, match="did you mean 'geometric'"):
        rm.evaluate(run, q, ["P@1"], aggregate="geometrc")
    with pytest.raises(InputError, match="no metric requested"):
        rm.evaluate(run, q, [])
    with pytest.raises(InputError, match="must be a recmetrics Run"):
        rm.evaluate([1, 10], q, ["P@1"])
