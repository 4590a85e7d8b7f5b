"""scikit-learn's estimator checks on EnsemboClassifier / EnsemboRegressor.

Tiny search (random search, 3 trials, 2 folds) over a one-hyperparameter tree space
keeps the whole module fast; every check that applies runs.
"""

from __future__ import annotations

import sys

from sklearn.utils.estimator_checks import parametrize_with_checks

from ensembo.sklearn import EnsemboClassifier, EnsemboRegressor

TreeDepthSpace = sys.modules["tree_spaces"].TreeDepthSpace  # imported by conftest.py

ESTIMATORS = [
    EnsemboClassifier(TreeDepthSpace(), n_trials=3, cv=2, surrogate=None),
    EnsemboRegressor(TreeDepthSpace(regression=True), n_trials=3, cv=2, surrogate=None),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
