"""Regression losses on residuals r = prediction − truth: ``mse``, ``mae``, ``huber``, ``tukey``.

Ensembles take the plain mean of their members' predictions (SEGOR, Roschewitz et al.
§3). Huber (c = 1.345) and Tukey's bisquare (c = 4.685) are tuned for unit-scale
residuals; by default residuals are divided by the standard deviation of the targets,
as SEGOR normalizes targets before scoring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.plugins.losses.votes import LossInputError
from ensembo.plugins.option_checks import positive


class ResidualLoss:
    """A loss ρ(r) of the residual; subclasses define :meth:`rho`."""

    scale: float | None = 1.0
    combination = "average"  # how an ensemble it scores combines its members

    def rho(self, residuals: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        return self._per_example(
            np.asarray(y_true, dtype=float), np.asarray(predictions, dtype=float)
        )

    def contributions(self, predictions: np.ndarray) -> np.ndarray:
        return np.asarray(predictions, dtype=float)

    def ensemble_loss(self, y_true: np.ndarray, totals: np.ndarray, size) -> np.ndarray:
        size = np.asarray(size, dtype=float)[..., None]
        return self._per_example(np.asarray(y_true, dtype=float), totals / size).mean(axis=-1)

    def _per_example(self, y_true: np.ndarray, predictions: np.ndarray) -> np.ndarray:
        if predictions.shape[-1:] != y_true.shape or y_true.ndim != 1:
            raise LossInputError(
                f"regression losses need predictions of shape (m,) matching {y_true.shape[0]} "
                f"targets, got shape {predictions.shape}"
            )
        scale = self.scale
        if scale is None:
            spread = float(np.std(y_true))
            scale = spread if spread > 0 else 1.0
        return self.rho((predictions - y_true) / scale)


class SquaredError(ResidualLoss):
    def rho(self, residuals):
        return residuals**2


class AbsoluteError(ResidualLoss):
    def rho(self, residuals):
        return np.abs(residuals)


def robust_options(loss: str, c: Any, scale: Any) -> tuple[float, float | None]:
    """``c`` and ``scale`` checked: c <= 0 made the loss 0 or a constant, scale 0 made
    it NaN, and the strategy scoring with it was blamed for the NaN."""
    c = positive(loss, "c", c)
    return c, None if scale is None else positive(loss, "scale", scale)


class HuberLoss(ResidualLoss):
    """½r² inside |r| < c, c(|r| − ½c) outside."""

    def __init__(self, c: float = 1.345, scale: float | None = None):
        self.c, self.scale = robust_options("huber", c, scale)

    def rho(self, residuals):
        size = np.abs(residuals)
        return np.where(size < self.c, 0.5 * residuals**2, self.c * (size - 0.5 * self.c))


class TukeyLoss(ResidualLoss):
    """Bisquare: (c²/6)[1 − (1 − (r/c)²)³] inside |r| < c, c²/6 outside."""

    def __init__(self, c: float = 4.685, scale: float | None = None):
        self.c, self.scale = robust_options("tukey", c, scale)

    def rho(self, residuals):
        inside = 1.0 - (1.0 - (residuals / self.c) ** 2) ** 3
        return (self.c**2 / 6.0) * np.where(np.abs(residuals) < self.c, inside, 1.0)
