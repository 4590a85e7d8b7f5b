"""The Ensemble value: its size, and combining predictions by the rule it was built with."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.ensemble import Ensemble
from ensembo.ml import FittedEnsemble

# Two members right but unsure, one wrong and confident, on every row (truth: class 1).
UNSURE_RIGHT = np.array([[0.45, 0.55]] * 3)
SURE_WRONG = np.array([[0.99, 0.01]] * 3)


def test_a_vote_ensemble_combines_by_majority_vote():
    predictions = [UNSURE_RIGHT, UNSURE_RIGHT, SURE_WRONG]
    vote = Ensemble.from_counts({0: 1, 1: 1, 2: 1}, combination="vote")
    np.testing.assert_allclose(vote.combine(predictions), [[1 / 3, 2 / 3]] * 3)
    assert vote.combine(predictions, vote_classes=np.array([0, 1])).tolist() == [1, 1, 1]
    average = Ensemble.from_counts({0: 1, 1: 1, 2: 1}, combination="average")
    assert average.combine(predictions, vote_classes=np.array([0, 1])).tolist() == [0, 0, 0]


class _Fixed:
    def __init__(self, probabilities):
        self.probabilities = np.asarray(probabilities)
        self.classes_ = np.array([0, 1])

    def predict_proba(self, X):
        return self.probabilities[: len(X)]


def test_a_tied_vote_goes_where_the_fitted_ensemble_sends_it():
    """One vote each; the mean probability favours class 1 (0.65): the fitted ensemble
    predicts 1, and so must combine, not the first class."""
    predictions = [np.array([[0.05, 0.95]]), np.array([[0.55, 0.45]])]
    ensemble = Ensemble.from_counts({0: 1, 1: 1}, combination="vote")
    combined = ensemble.combine(predictions, vote_classes=np.array([0, 1]))
    fitted = FittedEnsemble(members=[_Fixed(p) for p in predictions], weights=[1, 1],
                            classes=np.array([0, 1]),
                            contributions=lambda p: np.eye(2)[np.argmax(p, axis=1)])
    assert combined.tolist() == fitted.predict(np.zeros((1, 1))).tolist() == [1]
    labels = [np.argmax(p, axis=1) for p in predictions]  # labels only: the first class
    assert ensemble.combine(labels, vote_classes=np.array([0, 1])).tolist() == [0]


@pytest.mark.parametrize("combination", ["vote", "average"])
def test_labels_and_probabilities_of_members_combine_given_the_classes(combination):
    """A study accepts either per trial, and every strategy ensembles them; combine
    stacked them as they were and failed on the shapes."""
    labels = np.array([0, 2, 1, 1])
    probabilities = np.array([[0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
    third = np.array([0, 2, 2, 1])
    ensemble = Ensemble.from_counts({0: 1, 1: 1, 2: 1}, combination=combination)
    combined = ensemble.combine([labels, probabilities, third], vote_classes=np.array([0, 1, 2]))
    assert combined.tolist() == [0, 2, 1, 1]
    with pytest.raises(ValueError, match="only given vote_classes"):
        ensemble.combine([labels, probabilities, third])


def test_predict_proba_names_the_class_predict_names_on_a_tied_vote():
    """The shares stayed tied (0.5 / 0.5), so argmax named class 0 where predict named 1,
    which scikit-learn's classifier checks assert against."""
    predictions = [np.array([[0.05, 0.95], [0.9, 0.1]]), np.array([[0.55, 0.45], [0.8, 0.2]])]
    fitted = FittedEnsemble(members=[_Fixed(p) for p in predictions], weights=[1, 1],
                            classes=np.array([0, 1]),
                            contributions=lambda p: np.eye(2)[np.argmax(p, axis=1)])
    X = np.zeros((2, 1))
    shares = fitted.predict_proba(X)
    assert fitted.predict(X).tolist() == np.argmax(shares, axis=1).tolist() == [1, 0]
    np.testing.assert_allclose(shares, [[0.5, 0.5], [1.0, 0.0]], atol=1e-8)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)


def test_the_size_counts_members_with_multiplicity():
    counted = Ensemble.from_counts({3: 2, 5: 1, 7: 0})
    assert counted.members == (3, 5) and counted.size == 3
    np.testing.assert_array_equal(counted.counts, [2, 1])
    weighted = Ensemble.from_weights({3: 0.7, 5: 0.3, 7: 0.0})
    assert weighted.size == 2 and weighted.weights == pytest.approx((0.7, 0.3))
    assert Ensemble.from_weights({3: 0.5, 5: 0.5}, size=40).size == 40
    assert Ensemble(members=(1, 2), weights=(1, 3)).size == 2
    assert Ensemble.single(4).size == 1


def test_whole_counts_come_back_whole():
    """1/49 · 49 is 0.9999999999999999: a vote scored from it would not tie where the
    strategy's vote of whole counts tied."""
    ensemble = Ensemble.from_counts({n: 1 for n in range(49)})
    assert ensemble.counts.tolist() == [1.0] * 49


def test_bad_sizes_and_rules_are_refused():
    with pytest.raises(ValueError, match="size must be positive"):
        Ensemble(members=(1,), weights=(1.0,), size=0)
    with pytest.raises(ValueError, match="combination"):
        Ensemble(members=(1,), weights=(1.0,), combination="median")


@pytest.mark.parametrize("weight", [float("nan"), float("inf")])
def test_a_weight_that_is_not_finite_is_refused_naming_the_weights_and_members(weight):
    """A NaN weight made every weight NaN (inf made them (nan, 0.0)), and the ensemble
    then predicted the first class for every example."""
    named = r"weights must be finite numbers, got weights \[.*, 1\.0\] for members \[0, 1\]"
    with pytest.raises(ValueError, match=named):
        Ensemble(members=(0, 1), weights=(weight, 1.0))


def test_averaged_probabilities_never_pass_one():
    """Weights 2, 1, 4, 2, 1 over five sure members summed to 1.0000000000000002, which
    scikit-learn's log_loss refuses."""
    sure = np.array([[1.0, 0.0], [0.0, 1.0]])
    ensemble = Ensemble(members=tuple(range(5)), weights=(2.0, 1.0, 4.0, 2.0, 1.0),
                        combination="average")
    assert ensemble.combine([sure] * 5).max() == 1.0
