"""The adapted C-bound of a majority vote (Lévesque thesis Eq. 4.21–4.22).

C_Q = ½(1 − sign(μ₁)·μ₁²/μ₂) with μ_z the z-th moment of the margin over the
validation set (Germain et al.'s C-bound, halved into [0, 1] and penalizing negative
mean margins). It is a property of the whole ensemble, not a sum over examples, so it
is only usable as an ensemble loss (``eo``, ``posthoc``), never per example.
"""

from __future__ import annotations

import numpy as np

from ensembo.plugins.losses.votes import LossInputError, margins, one_hot_votes


class CBoundLoss:
    per_example = False  # only an ensemble has a C-bound (see ensembo.conformance.check_loss)
    combination = "vote"  # how an ensemble it scores combines its members

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        raise LossInputError(
            "loss 'c-bound' is defined on a whole ensemble, not per example; use it as "
            "the ensemble loss of 'eo' or 'posthoc', and a per-example loss such as "
            "'zero-one' elsewhere"
        )

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        return one_hot_votes(predictions)

    def ensemble_loss(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        margin = margins(y_true, totals, size)
        first = margin.mean(axis=-1)
        second = (margin**2).mean(axis=-1)
        ratio = np.divide(first**2, second, out=np.zeros_like(first), where=second > 0)
        return 0.5 * (1.0 - np.sign(first) * ratio)
