"""Classification losses: ``zero-one`` (of a vote) and ``log-loss`` (of averaged probabilities).

Predictions are class probabilities (m, k) with columns in the order of the task's
classes, and ``y_true`` the column index of the true class. ``zero-one`` also accepts
plain label predictions (m,) compared with ``y_true`` labels.
"""

from __future__ import annotations

import numpy as np

from ensembo.ensemble import vote_at_least
from ensembo.plugins.losses.votes import LossInputError, VoteLoss
from ensembo.plugins.option_checks import fraction


class ZeroOneLoss(VoteLoss):
    """1 when the vote is wrong.

    ``tie="error"`` (default) counts a tie between the true class and another as an
    error, which is what Lévesque's Table 4.2 reports for an even ensemble.
    ``tie="half"`` charges it half an error: the expected loss when the tie is broken at
    random between two classes, as his vote does ("the winning label is randomly chosen",
    thesis L1044). A tie of three or more classes is also charged a half.
    """

    TIE_COST = {"error": 1.0, "half": 0.5}

    def __init__(self, tie: str = "error"):
        # A str first: a list (tie: [half] in YAML) is unhashable, and the lookup raised
        # TypeError, reported as the loss's bug instead of the option's.
        if not isinstance(tie, str) or tie not in self.TIE_COST:
            raise ValueError(f"tie must be one of {', '.join(self.TIE_COST)}, got {tie!r}")
        self.tie, self.tie_cost = tie, self.TIE_COST[tie]
        # Whole-number losses let the greedy steps count instead of summing (votes.py).
        self.integral = self.tie_cost == 1.0

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        predictions = np.asarray(predictions)
        if predictions.ndim == 1:
            return (predictions != np.asarray(y_true)).astype(float)
        return super().__call__(y_true, predictions)

    def per_example(self, v_true, v_wrong, size):
        # Totals within float noise of each other tie as the fitted ensemble ties them
        # (``leading_votes``), so the loss is never below the error of its predictions.
        true_reaches = vote_at_least(v_true, v_wrong, size)
        wrong_reaches = vote_at_least(v_wrong, v_true, size)
        return ~true_reaches + self.tie_cost * (true_reaches & wrong_reaches)


class LogLoss:
    """Negative log-probability of the true class; ensembles average probabilities."""

    scores_probabilities = True  # one-hot predictions make it an error count (ml.Task warns)
    combination = "average"  # how an ensemble it scores combines its members

    def __init__(self, eps: float = 1e-15):
        # The floor probabilities are clipped to: at 0 a zero probability costs inf, at 1
        # or above every prediction costs 0.
        self.eps = fraction("log-loss", "eps", eps)

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        return self._per_example(y_true, np.asarray(predictions, dtype=float))

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        return np.asarray(predictions, dtype=float)

    def ensemble_loss(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        size = np.asarray(size, dtype=float)[..., None, None]
        return self._per_example(y_true, totals / size).mean(axis=-1)

    def _per_example(self, y_true: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
        if probabilities.ndim < 2:
            raise LossInputError(
                f"log-loss needs class probabilities of shape (m, n_classes), got shape "
                f"{probabilities.shape}"
            )
        y = np.asarray(y_true, dtype=int)
        true_probability = probabilities[..., np.arange(len(y)), y]
        return -np.log(np.clip(true_probability, self.eps, 1.0))
