"""The standardized improvement shared by EI, log-EI and PI.

Targets are minimized, so the improvement of a point over the incumbent ``best`` is
``best - xi - mean``; dividing by the predictive standard deviation gives ``z``. The
variance is floored so a point sitting on an observation (variance ~ 0) yields finite
values and gradients instead of a division by zero.
"""

from __future__ import annotations

import attrs
import numpy as np

VARIANCE_FLOOR = 1e-12


@attrs.frozen(kw_only=True)
class StandardizedImprovement:
    """``z = (best - xi - mean) / sigma`` together with ``sigma`` and where the floor bit."""

    z: np.ndarray
    sigma: np.ndarray
    floored: np.ndarray

    @classmethod
    def of(
        cls, mean: np.ndarray, variance: np.ndarray, best: float, xi: float
    ) -> StandardizedImprovement:
        variance = np.asarray(variance, dtype=float)
        floored = variance < VARIANCE_FLOOR
        sigma = np.sqrt(np.where(floored, VARIANCE_FLOOR, variance))
        z = (best - xi - np.asarray(mean, dtype=float)) / sigma
        return cls(z=z, sigma=sigma, floored=floored)

    def chain(self, by_z: np.ndarray, by_sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turn derivatives with respect to (z, sigma at fixed improvement) into
        derivatives with respect to (mean, variance)."""
        by_mean = -by_z / self.sigma
        by_sigma_total = by_sigma - by_z * self.z / self.sigma
        by_variance = np.where(self.floored, 0.0, by_sigma_total / (2.0 * self.sigma))
        return by_mean, by_variance
