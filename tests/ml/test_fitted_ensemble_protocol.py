"""The fitted ensemble follows scikit-learn's estimator protocol: tools that check or
refit an estimator accept it, and ``clone`` then ``fit`` gives a working ensemble."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.inspection import permutation_importance
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.validation import check_is_fitted

from ensembo.ml import FittedEnsemble


@pytest.fixture
def data():
    return make_classification(n_samples=120, n_features=5, random_state=0)


def _trees(X, y, depths=(1, 3)):
    return [DecisionTreeClassifier(max_depth=d, random_state=0).fit(X, y) for d in depths]


def _ensemble(X, y, weights=(3.0, 1.0)):
    return FittedEnsemble(members=_trees(X, y), weights=list(weights), classes=np.unique(y))


def test_sklearn_tools_that_check_fitting_accept_it(data):
    """They raised "is not an estimator instance": the ensemble had no fit."""
    import matplotlib

    matplotlib.use("Agg")
    from sklearn.metrics import RocCurveDisplay

    X, y = data
    ensemble = _ensemble(X, y)
    calibrated = CalibratedClassifierCV(FrozenEstimator(ensemble)).fit(X, y)
    assert calibrated.predict_proba(X).shape == (len(y), 2)
    assert RocCurveDisplay.from_estimator(ensemble, X, y).roc_auc > 0.5
    importances = permutation_importance(ensemble, X, y, n_repeats=2, random_state=0)
    assert importances.importances_mean.shape == (X.shape[1],)


def test_a_clone_is_unfitted_until_fit_refits_its_members(data):
    """A clone has unfitted members: it said it was fitted and failed inside a member."""
    X, y = data
    ensemble = _ensemble(X, y)
    copy = clone(ensemble)
    with pytest.raises(NotFittedError, match="FittedEnsemble instance is not fitted"):
        check_is_fitted(copy)
    with pytest.raises(NotFittedError, match="FittedEnsemble instance is not fitted"):
        copy.predict(X)
    assert copy.fit(X, y) is copy
    check_is_fitted(copy)
    assert copy.weights == [3.0, 1.0]
    np.testing.assert_allclose(copy.predict_proba(X), ensemble.predict_proba(X))


def test_fit_trains_clones_on_the_given_rows_and_keeps_the_members_as_given(data):
    X, y = data
    ensemble = _ensemble(X, y)
    given = list(ensemble.members)
    ensemble.fit(X[:50], y[:50])
    assert ensemble.members == given  # a constructor parameter, left as given
    assert [m.tree_.n_node_samples[0] for m in ensemble.members_] == [50, 50]
    assert all(m.tree_.n_node_samples[0] == len(y) for m in given)


def test_fit_refuses_labels_outside_the_ensembles_classes(data):
    X, y = data
    with pytest.raises(ValueError, match=r"y has labels \[7\] that are not among .* \[0, 1\]"):
        _ensemble(X, y).fit(X, np.where(y == 1, 7, 0))


def test_a_regression_ensemble_refits_too():
    X, y = make_regression(n_samples=60, n_features=3, random_state=0)
    members = [DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)]
    refitted = clone(FittedEnsemble(members=members, weights=[1.0])).fit(X, y)
    np.testing.assert_allclose(refitted.predict(X), members[0].predict(X))


def test_feature_counts_and_names_come_from_the_members(data):
    X, y = data
    ensemble = _ensemble(X, y)
    assert ensemble.n_features_in_ == 5 and not hasattr(ensemble, "feature_names_in_")
    frame = pd.DataFrame(X, columns=list("abcde"))
    named = _ensemble(frame, y)
    assert named.feature_names_in_.tolist() == list("abcde")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named.predict(frame)
    with pytest.raises(ValueError, match="X has 4 features, but FittedEnsemble is expecting 5"):
        ensemble.predict(X[:, :4])


def test_a_dataframe_warns_once_not_once_per_member(data):
    X, y = data
    ensemble = _ensemble(X, y)  # members fitted without feature names
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predicted = ensemble.predict(pd.DataFrame(X, columns=list("abcde")))
    assert [str(w.message) for w in caught] == [
        "X has feature names, but FittedEnsemble was fitted without feature names"
    ]
    np.testing.assert_array_equal(predicted, ensemble.predict(X))


def test_a_member_scikit_learn_cannot_clone_counts_as_fitted(data):
    """Only scikit-learn estimators are asked whether they are fitted: a foreign model
    with ``fit`` but no ``get_params`` (nor fitted ``_`` attributes) still predicts."""
    X, y = data
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)

    class Foreign:
        def fit(self, X, y):
            return self

        def predict_proba(self, X):
            return tree.predict_proba(X)

    ensemble = FittedEnsemble(members=[Foreign()], weights=[1.0], classes=np.unique(y))
    check_is_fitted(ensemble)
    np.testing.assert_allclose(ensemble.predict_proba(X), tree.predict_proba(X))
