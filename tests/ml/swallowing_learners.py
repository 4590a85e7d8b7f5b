"""Learners that catch the Ctrl-C arriving during their fit, as scikit-learn's MLP does.

Importable by name (conftest.py puts this folder on ``sys.path``) so that an experiment
file's inline space can name them (``estimator: swallowing_learners.InterruptSwallower``).
"""

from __future__ import annotations

import signal
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neural_network import MLPClassifier


def interrupt_this_process() -> None:
    """Send this process a Ctrl-C. CPython runs the Python handler before
    ``raise_signal`` returns, so a handler that raises raises here (the tests check
    that the learner saw it)."""
    signal.raise_signal(signal.SIGINT)


class InterruptSwallower(ClassifierMixin, BaseEstimator):
    """Its ``interrupted_fit``-th fit (counted over all instances, from 1) gets a Ctrl-C
    and swallows the KeyboardInterrupt with a warning, returning a model as if done, or
    raising ``turned_into`` instead when set."""

    interrupted_fit: int | None = 1
    turned_into: type[Exception] | None = None
    fits = 0
    swallowed = 0

    def __init__(self, depth: int = 1):
        self.depth = depth

    @classmethod
    def reset(
        cls, interrupted_fit: int | None, turned_into: type[Exception] | None = None
    ) -> None:
        cls.interrupted_fit, cls.turned_into = interrupted_fit, turned_into
        cls.fits, cls.swallowed = 0, 0

    def fit(self, X, y):
        InterruptSwallower.fits += 1
        if InterruptSwallower.fits == InterruptSwallower.interrupted_fit:
            try:
                interrupt_this_process()
            except KeyboardInterrupt:
                InterruptSwallower.swallowed += 1
                if InterruptSwallower.turned_into is not None:
                    raise InterruptSwallower.turned_into("training stopped") from None
                warnings.warn("Training interrupted by user.", stacklevel=2)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


class MLPInterruptedAtFirstEpoch(MLPClassifier):
    """A real MLPClassifier (adam) that gets a Ctrl-C after its first epoch: its own
    ``except KeyboardInterrupt`` in ``_fit_stochastic`` swallows it."""

    epochs_seen = 0

    def _update_no_improvement_count(self, *args, **kwargs):
        MLPInterruptedAtFirstEpoch.epochs_seen += 1
        if MLPInterruptedAtFirstEpoch.epochs_seen == 1:
            interrupt_this_process()
        return super()._update_no_improvement_count(*args, **kwargs)
