"""A weighted set of fitted models, usable wherever a fitted sklearn estimator is.

It is how ensembo hands back what the search built: the members of an
:class:`ensembo.Ensemble` (trial numbers and weights, chosen by an ensemble strategy)
turned into fitted models, and also the fold models of one k-fold trial (equal
weights). Classification averages the members' class probabilities, exactly as the
validation predictions were combined; regression averages values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from ensembo.ml.predictions import class_probabilities, regression_values


def combine_contributions(
    predictions: Sequence[np.ndarray],
    weights: Sequence[float],
    contributions: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """``sum_i w_i * contributions(predictions_i)`` (identity without ``contributions``)."""
    share = contributions or (lambda p: np.asarray(p, dtype=float))
    return sum(w * share(p) for w, p in zip(weights, predictions, strict=True))


class FittedEnsemble(BaseEstimator):
    """``members`` are fitted estimators; ``weights`` need not be normalized.

    ``classes`` (classification only) fixes the probability columns; members trained
    on a subset of the classes are mapped onto them. ``contributions`` is what one
    member adds to the ensemble total given its probabilities — the loss's own
    ``contributions`` (one-hot votes for the vote losses such as ``zero-one``), so the
    fitted ensemble predicts exactly as the ensemble strategy scored it; by default the
    probabilities themselves (probability averaging).

    A vote can tie. The vote losses count a tied example as an error (Lévesque's
    Table 4.2), so the ensemble's validation loss is an upper bound there; a prediction
    has to name a class, and :meth:`predict` names the tied class with the highest
    weighted mean probability (Lévesque draws one at random), not simply the first
    class, which would favour whichever class sorts first.
    """

    def __init__(
        self,
        members: Sequence[Any],
        weights: Sequence[float],
        classes: np.ndarray | None = None,
        contributions: Callable[[np.ndarray], np.ndarray] | None = None,
    ):
        self.members = members
        self.weights = weights
        self.classes = classes
        self.contributions = contributions

    def __sklearn_is_fitted__(self) -> bool:
        return True

    @property
    def _normalized_weights(self) -> np.ndarray:
        weights = np.asarray(self.weights, dtype=float)
        if (
            len(weights) != len(self.members)
            or not len(weights)
            or weights.sum() <= 0
            or np.any(weights < 0)
        ):
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

    def __sklearn_tags__(self):
        """Classifier or regressor by ``classes``, for ``is_classifier`` and the scorers
        (scikit-learn >= 1.6 reads tags; older versions read ``_estimator_type``)."""
        from sklearn.utils import ClassifierTags, RegressorTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = self._estimator_type
        if self.classes is None:
            tags.regressor_tags = RegressorTags()
        else:
            tags.classifier_tags = ClassifierTags()
        return tags

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy (classifier) or R² (regressor), as scikit-learn's mixins define it."""
        from sklearn.metrics import accuracy_score, r2_score

        metric = r2_score if self.classes is None else accuracy_score
        return float(metric(y, self.predict(X), sample_weight=sample_weight))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Weighted total of the members' contributions (vote shares or probabilities).

        A single member gives its own probabilities: its one-hot vote would throw away
        the ranking that ROC AUC and log-loss score (AUC 0.936 instead of 0.986 on
        breast-cancer), and its vote names the same class as its probabilities."""
        probabilities = self._probabilities(X)
        if len(self.members) == 1:
            return probabilities[0]
        return self._combined(probabilities)

    def _probabilities(self, X: Any) -> list[np.ndarray]:
        return [class_probabilities(m, X, self.classes_) for m in self.members]

    def _combined(self, probabilities: list[np.ndarray]) -> np.ndarray:
        return combine_contributions(probabilities, self._normalized_weights, self.contributions)

    def predict(self, X: Any) -> np.ndarray:
        if self.classes is None:
            weights = self._normalized_weights
            return sum(
                w * regression_values(m, X) for w, m in zip(weights, self.members, strict=True)
            )
        probabilities = self._probabilities(X)
        totals = self._combined(probabilities)
        if self.contributions is None:
            return self.classes_[np.argmax(totals, axis=1)]
        mean = combine_contributions(probabilities, self._normalized_weights)
        return self.classes_[break_vote_ties(totals, mean)]


def leading_votes(votes: np.ndarray) -> np.ndarray:
    """Boolean (n, k): the columns that share each row's largest vote."""
    return votes >= votes.max(axis=1, keepdims=True) - 1e-12


def break_vote_ties(votes: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Column of the largest vote per row; among tied columns, the largest ``tiebreak``."""
    return np.argmax(np.where(leading_votes(votes), tiebreak, -np.inf), axis=1)
