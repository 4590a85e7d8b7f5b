"""The fitted ensemble predicts what its vote (or probability average) says, ties included."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.ml import FittedEnsemble
from ensembo.plugins.losses.classification import ZeroOneLoss


class FixedProbabilities:
    """A fitted classifier that returns the same probabilities whatever X is."""

    def __init__(self, probabilities, classes):
        self.probabilities = np.asarray(probabilities, dtype=float)
        self.classes_ = np.asarray(classes)

    def predict_proba(self, X):
        return self.probabilities[: len(X)]


CLASSES = np.array(["a", "b"])


def vote(*members, weights=None):
    models = [FixedProbabilities(p, CLASSES) for p in members]
    return FittedEnsemble(members=models, weights=weights or [1.0] * len(models), classes=CLASSES,
                          contributions=ZeroOneLoss().contributions)


def test_a_tied_vote_goes_to_the_class_the_members_find_more_probable():
    # One vote each on both rows; the mean probability favours "b" on row 0 (0.65) and
    # "a" on row 1 (0.55). Taking the first tied class would say "a" twice.
    ensemble = vote([[0.6, 0.4], [0.9, 0.1]], [[0.1, 0.9], [0.2, 0.8]])
    X = np.zeros((2, 1))
    np.testing.assert_allclose(ensemble.predict_proba(X), [[0.5, 0.5], [0.5, 0.5]])
    assert ensemble.predict(X).tolist() == ["b", "a"]


def test_without_ties_predict_is_the_vote_winner_shown_by_predict_proba():
    ensemble = vote([[0.7, 0.3], [0.2, 0.8]], [[0.6, 0.4], [0.4, 0.6]], [[0.1, 0.9], [0.3, 0.7]])
    X = np.zeros((2, 1))
    shares = ensemble.predict_proba(X)
    np.testing.assert_allclose(shares, [[2 / 3, 1 / 3], [0, 1]])
    assert ensemble.predict(X).tolist() == CLASSES[shares.argmax(axis=1)].tolist()


def test_probability_averaging_predicts_the_most_probable_class():
    models = [FixedProbabilities([[0.6, 0.4]], CLASSES), FixedProbabilities([[0.1, 0.9]], CLASSES)]
    ensemble = FittedEnsemble(members=models, weights=[1.0, 1.0], classes=CLASSES)
    np.testing.assert_allclose(ensemble.predict_proba(np.zeros((1, 1))), [[0.35, 0.65]])
    assert ensemble.predict(np.zeros((1, 1))).tolist() == ["b"]


def test_a_single_member_gives_its_own_probabilities_not_its_vote():
    """With ensemble='best' and a vote loss, predict_proba was one-hot: AUC and log-loss
    lost the member's ranking (breast-cancer AUC 0.936 instead of 0.986)."""
    alone = vote([[0.7, 0.3], [0.45, 0.55]])
    X = np.zeros((2, 1))
    np.testing.assert_allclose(alone.predict_proba(X), [[0.7, 0.3], [0.45, 0.55]])
    assert alone.predict(X).tolist() == ["a", "b"]


def test_it_scores_and_is_recognised_as_a_classifier_or_regressor():
    """best_estimator_ under k-fold had no score(), and is_classifier said False, so
    scorers such as roc_auc refused it."""
    from sklearn.base import is_classifier, is_regressor
    from sklearn.metrics import get_scorer

    ensemble = vote([[0.7, 0.3], [0.2, 0.8]], [[0.6, 0.4], [0.4, 0.6]])
    X, y = np.zeros((2, 1)), np.array(["a", "b"])
    assert is_classifier(ensemble) and ensemble.score(X, y) == 1.0
    assert get_scorer("roc_auc")(ensemble, X, y) == 1.0

    class Constant:
        def predict(self, X):
            return np.full(len(X), 2.0)

    regression = FittedEnsemble(members=[Constant()], weights=[1.0])
    assert is_regressor(regression)
    assert regression.score(np.zeros((3, 1)), np.array([1.0, 2.0, 3.0])) == 0.0


def test_a_vote_of_six_equal_weights_gives_probabilities_log_loss_accepts():
    """Renormalized, six weights of 1/6 summed to 1 + 2e-16 where all six members agreed,
    and scikit-learn's log_loss and brier_score_loss refuse a probability above 1."""
    from sklearn.metrics import brier_score_loss, log_loss

    ensemble = vote(*[[[0.9, 0.1], [0.2, 0.8]]] * 6, weights=[1 / 6] * 6)
    X, y = np.zeros((2, 1)), np.array(["a", "b"])
    probabilities = ensemble.predict_proba(X)
    assert probabilities.max() <= 1.0
    assert log_loss(y, probabilities) < 1e-6
    assert brier_score_loss(y == "b", probabilities[:, 1]) < 1e-12


def test_a_regression_ensemble_has_no_predict_proba():
    """It had one that raised AttributeError, so duck-typing tools (hasattr) took the
    regressor for a classifier."""

    class Constant:
        def predict(self, X):
            return np.full(len(X), 2.0)

    regression = FittedEnsemble(members=[Constant()], weights=[1.0])
    assert not hasattr(regression, "predict_proba")
    assert hasattr(vote([[0.7, 0.3]]), "predict_proba")


@pytest.mark.parametrize("weight", [float("nan"), float("inf")])
def test_a_weight_that_is_not_finite_is_refused(weight):
    """A NaN weight made every share NaN, and the ensemble predicted the first class for
    every row."""
    ensemble = vote([[0.9, 0.1], [0.2, 0.8]], [[0.1, 0.9], [0.8, 0.2]], weights=[weight, 1.0])
    with pytest.raises(ValueError, match="finite, non-negative weight per member"):
        ensemble.predict(np.zeros((2, 1)))
