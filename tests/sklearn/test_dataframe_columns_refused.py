"""DataFrames the estimators cannot read the columns of are refused, naming why (audit:
repeated column names crashed with AttributeError 'DataFrame' object has no attribute
'dtype'; an array at predict after a fit with text columns failed in numpy's 'could not
convert string to float')."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ensembo.errors import ExperimentError
from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor

RNG = np.random.default_rng(0)
N = 60


def _classifier(space):
    return EnsemboClassifier(space, n_trials=2, cv=3, surrogate=None)


@pytest.fixture
def text_frame():
    frame = pd.DataFrame({"a": RNG.normal(size=N), "b": RNG.choice(["x", "y"], N)})
    return frame, (frame["a"] > 0).astype(int).to_numpy()


@pytest.mark.parametrize("text", [False, True], ids=["numbers", "with a text column"])
def test_repeated_column_names_are_refused_at_fit_naming_them(tree_space, text):
    frame = pd.DataFrame(RNG.normal(size=(N, 3)), columns=["a", "b", "a"])
    if text:
        frame["c"] = RNG.choice(["x", "y"], N)
    y = (frame.iloc[:, 0] > 0).astype(int).to_numpy()
    estimator = _classifier(tree_space)
    with pytest.raises(ExperimentError, match=r"^X: column names must be unique, X repeats 'a'"):
        estimator.fit(frame, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)


def test_repeated_column_names_are_refused_by_a_regressor(tree_regression_space):
    frame = pd.DataFrame(RNG.normal(size=(N, 4)), columns=[0, 1, 1, 0])
    with pytest.raises(ExperimentError, match="X repeats 0, 1"):
        EnsemboRegressor(tree_regression_space, n_trials=2, cv=3, surrogate=None).fit(
            frame, frame.iloc[:, 0].to_numpy()
        )


def test_repeated_text_column_names_are_refused_at_predict(tree_space, text_frame):
    frame, y = text_frame
    model = _classifier(tree_space).fit(frame, y)
    repeated = pd.concat([frame, frame[["b"]]], axis=1)
    with pytest.raises(ExperimentError, match="X repeats 'b'"):
        model.predict(repeated)


@pytest.mark.parametrize("method", ["predict", "predict_proba"])
def test_an_array_after_a_fit_with_text_columns_is_refused_naming_them(
    tree_space, text_frame, method
):
    frame, y = text_frame
    model = _classifier(tree_space).fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not the feature-names warning first
        with pytest.raises(
            ExperimentError,
            match=r"fitted on a DataFrame whose text columns \(b\) it encodes; pass a "
                  r"DataFrame with those columns, not ndarray",
        ):
            getattr(model, method)(frame.to_numpy())
    assert getattr(model, method)(frame).shape[0] == N  # the DataFrame still predicts


def test_an_array_after_a_fit_on_numbers_only_still_predicts(tree_space):
    """Only text columns need the names; a numeric DataFrame's model takes an array,
    with scikit-learn's feature-names warning."""
    frame = pd.DataFrame(RNG.normal(size=(N, 2)), columns=["a", "b"])
    model = _classifier(tree_space).fit(frame, (frame["a"] > 0).astype(int).to_numpy())
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        assert model.predict(frame.to_numpy()).shape == (N,)
