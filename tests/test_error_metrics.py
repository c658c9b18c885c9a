"""Error metrics of rating predictions: MAE, MSE, RMSE, NMAE (Schröder et al. 2011, §4.1)."""
import numpy as np
import pandas as pd
import pytest

import recmetrics as rm
from recmetrics.errors import InputError
from recmetrics.metrics.error import prediction_errors

TEST = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": [10, 11, 12, 10, 13],
                     "rating": [5.0, 3.0, 1.0, 4.0, 2.0]})
PRED = pd.DataFrame({"user": [1, 1, 1, 2, 2, 2], "item": [10, 11, 12, 10, 13, 99],
                     "prediction": [4.0, 3.5, 2.0, 4.0, 4.0, 1.0]})  # (2, 99) is not a test pair: ignored
RUN = rm.Run.from_lists({1: [10], 2: [13]})


def evaluate(names, test=TEST, pred=PRED, **kw):
    return rm.evaluate(RUN, rm.Qrels(TEST), names, users="all", predictions=pred, test=test, **kw)


def test_values_per_user():
    ev = evaluate(["MAE", "MSE", "RMSE", "NMAE(rmin=1,rmax=5)", "NMAE"], rating_scale=(1, 5)).per_user
    ev.columns = ["MAE", "MSE", "RMSE", "NMAE15", "NMAE"]
    assert np.allclose(ev["MAE"], [(1 + 0.5 + 1) / 3, (0 + 2) / 2])
    assert np.allclose(ev["MSE"], [(1 + 0.25 + 1) / 3, 4 / 2])
    assert np.allclose(ev["RMSE"], np.sqrt(ev["MSE"]))
    assert np.allclose(ev["NMAE15"], ev["MAE"] / 4)
    assert np.allclose(ev["NMAE"], ev["MAE"] / 4)  # the declared scale 1-5
    table = prediction_errors(TEST, PRED)
    assert table["n"].tolist() == [3, 2]


def test_qrels_as_test_and_every_aggregation():
    for method in ("arithmetic", "geometric", "harmonic", "quadratic"):
        agg = evaluate(["MAE", "RMSE"], test=rm.Qrels(TEST), aggregate=method).aggregate
        assert (agg > 0).all()
    ev = evaluate(["MAE"], aggregate="geometric").aggregate
    assert np.isclose(ev.iloc[0], np.sqrt(2.5 / 3 * 1.0))


def test_missing_prediction_raises_naming_the_pair_or_is_filled():
    pred = PRED[~((PRED.user == 1) & (PRED.item == 12))]
    with pytest.raises(InputError, match=r"no prediction for user 1 item 12 \(1 of 5 test ratings"):
        evaluate(["RMSE"], pred=pred)
    filled = evaluate(["MAE(fill=3)"], pred=pred).per_user.iloc[:, 0]
    assert np.allclose(filled, [(1 + 0.5 + 2) / 3, 1.0])
    skipped = evaluate(["MAE(fill=skip)"], pred=pred).per_user.iloc[:, 0]
    assert np.allclose(skipped, [(1 + 0.5) / 2, 1.0])
    # skipping every pair of a user leaves nothing to average
    with pytest.raises(InputError, match="user 2 has no prediction for any test rating"):
        evaluate(["MAE(fill=skip)"], pred=PRED[PRED.user == 1])
    with pytest.raises(InputError, match="fill must be"):
        evaluate(["MAE(fill=mean)"])


def test_bad_predictions_and_test_tables():
    with pytest.raises(InputError, match="lack column"):
        evaluate(["MAE"], pred=PRED.rename(columns={"prediction": "score"}))
    dup = pd.concat([PRED, PRED.iloc[:1]])
    with pytest.raises(InputError, match="user 1 item 10 is predicted more than once"):
        evaluate(["MAE"], pred=dup)
    nan = PRED.assign(prediction=[4.0, np.nan, 2.0, 4.0, 4.0, 1.0])
    with pytest.raises(InputError, match="prediction for user 1 item 11 is nan"):
        evaluate(["MAE"], pred=nan)
    with pytest.raises(InputError, match="needs predictions="):
        rm.evaluate(RUN, rm.Qrels(TEST), ["MAE"])
    with pytest.raises(InputError, match="must be a DataFrame"):
        evaluate(["MAE"], pred=[1, 2])
    with pytest.raises(InputError, match="rmax > rmin"):
        evaluate(["NMAE(rmin=5,rmax=5)"])


