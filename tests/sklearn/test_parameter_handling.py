"""How the estimators read ``selection``, ``categorical_features`` and ``cv`` (numbers,
mappings, scikit-learn splitters), and what a stored search records of them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

from ensembo.errors import ExperimentError, StorageError
from ensembo.sklearn import EnsemboClassifier
from ensembo.stored_study import SCORING


@pytest.fixture
def data():
    return make_classification(n_samples=90, n_features=4, random_state=0)


@pytest.fixture
def classifier(tree_space):
    def make(**params):
        defaults = {"n_trials": 3, "cv": 3, "surrogate": None}
        return EnsemboClassifier(tree_space, **{**defaults, **params})

    return make


def _refused_before_any_trial(model, X, y, message):
    with pytest.raises(ExperimentError, match=message):
        model.fit(X, y)
    assert not hasattr(model, "study_")  # no study was opened, so no trial ran


# --- selection -----------------------------------------------------------------------


def test_an_unknown_selection_is_refused_before_any_trial(classifier, data, tmp_path):
    """It was refused after the whole search had run."""
    X, y = data
    model = classifier(selection="nope", storage=tmp_path / "s.db")
    message = "selection: unknown selection 'nope'; valid: argmin, posterior-mean, selection-split"
    _refused_before_any_trial(model, X, y, re.escape(message))
    assert not (tmp_path / "s.db").exists()


def test_selection_split_without_its_fraction_is_refused_before_any_trial(classifier, data):
    """Nothing passed the task a selection split: every such fit failed after the search."""
    X, y = data
    _refused_before_any_trial(
        classifier(selection="selection-split"), X, y, "give selection_split=, the fraction"
    )


@pytest.mark.parametrize("fraction", [0, 1, 1.5, True, "0.2"])
def test_a_selection_split_must_be_a_fraction(classifier, data, fraction):
    X, y = data
    _refused_before_any_trial(
        classifier(selection_split=fraction), X, y, "selection_split: must be None or the fraction"
    )


def test_selection_split_holds_rows_out_and_selects_by_their_loss(classifier, data):
    X, y = data
    model = classifier(n_trials=4, selection="selection-split", selection_split=0.25).fit(X, y)
    losses = model.cv_results_["selection_loss"]
    assert losses.shape == (4,) and np.isfinite(losses).all()
    assert model.best_index_ == int(np.argmin(losses))
    assert len(model.study_.context.y_true) == 90 - 23  # a quarter (rounded up) held out
    assert model.study_.metadata[SCORING]["selection_split"] == 0.25


# --- categorical_features ------------------------------------------------------------


def _recorded_categorical(model):
    return model.study_.metadata[SCORING].get("categorical_features")


def test_categorical_column_names_are_read_from_the_dataframe(classifier, data):
    """Names crashed with a numpy UFuncTypeError."""
    X, y = data
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    model = classifier(categorical_features=["y", "w"]).fit(frame, y)
    assert _recorded_categorical(model) == [0, 2]
    assert model.predict(frame).shape == (len(y),)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([0.5], "expected integer column indices, column names or a boolean mask, got 0.5"),
        ([1, 2.0], "expected integer column indices, column names or a boolean mask, got 2.0"),
        ([4], "column index 4 outside 0..3"),
        ([-1], "column index -1 outside 0..3"),
        (["nope"], "unknown column 'nope'; X's columns: w, x, y, z"),
        ([True, False], "mask of length 2 for 4 features"),
    ],
)
def test_unusable_categorical_features_name_the_parameter(classifier, data, given, message):
    """``[0.5]`` was silently taken as column 0."""
    X, y = data
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    model = classifier(categorical_features=given)
    _refused_before_any_trial(model, frame, y, re.escape(f"categorical_features: {message}"))


def test_column_names_need_a_dataframe(classifier, data):
    X, y = data
    _refused_before_any_trial(
        classifier(categorical_features=["x"]), X, y, "column name 'x' needs X with column names"
    )


@pytest.mark.parametrize("given", [[False, True, False, True], np.array([1, 3]), [np.int64(3), 1]])
def test_masks_and_integer_indices_still_work(classifier, data, given):
    X, y = data
    assert _recorded_categorical(classifier(categorical_features=given).fit(X, y)) == [1, 3]


def test_another_categorical_handling_on_the_same_storage_is_refused(classifier, data, tmp_path):
    """The trials were scored with column 0 treated as categorical; a refit treating no
    column so would have been ranked and ensembled with them."""
    X, y = data
    path = tmp_path / "cat.db"
    classifier(n_trials=2, categorical_features=[0], storage=path).fit(X, y)
    with pytest.raises(StorageError, match=re.escape(
        "scored otherwise (categorical_features [0] stored, None given)"
    )):
        classifier(storage=path).fit(X, y)
    with pytest.raises(StorageError, match=re.escape("categorical_features [0] stored, [1] given")):
        classifier(categorical_features=[1], storage=path).fit(X, y)
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    again = classifier(categorical_features=["w"], storage=path).fit(frame, y)  # same column
    assert len(again.study_.trials) == 3


# --- cv: numbers, mappings, splitters ------------------------------------------------


def test_a_numpy_integer_cv_is_k_folds_and_resumes_a_plain_int(classifier, data, tmp_path):
    """``cv=np.int64(3)`` was refused."""
    X, y = data
    path = tmp_path / "np.db"
    model = classifier(n_trials=2, cv=np.int64(3), storage=path).fit(X, y)
    assert model.study_.metadata[SCORING]["cv"] == 3
    assert len(classifier(cv=3, storage=path).fit(X, y).study_.trials) == 3


def test_a_splitter_with_a_fixed_split_is_used(classifier, data):
    """``cv=KFold(3)`` was refused though the docstring promised it."""
    X, y = data
    model = classifier(cv=StratifiedKFold(4, shuffle=True, random_state=0)).fit(X, y)
    assert model.study_.metadata[SCORING]["cv"] == (
        "StratifiedKFold(n_splits=4, random_state=0, shuffle=True)"
    )
    assert model.predict(X).shape == (len(y),)
    assert cross_val_score(clone(model), X, y, cv=2).shape == (2,)


def test_a_splitter_drawing_other_rows_per_call_is_refused(classifier, data):
    X, y = data
    _refused_before_any_trial(
        classifier(cv=KFold(3, shuffle=True)), X, y,
        r"cv: KFold\(.*\) shuffles with random_state=None, .* give it an int random_state",
    )


def test_a_stored_splitter_resumes_with_the_same_splitter_only(classifier, data, tmp_path):
    X, y = data
    path = tmp_path / "kfold.db"
    model = classifier(n_trials=2, cv=KFold(3), storage=path).fit(X, y)
    assert len(clone(model).set_params(n_trials=3).fit(X, y).study_.trials) == 3
    with pytest.raises(StorageError, match=re.escape(
        "cv 'KFold(n_splits=3, random_state=None, shuffle=False)' stored, "
        "'KFold(n_splits=4, random_state=None, shuffle=False)' given"
    )):
        classifier(cv=KFold(4), storage=path).fit(X, y)


def test_a_reshuffled_holdout_with_a_posthoc_ensemble_gives_estimator_advice(classifier, data):
    """The error said "give the study validation_targets=", which fit sets itself."""
    X, y = data
    cv = {"scheme": "holdout", "ratio": 0.3, "reshuffle": True}
    with pytest.raises(ExperimentError, match="no fixed validation set") as error:
        classifier(cv=cv, ensemble="posthoc").fit(X, y)
    message = str(error.value)
    assert "reshuffle: false" in message and "ensemble='best'" in message
    assert "validation_targets" not in message
    assert classifier(cv=cv, ensemble="best").fit(X, y).predict(X).shape == (len(y),)


def test_the_fitted_ensemble_refits_as_sklearn_tools_expect(classifier, data):
    """Members of a k-fold search are fold ensembles themselves; clone-then-fit refits
    them all on the given rows."""
    X, y = data
    ensemble = classifier().fit(X, y).ensemble_
    scores = cross_val_score(ensemble, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.5


def test_text_and_category_columns_of_a_dataframe_become_categorical_codes(tmp_path, classifier):
    """A DataFrame with a string column failed: "could not convert string to float"."""
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], 90)
    size = rng.normal(size=90)
    X = pd.DataFrame({
        "colour": colour, "size": size, "shape": pd.Categorical(rng.choice(["a", "b"], 90)),
    })
    X.loc[3, "colour"] = None  # missing: NaN, imputed by the space's pipeline
    y = ((colour == "red") ^ (size > 0.5)).astype(int)
    model = classifier(ensemble="best", storage=tmp_path / "s.db").fit(X, y)
    assert model.text_columns_.levels == {"colour": ("blue", "green", "red"), "shape": ("a", "b")}
    assert model.study_.metadata["scoring"]["categorical_features"] == [0, 2]
    unseen = X.copy()
    unseen.loc[0, "colour"] = "purple"  # a level fit never saw: NaN as well
    assert model.predict(unseen).shape == (90,)
    assert model.score(X, y) > 0.8


def test_string_dtype_with_pd_na_and_numbers_as_objects(classifier, tmp_path):
    """A "string" column with pd.NA crashed ("boolean value of NA is ambiguous"); an
    object column of numbers became categorical, unseen values NaN at predict."""
    rng = np.random.default_rng(1)
    size = rng.normal(size=90)
    X = pd.DataFrame({
        "colour": pd.array(rng.choice(["red", "blue"], 90), dtype="string"),
        "size": pd.Series(size, dtype=object),
    })
    X.loc[5, "colour"] = pd.NA
    model = classifier(ensemble="best").fit(X, (size > 0).astype(int))
    assert model.text_columns_.levels == {"colour": ("blue", "red")}
    assert model.predict(X).shape == (90,)


def test_text_that_looks_like_numbers_is_a_text_column(classifier):
    """Zip codes as text were read as numbers (leading zeros lost), and a new value at
    predict crashed: "could not convert string to float: 'unknown'"."""
    rng = np.random.default_rng(2)
    zips = rng.choice(["02139", "10001", "94105"], 90)
    X = pd.DataFrame({"zip": zips, "size": rng.normal(size=90)})
    model = classifier(ensemble="best").fit(X, (zips == "02139").astype(int))
    assert model.text_columns_.levels == {"zip": ("02139", "10001", "94105")}
    unseen = X.copy()
    unseen.loc[0, "zip"] = "unknown"
    assert model.predict(unseen).shape == (90,)


def test_a_study_stored_before_categorical_features_were_recorded_resumes(classifier, data,
                                                                          tmp_path):
    """Older versions recorded only cv and loss: the missing key is "not recorded", not a
    difference."""
    from ensembo.storage import SQLiteStorage

    X, y = data
    path = tmp_path / "s.db"
    classifier(categorical_features=[0], storage=path).fit(X, y).study_.close()
    storage = SQLiteStorage(path)
    meta = storage.read_meta()
    del meta["metadata"][SCORING]["categorical_features"]  # as the old code wrote it
    storage.write_meta(meta)
    storage.close()
    classifier(categorical_features=[0], storage=path, n_trials=4).fit(X, y)
