"""An executable test space whose configurations may fail on purpose.

Importable by name (conftest.py puts this folder on ``sys.path``) so that parallel
trials can unpickle it in joblib worker processes.
"""

from __future__ import annotations

import time

import numpy as np
from ConfigSpace import Categorical, ConfigurationSpace, Integer
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier

from ensembo.spaces import Space


class Misbehaving(ClassifierMixin, BaseEstimator):
    """Fails in the way its ``behaviour`` says: raise or hang in fit, or predict NaN."""

    def __init__(self, behaviour: str = "raise"):
        self.behaviour = behaviour

    def fit(self, X, y):
        if self.behaviour == "raise":
            raise RuntimeError("this learner always fails")
        if self.behaviour == "hang":  # as an SVC with a huge C on hard data
            time.sleep(60)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        if self.behaviour == "nan":
            return np.full((len(X), len(self.classes_)), np.nan)
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


class FlakySpace(Space):
    """A tree depth, and a behaviour that is ``fit`` or one of three failures."""

    def __init__(self, behaviours=("fit", "raise", "nan", "garbage")):
        configspace = ConfigurationSpace(name="flaky")
        configspace.add([Categorical("behaviour", list(behaviours)), Integer("depth", (1, 8))])
        super().__init__(configspace)

    def build(self, config, categorical_features=None, random_state=None):
        if config["behaviour"] == "fit":
            return DecisionTreeClassifier(max_depth=config["depth"], random_state=0)
        if config["behaviour"] == "garbage":
            return _GarbageLabels()
        return Misbehaving(config["behaviour"])


class _GarbageLabels(ClassifierMixin, BaseEstimator):
    """No predict_proba: its labels are one-hot encoded, and none is a training class."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.full(len(X), "not-a-class", dtype=object)
