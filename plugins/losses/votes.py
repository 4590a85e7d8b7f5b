"""Losses of a (weighted) majority vote, from the votes each example receives.

An ensemble's vote on example i is summarised by ``v*`` (weight voting for the true
class), ``v_max`` (largest weight voting for one wrong class) and the total weight
``|E|``. Lévesque (thesis §4.3) defines every vote loss from these: the multiclass
margin M = (1/|E|) Σ_h [1 − 2·l01(h(x), y)] = (2v* − |E|)/|E| (Eq. 4.6), and the
sigmoid's input v* − v_max (Eq. 4.25–4.26). A single model is an ensemble of one.
"""

from __future__ import annotations

import numpy as np

from ensembo.errors import EnsemboError


class LossInputError(EnsemboError, ValueError):
    """Predictions or targets handed to a loss have the wrong form."""


def one_hot_votes(predictions: np.ndarray) -> np.ndarray:
    """(m, k) class probabilities -> (m, k) one-hot vote for each example's argmax."""
    probabilities = np.asarray(predictions, dtype=float)
    if probabilities.ndim != 2:
        raise LossInputError(
            f"vote losses need class probabilities of shape (m, n_classes), got shape "
            f"{probabilities.shape}"
        )
    votes = np.zeros_like(probabilities)
    votes[np.arange(len(votes)), np.argmax(probabilities, axis=1)] = 1.0
    return votes


def true_and_best_wrong(y_true: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``v*`` and ``v_max`` per example for vote totals (..., m, k)."""
    y = np.asarray(y_true, dtype=int)
    if totals.shape[-2] != len(y):
        raise LossInputError(f"{len(y)} targets but votes for {totals.shape[-2]} examples")
    v_true = totals[..., np.arange(len(y)), y]
    # A running maximum over the (few) classes is much faster than a reduction over a
    # short trailing axis, and this runs once per candidate model per greedy step.
    v_wrong = np.full(v_true.shape, -np.inf)
    for label in range(totals.shape[-1]):
        np.maximum(v_wrong, np.where(y == label, -np.inf, totals[..., label]), out=v_wrong)
    return v_true, v_wrong


def margins(y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
    """Multiclass margin M = (2v* − |E|)/|E| in [−1, 1] (Eq. 4.6), shape (..., m)."""
    v_true, _ = true_and_best_wrong(y_true, totals)
    size = np.asarray(size, dtype=float)[..., None]
    return (2.0 * v_true - size) / size


class VoteLoss:
    """A per-example loss of a majority vote; subclasses define it from the votes."""

    def per_example(self, v_true: np.ndarray, v_wrong: np.ndarray, size) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        return self.ensemble_examples(y_true, one_hot_votes(predictions), 1.0)

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        return one_hot_votes(predictions)

    def ensemble_examples(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        v_true, v_wrong = true_and_best_wrong(y_true, totals)
        return self.per_example(v_true, v_wrong, np.asarray(size, dtype=float)[..., None])

    def ensemble_loss(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        return self.ensemble_examples(y_true, totals, size).mean(axis=-1)

    def ensemble_loss_adding_each(
        self, y_true: np.ndarray, total: np.ndarray, size: float, contributions: np.ndarray
    ) -> np.ndarray:
        """Loss of the vote ``total`` plus each one-hot voter of ``contributions`` (n, m, k).

        A vote loss on example i depends only on that example's vote totals, and a new
        voter can only add one vote to one of k classes. So the k possible losses per
        example are computed once (m, k) and each candidate's loss is a gather over its
        labels: O(n·m) instead of materializing n ensembles of shape (m, k).
        """
        k = total.shape[-1]
        after_vote = np.stack(
            [self.ensemble_examples(y_true, total + np.eye(k)[label], size + 1.0) for label in range(k)],
            axis=-1,
        )
        labels = (contributions @ np.arange(k, dtype=contributions.dtype)).astype(np.intp)
        return after_vote[np.arange(after_vote.shape[0]), labels].mean(axis=-1)

