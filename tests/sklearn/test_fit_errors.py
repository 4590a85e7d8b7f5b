"""What ``fit`` refuses, and what it says, when the search cannot give a usable model."""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from ensembo.errors import ExperimentError, StorageError, TrialError
from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor

BrokenTreeSpace = sys.modules["tree_spaces"].BrokenTreeSpace  # imported by conftest.py


@pytest.fixture
def data():
    return make_classification(n_samples=90, n_features=4, random_state=0)


# --- storage reused on other data (finding 1) ---------------------------------------


def test_a_storage_fitted_on_other_labels_is_refused_before_any_trial(tmp_path, tree_space, data):
    X, y = data
    path = tmp_path / "skl.db"
    model = EnsemboClassifier(tree_space, n_trials=3, cv=3, surrogate=None, storage=path)
    model.fit(X, y)
    shuffled = np.random.default_rng(0).permutation(y)
    with pytest.raises(StorageError, match="holds a search fitted on different data") as error:
        clone(model).fit(X, shuffled)
    message = str(error.value)
    assert str(path) in message and "new storage path" in message
    assert f"delete {path} and {tmp_path / 'skl.models'}/" in message
    assert len(model.study_.trials) == 3  # nothing was added to the stored study
    from ensembo import Study

    assert len(Study.load(path).trials) == 3



@pytest.mark.parametrize("spelling", ["~/skl.db", "sqlite:///{tmp}/skl.db"])
def test_a_storage_fitted_on_other_labels_is_refused_however_its_path_is_spelt(
    tmp_path, monkeypatch, tree_space, data, spelling
):
    """The check read the literal spelling, so from ``~/skl.db`` it found no study and
    let a fit on other labels go on into the stored one."""
    monkeypatch.setenv("HOME", str(tmp_path))
    X, y = data
    storage = spelling.format(tmp=tmp_path)
    EnsemboClassifier(tree_space, n_trials=3, cv=3, surrogate=None, storage=storage).fit(X, y)
    other = EnsemboClassifier(tree_space, n_trials=3, cv=3, surrogate=None, storage=storage)
    with pytest.raises(StorageError, match="holds a search fitted on different data") as error:
        other.fit(X, np.random.default_rng(0).permutation(y))
    assert f"delete {tmp_path / 'skl.db'} and {tmp_path / 'skl.models'}/" in str(error.value)

def test_a_storage_fitted_on_other_rows_is_refused_not_a_missing_predictions_error(
    tmp_path, tree_space, data
):
    X, y = data
    path = tmp_path / "skl.db"
    EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path).fit(X, y)
    with pytest.raises(StorageError, match=re.escape(f"storage {path} holds a search fitted")):
        EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path).fit(
            X[:60], y[:60]
        )


def test_the_same_data_resumes_the_stored_search(tmp_path, tree_space, data):
    X, y = data
    path = tmp_path / "skl.db"
    first = EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path)
    first.fit(X, y)
    again = EnsemboClassifier(tree_space, n_trials=3, cv=3, surrogate=None, storage=path)
    again.fit(X.copy(), y.copy())
    assert len(again.study_.trials) == 3  # two resumed, one new


@pytest.mark.parametrize(
    ("first", "second"),
    [({"y": lambda y: y.astype(str)}, {"y": lambda y: pd.Series(y.astype(str), dtype=object)}),
     ({"y": lambda y: y.astype(np.int64)}, {"y": lambda y: y.astype(np.int32)}),
     ({"loss": None}, {"loss": "zero-one"}),
     ({"loss": "zero-one"}, {"loss": None}),
     ({"cv": {"scheme": "kfold", "folds": 3}}, {"cv": {"folds": 3, "scheme": "kfold"}})],
    ids=["str-then-object-labels", "int64-then-int32", "default-loss-by-name",
         "default-loss-unnamed", "cv-key-order"],
)
def test_the_same_data_and_scoring_spelled_otherwise_resume(tmp_path, tree_space, data,
                                                           first, second):
    """Each was refused as other data or other scoring, although the docs say the same
    data resumes."""
    X, y = data
    path = tmp_path / "skl.db"

    def fit(spelling, n_trials):
        options = {"cv": 3, **{k: v for k, v in spelling.items() if k != "y"}}
        labels = spelling.get("y", lambda y: y)(y)
        return EnsemboClassifier(tree_space, n_trials=n_trials, surrogate=None, storage=path,
                                 **options).fit(X, labels)

    fit(first, 2)
    assert len(fit(second, 3).study_.trials) == 3  # two resumed, one new


