"""A fit that raises leaves the estimator unfitted, as ``check_is_fitted`` sees it (on
the estimator and on a Pipeline holding it) and as ``predict`` does (audit: refusals left
``n_features_in_``, ``text_columns_`` and ``classes_`` behind, so ``check_is_fitted``
passed while ``predict`` raised NotFittedError)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from ensembo.errors import ExperimentError, StorageError, TrialError
from ensembo.sklearn import EnsemboClassifier

BrokenTreeSpace = sys.modules["tree_spaces"].BrokenTreeSpace  # imported by conftest.py

X, Y = make_classification(n_samples=90, n_features=4, random_state=0)


def _classifier(space, **params):
    return EnsemboClassifier(space, **{"n_trials": 2, "cv": 3, "surrogate": None, **params})


def _fitted_attributes(estimator):
    return sorted(n for n in vars(estimator) if n.endswith("_") and not n.startswith("_"))


def _assert_unfitted(estimator):
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    with pytest.raises(NotFittedError):
        estimator.predict(X)


REFUSALS = {
    "a single class": ({}, np.zeros(len(Y)), "at least 2 classes"),
    "a cv of two rows": ({"cv": [1, 2]}, Y, "cv"),
    "a categorical column X lacks": ({"categorical_features": [9]}, Y, "column index 9"),
    "an invalid n_trials": ({"n_trials": 0}, Y, "n_trials"),
}


@pytest.mark.parametrize("refusal", REFUSALS, ids=list(REFUSALS))
def test_a_refused_fit_sets_no_fitted_attribute(tree_space, refusal):
    params, y, message = REFUSALS[refusal]
    estimator = _classifier(tree_space, **params)
    with pytest.raises(ExperimentError, match=message):
        estimator.fit(X, y)
    assert _fitted_attributes(estimator) == []  # were n_features_in_, text_columns_, classes_
    _assert_unfitted(estimator)


@pytest.mark.parametrize("refusal", REFUSALS, ids=list(REFUSALS))
def test_a_refused_refit_leaves_no_earlier_fit_behind(tree_space, refusal):
    """Neither half new (the old ensemble behind new classes) nor the old fit with the
    new parameters: a fit that raises makes the estimator unfitted, also for an invalid
    parameter (which left the whole old fit in place)."""
    params, y, message = REFUSALS[refusal]
    estimator = _classifier(tree_space).fit(X, Y)
    check_is_fitted(estimator)
    with pytest.raises(ExperimentError, match=message):
        estimator.set_params(**params).fit(X, y)
    assert _fitted_attributes(estimator) == []
    _assert_unfitted(estimator)


def test_a_pipeline_with_a_refused_fit_is_unfitted(tree_space):
    pipeline = make_pipeline(StandardScaler(), _classifier(tree_space))
    with pytest.raises(ExperimentError, match="at least 2 classes"):
        pipeline.fit(X, np.zeros(len(Y)))
    with pytest.raises(NotFittedError):
        check_is_fitted(pipeline)
    check_is_fitted(pipeline.fit(X, Y))  # and fitted once a fit succeeds
    assert pipeline.predict(X).shape == (len(Y),)


def test_a_storage_holding_other_data_leaves_the_estimator_unfitted(tmp_path, tree_space):
    path = tmp_path / "run.db"
    _classifier(tree_space, storage=path).fit(X, Y)
    refused = _classifier(tree_space, storage=path)
    with pytest.raises(StorageError, match="holds a search fitted on different data"):
        refused.fit(X[:60], Y[:60])
    assert _fitted_attributes(refused) == []
    _assert_unfitted(refused)


def test_when_every_trial_fails_only_the_study_is_kept(tree_space):
    """The trials' errors stay readable in ``study_``; nothing else of the fit does."""
    estimator = _classifier(tree_space).fit(X, Y)
    estimator.set_params(space=BrokenTreeSpace())
    with pytest.raises(TrialError, match="all 2 finished trials failed"):
        estimator.fit(X, Y)
    assert _fitted_attributes(estimator) == ["study_"]
    assert all("min_samples_leaf" in t.error for t in estimator.study_.trials)
    _assert_unfitted(estimator)


def test_a_fitted_estimator_is_fitted_for_check_is_fitted(tree_space):
    estimator = _classifier(tree_space)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    check_is_fitted(estimator.fit(X, Y))
    assert estimator.__sklearn_is_fitted__()
