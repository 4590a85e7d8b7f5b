"""A weighted set of fitted models, usable wherever a fitted sklearn estimator is.

It is how ensembo hands back what the search built: the members of an
:class:`ensembo.Ensemble` (trial numbers and weights, chosen by an ensemble strategy)
turned into fitted models, and also the fold models of one k-fold trial (equal
weights). Classification combines the members' class probabilities as the strategy
combined their validation predictions (a weighted vote or average); regression
averages values.

It follows scikit-learn's protocol, so that tools which check or refit an estimator
(``FrozenEstimator``, ``CalibratedClassifierCV``, ``permutation_importance``,
``cross_val_score``) accept it: ``fit(X, y)`` refits clones of the members on ``(X, y)``
and keeps the weights, and ``clone`` gives an unfitted ensemble of unfitted members.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ensembo.ensemble import break_vote_ties, leading_votes
from ensembo.ml.predictions import class_probabilities, regression_values

__all__ = ["FittedEnsemble", "break_vote_ties", "combine_contributions", "leading_votes"]


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
    member adds to the ensemble total given its probabilities — for an ensemble of a
    strategy, those of its :attr:`~ensembo.Ensemble.combination` (one-hot votes for a
    vote; see :func:`~ensembo.plugins.losses.ensemble_loss.member_contributions`), so
    the fitted ensemble predicts exactly as the strategy scored it; by default the
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

    def fit(self, X: Any, y: Any) -> FittedEnsemble:
        """Refit a clone of every member on ``(X, y)``, keeping the weights.

        This is what scikit-learn's clone-then-fit tools (``cross_val_score``, a
        ``CalibratedClassifierCV`` that is not frozen) expect: the same ensemble,
        trained on their data. The weights were chosen by the search and are not
        re-chosen; the refitted members are kept in ``members_`` (``members``, a
        constructor parameter, stays as given)."""
        if self.classes is not None:
            self._check_known_labels(np.asarray(y))
        self.members_ = [clone(member).fit(X, y) for member in self.members]
        return self

    def _check_known_labels(self, y: np.ndarray) -> None:
        """The probability columns are ``classes``: a label outside them has no column."""
        unknown = np.setdiff1d(np.unique(y), np.asarray(self.classes))
        if unknown.size:
            raise ValueError(
                f"y has labels {unknown.tolist()[:5]} that are not among this ensemble's "
                f"classes {np.asarray(self.classes).tolist()}"
            )

    @property
    def _models(self) -> Sequence[Any]:
        """The models that predict: those of the last ``fit``, else the members as given."""
        return self.__dict__.get("members_", self.members)

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted when its members are: ``clone`` gives unfitted members, which must
        not fail deep inside a member's ``predict``."""
        return "members_" in self.__dict__ or all(map(_is_fitted, self.members))

    @property
    def n_features_in_(self) -> int:
        return self._member_attribute("n_features_in_")

    @property
    def feature_names_in_(self) -> np.ndarray:
        return self._member_attribute("feature_names_in_")

    def _member_attribute(self, name: str) -> Any:
        """``name`` of the first model that has it; an AttributeError (so ``hasattr`` is
        False) when none has."""
        for model in self._models:
            if hasattr(model, name):
                return getattr(model, name)
        raise AttributeError(f"no member of this {type(self).__name__} has {name}")

    def _input(self, X: Any) -> Any:
        """``X`` for the members, checked once here rather than once per member.

        Members fitted without feature names would each warn about a DataFrame's
        column names: the ensemble warns once and hands them the values. Members
        fitted with names check the names themselves."""
        check_is_fitted(self)
        if hasattr(self, "feature_names_in_"):
            return X
        validate_data(self, X, reset=False, skip_check_array=True)
        return np.asarray(X) if hasattr(X, "columns") else X

    @property
    def _normalized_weights(self) -> np.ndarray:
        """The weights summing to one. Weights that already do (an :class:`Ensemble`'s)
        are used as given, as :meth:`Ensemble.combine` uses them: divided by their float
        sum, six weights of 1/6 became shares summing to 1 + 2e-16."""
        weights = np.asarray(self.weights, dtype=float)
        if (
            len(weights) != len(self._models)
            or not len(weights)
            or not np.all(np.isfinite(weights))
            or weights.sum() <= 0
            or np.any(weights < 0)
        ):
            raise ValueError(
                f"need one finite, non-negative weight per member with a positive sum; got "
                f"{len(self._models)} members and weights {weights.tolist()}"
            )
        total = weights.sum()
        return weights if abs(total - 1.0) <= NORMALIZED_TOLERANCE else weights / total

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

    @available_if(lambda self: self.classes is not None)  # hasattr is False for a regressor
    def predict_proba(self, X: Any) -> np.ndarray:
        """Weighted total of the members' contributions (vote shares or probabilities);
        a tied vote's shares lean by :data:`TIE_TILT` to the class :meth:`predict` names.

        A single member gives its own probabilities: its one-hot vote would throw away
        the ranking that ROC AUC and log-loss score (AUC 0.936 instead of 0.986 on
        breast-cancer), and its vote names the same class as its probabilities.

        Clipped to [0, 1]: float sums of shares can pass 1 by an ulp, and scikit-learn's
        ``log_loss`` and ``brier_score_loss`` refuse any probability above 1."""
        return np.clip(self._shares(X), 0.0, 1.0)

    def _shares(self, X: Any) -> np.ndarray:
        probabilities = self._probabilities(X)
        if len(self._models) == 1:
            return probabilities[0]
        totals = self._combined(probabilities)
        if self.contributions is None:
            return totals
        return _tilted_to(totals, self._vote_winners(probabilities, totals))

    def _probabilities(self, X: Any) -> list[np.ndarray]:
        X = self._input(X)
        return [class_probabilities(m, X, self.classes_) for m in self._models]

    def _combined(self, probabilities: list[np.ndarray]) -> np.ndarray:
        return combine_contributions(probabilities, self._normalized_weights, self.contributions)

    def predict(self, X: Any) -> np.ndarray:
        if self.classes is None:
            X, weights = self._input(X), self._normalized_weights
            return sum(
                w * regression_values(m, X) for w, m in zip(weights, self._models, strict=True)
            )
        probabilities = self._probabilities(X)
        totals = self._combined(probabilities)
        if self.contributions is None:
            return self.classes_[np.argmax(totals, axis=1)]
        return self.classes_[self._vote_winners(probabilities, totals)]

    def _vote_winners(self, probabilities: list[np.ndarray], totals: np.ndarray) -> np.ndarray:
        mean = combine_contributions(probabilities, self._normalized_weights)
        return break_vote_ties(totals, mean)


NORMALIZED_TOLERANCE = 1e-12
"""Weights whose sum is this close to 1 are taken as normalized."""

TIE_TILT = 1e-9
"""Share moved to the class :meth:`FittedEnsemble.predict` names on a tied vote, so that
``predict_proba``'s argmax names it too (scikit-learn expects the two to agree)."""


def _tilted_to(shares: np.ndarray, winners: np.ndarray) -> np.ndarray:
    """Vote ``shares`` with each tied row tilted by :data:`TIE_TILT` toward its winner."""
    tied = leading_votes(shares).sum(axis=1) > 1
    if not tied.any():
        return shares
    tilted = shares.copy()
    rows = np.flatnonzero(tied)
    tilted[rows, winners[rows]] += TIE_TILT
    tilted[rows] /= tilted[rows].sum(axis=1, keepdims=True)
    return tilted


def _is_fitted(model: Any) -> bool:
    """Whether a member is fitted. Only a scikit-learn estimator (``fit`` and
    ``get_params``) is asked: ``clone`` resets only those, and a fixed predictor or a
    foreign model is fitted as it was given."""
    if not (hasattr(model, "fit") and hasattr(model, "get_params")):
        return True
    try:
        check_is_fitted(model)
    except NotFittedError:
        return False
    return True

