"""A weighted set of fitted models, usable wherever a fitted sklearn estimator is.

It is how ensembo hands back what the search built: the members of an
:class:`ensembo.Ensemble` (trial numbers and weights, chosen by an ensemble strategy)
turned into fitted models, and also the fold models of one k-fold trial (equal
weights). Classification averages the members' class probabilities, exactly as the
validation predictions were combined; regression averages values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from ensembo.ml.predictions import class_probabilities, regression_values


class FittedEnsemble(BaseEstimator):
    """``members`` are fitted estimators; ``weights`` need not be normalized.

    ``classes`` (classification only) fixes the probability columns; members trained
    on a subset of the classes are mapped onto them.
    """

    def __init__(self, members: Sequence[Any], weights: Sequence[float], classes: np.ndarray | None = None):
        self.members = members
        self.weights = weights
        self.classes = classes

    def __sklearn_is_fitted__(self) -> bool:
        return True

    @property
    def _normalized_weights(self) -> np.ndarray:
        weights = np.asarray(self.weights, dtype=float)
        if len(weights) != len(self.members) or not len(weights) or weights.sum() <= 0 or np.any(weights < 0):
            raise ValueError(
                f"need one non-negative weight per member with a positive sum; got "
                f"{len(self.members)} members and weights {weights.tolist()}"
            )
        return weights / weights.sum()

    @property
    def classes_(self) -> np.ndarray:
        if self.classes is None:
            raise AttributeError("a regression ensemble has no classes_")
        return np.asarray(self.classes)

    @property
    def _estimator_type(self) -> str:
        return "regressor" if self.classes is None else "classifier"

    def predict_proba(self, X: Any) -> np.ndarray:
        classes = self.classes_
        weights = self._normalized_weights
        return sum(w * class_probabilities(m, X, classes) for w, m in zip(weights, self.members))

    def predict(self, X: Any) -> np.ndarray:
        if self.classes is None:
            weights = self._normalized_weights
            return sum(w * regression_values(m, X) for w, m in zip(weights, self.members))
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
