"""scikit-learn's estimator checks on EnsemboClassifier / EnsemboRegressor.

Tiny search (random search, 3 trials, 2 folds) over a one-hyperparameter tree space
keeps the whole module fast. Every check runs; none is skipped by us. scikit-learn
itself skips its two array-API checks unless ``SCIPY_ARRAY_API=1`` is set (they pass
with it: the estimators convert input to numpy).
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
