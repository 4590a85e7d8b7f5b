"""A tiny executable space for the estimator tests: one decision-tree hyperparameter.

Importable by name (conftest.py puts this folder on ``sys.path``) so that estimators
holding it can be pickled, as several scikit-learn checks and parallel trials do.
"""

from __future__ import annotations

import time

from ConfigSpace import ConfigurationSpace
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ensembo.spaces import Space


class TreeDepthSpace(Space):
    """``max_depth`` of a decision tree; builds a classifier or a regressor."""

    def __init__(self, regression: bool = False):
        super().__init__(ConfigurationSpace(name="tree-depth", space={"max_depth": (1, 6)}))
        self.regression = regression

    def build(self, config, categorical_features=None, random_state=None):
        learner = DecisionTreeRegressor if self.regression else DecisionTreeClassifier
        return learner(max_depth=config["max_depth"], random_state=0)


class BrokenTreeSpace(TreeDepthSpace):
    """Builds trees that refuse to fit (an invalid option): every trial fails."""

    def build(self, config, categorical_features=None, random_state=None):
        return super().build(config).set_params(min_samples_leaf=-1)


class _SlowTree(DecisionTreeClassifier):
    """Sleeps before fitting, as an SVC with a huge ``C`` does on hard data."""

    def fit(self, X, y, sample_weight=None, check_input=True):
        time.sleep(60)
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


class HangingTreeSpace(TreeDepthSpace):
    """Trees deeper than 3 take a minute to fit; the others fit at once."""

    def build(self, config, categorical_features=None, random_state=None):
        if config["max_depth"] > 3:
            return _SlowTree(max_depth=config["max_depth"], random_state=0)
        return super().build(config)


class _DoubledProbabilityTree(DecisionTreeClassifier):
    """Reports class probabilities times 2: scores, not a distribution."""

    def predict_proba(self, X, check_input=True):
        return 2.0 * super().predict_proba(X, check_input=check_input)


class DoubledProbabilitySpace(TreeDepthSpace):
    """Trees deeper than 3 report probabilities that sum to 2; the others are sound."""

    def build(self, config, categorical_features=None, random_state=None):
        if config["max_depth"] > 3:
            return _DoubledProbabilityTree(max_depth=config["max_depth"], random_state=0)
        return super().build(config)