def test_test_ratings_default_to_the_evaluated_qrels():
    names = ["MAE", "MSE", "RMSE", "NMAE"]
    implicit = rm.evaluate(RUN, rm.Qrels(TEST), names, users="all", predictions=PRED, rating_scale=(1, 5)).per_user
    explicit = rm.evaluate(RUN, rm.Qrels(TEST), names, users="all", predictions=PRED, test=TEST,
                           rating_scale=(1, 5)).per_user
    pd.testing.assert_frame_equal(implicit, explicit)


def test_user_without_test_ratings_raises():
    # the evaluated users come from the qrels; a `test` table missing one of them is an error
    with pytest.raises(InputError, match="user 2 has no test rating"):
        evaluate(["RMSE"], test=TEST[TEST.user == 1])


def test_with_the_zoo_rating_predictor():
    if "SVD" not in rm.recommenders.names():
        pytest.skip("no SVD rating predictor in the zoo")
    rng = np.random.default_rng(0)
    ratings = pd.DataFrame({"user": np.repeat(np.arange(30), 12), "item": rng.integers(0, 40, 360),
                            "rating": rng.integers(1, 6, 360).astype(float)}).drop_duplicates(["user", "item"])
    train, test = rm.splits.holdout(ratings, test_size=0.25, seed=0)
    model = rm.recommenders.create("SVD(factors=4,iterations=3)").fit(train)
    pred = test[["user", "item"]].assign(prediction=model.predict(test.user.to_numpy(), test.item.to_numpy()))
    q = rm.Qrels(test)
    ev = rm.evaluate(model.recommend(q.users, n=5), q, ["MAE", "RMSE", "NMAE(rmin=1,rmax=5)"], users="all",
                     predictions=pred, test=test)
    assert (ev.aggregate["RMSE"] >= ev.aggregate["MAE"]) and 0 < ev.aggregate["MAE"] < 4


def test_nmae_scale_is_declared_not_taken_from_the_test_data():
    # the test ratings span 1-5 here; a split whose test data spans 2-5 must not change NMAE's scale
    with pytest.raises(InputError, match="rating scale"):
        evaluate(["NMAE"])
    with pytest.raises(InputError, match="both rmin and rmax"):
        evaluate(["NMAE(rmin=1)"])
    narrow = TEST[TEST.rating >= 2]
    pred = PRED[PRED.item != 12]
    ev = rm.evaluate(RUN, rm.Qrels(narrow), ["NMAE", "MAE"], predictions=pred, rating_scale=(1, 5)).per_user
    assert np.allclose(ev.iloc[:, 0], ev.iloc[:, 1] / 4)


def test_error_metrics_default_to_every_user_and_pool():
    # user 2 has no relevant item (ratings 4? no: threshold 5 makes only user 1's 5 relevant)
    q = rm.Qrels(TEST, threshold=5)
    ev = rm.evaluate(RUN, q, ["MAE", "RMSE"], predictions=PRED)
    assert list(ev.per_user.index) == [1, 2]  # not only the users with a relevant item
    with pytest.warns(UserWarning, match="users='all'"):
        mixed = rm.evaluate(RUN, q, ["MAE", "P@1"], predictions=PRED)
    assert list(mixed.per_user.index) == [1]
    from recmetrics.metrics.error import pooled_errors

    pooled = pooled_errors(TEST, PRED)
    assert pooled["MAE"] == pytest.approx((1 + 0.5 + 1 + 0 + 2) / 5)
    assert pooled["RMSE"] == pytest.approx(np.sqrt((1 + 0.25 + 1 + 0 + 4) / 5))
    assert pooled["MAE"] != pytest.approx(ev.aggregate["MAE"])  # the mean of per-user MAEs weights users equally