def test_studies_stored_with_the_earlier_digest_and_cv_record_resume(tmp_path, tree_space, data):
    """Studies stored before the digest ignored the labels' dtype, the cv mapping's keys
    were sorted and an unset loss matched its default's name kept the old forms: they
    must still resume."""
    import joblib

    from ensembo.ml.stored_search import DATA_KEY
    from ensembo.storage import open_existing_storage

    X, y = data
    path = tmp_path / "skl.db"
    cv = {"scheme": "kfold", "folds": 3}
    EnsemboClassifier(tree_space, n_trials=2, cv=cv, surrogate=None, storage=path).fit(X, y)
    storage = open_existing_storage(path)
    meta = storage.read_meta()
    meta["metadata"][DATA_KEY] = joblib.hash((X, y))
    meta["metadata"]["scoring"]["cv"] = repr(cv)  # in the order it was written
    meta["metadata"]["scoring"]["loss"] = "zero-one"  # the default, recorded by name
    storage.write_meta(meta)
    storage.close()
    again = EnsemboClassifier(tree_space, n_trials=3, cv=cv, surrogate=None, storage=path)
    assert len(again.fit(X, y).study_.trials) == 3


def test_another_cv_on_the_same_storage_is_refused(tmp_path, tree_space, data):
    """Refit with cv=5 on a cv=3 storage, the new trials were ranked and ensembled with
    the old ones although their losses came from another validation."""
    X, y = data
    path = tmp_path / "skl.db"
    EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path).fit(X, y)
    with pytest.raises(StorageError, match=r"scored otherwise \(cv 3 stored, 5 given\)"):
        EnsemboClassifier(tree_space, n_trials=3, cv=5, surrogate=None, storage=path).fit(X, y)
    from ensembo import Study

    assert len(Study.load(path).trials) == 2


def test_a_study_stored_without_a_fingerprint_is_compared_by_its_targets(tmp_path, tree_space,
                                                                          data):
    """A study written by ``Study`` itself (or an older version) has no data digest."""
    from ensembo import Study

    X, y = data
    path = tmp_path / "plain.db"
    Study(tree_space, surrogate=None, validation_targets=1 - y, task="classification",
          storage=path)
    with pytest.raises(StorageError, match="fitted on different data"):
        EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path).fit(X, y)


# --- a loss for the other task; no trial completed (finding 2) ------------------------


def test_a_loss_for_the_other_task_is_refused_up_front(tree_space, tree_regression_space, data):
    X, y = data
    with pytest.raises(ExperimentError, match="loss: loss 'mse' does not fit a classification "
                                              "task") as error:
        EnsemboClassifier(tree_space, n_trials=2, cv=3, loss="mse").fit(X, y)
    assert "the classification default is 'zero-one'" in str(error.value)
    with pytest.raises(ExperimentError, match="loss 'zero-one' does not fit a regression task"):
        EnsemboRegressor(tree_regression_space, n_trials=2, cv=3, loss="zero-one").fit(
            X, y.astype(float)
        )


def test_when_no_trial_completes_the_errors_are_in_the_message_and_study_is_kept(data):
    X, y = data
    model = EnsemboClassifier(BrokenTreeSpace(), n_trials=3, cv=3, surrogate=None)
    with pytest.raises(TrialError, match="all 3 finished trials failed") as error:
        model.fit(X, y)
    assert "trials 0, 1, 2: " in str(error.value)
    assert "min_samples_leaf" in str(error.value)
    assert len(model.study_.trials) == 3
    assert all("min_samples_leaf" in t.error for t in model.study_.trials)


# --- single class, bad cv (finding 3) -------------------------------------------------


def test_a_single_class_is_a_value_error_about_classes(tree_space):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="needs at least 2 classes, y has only 1 class: 1"):
        EnsemboClassifier(tree_space, n_trials=2, cv=2).fit(X, np.ones(30, dtype=int))
    with pytest.raises(ValueError, match="only 1 class: 'yes'"):
        EnsemboClassifier(tree_space, n_trials=2, cv=2).fit(X, np.array(["yes"] * 30))


@pytest.mark.parametrize("selection_split", [None, 0.2])
def test_a_seed_beyond_scikit_learns_random_state_is_refused_before_any_trial(
    tree_space, data, selection_split
):
    """Accepted, 2**32 failed every trial (the learners' random_state) or escaped as
    scikit-learn's InvalidParameterError from train_test_split, naming no parameter."""
    X, y = data
    model = EnsemboClassifier(tree_space, n_trials=2, cv=3, seed=2**32,
                              selection_split=selection_split)
    with pytest.raises(ExperimentError, match=r"^seed: must be at most 4294967295 \(2\*\*32 - 1\) "
                                              "for an estimator"):
        model.fit(X, y)
    assert not hasattr(model, "study_")
