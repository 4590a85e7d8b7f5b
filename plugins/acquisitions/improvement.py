"""The standardized improvement shared by EI, log-EI and PI.

Targets are minimized, so the improvement of a point over the incumbent ``best`` is
``best - xi - mean``; dividing by the predictive standard deviation gives ``z``. The
variance is floored so a point sitting on an observation (variance ~ 0) yields finite
values and gradients instead of a division by zero.

The floor is a fraction of the squared improvement, so it scales with the targets:
rescaling them by a positive constant (with ``xi`` rescaled alike) leaves ``z`` and the
ranking of points unchanged. An absolute floor of 1e-12 was larger than every
predictive variance of targets of order 1e-7, and turned the search into exploitation.
Where the floor holds, ``|z|`` is ``1 / sqrt(RELATIVE_VARIANCE_FLOOR)`` = 1e12: the
acquisition takes its noise-free value (EI the improvement itself, PI 0 or 1), and
``log-ei`` keeps its tail (``z`` of -1e8 is not floored).
"""

from __future__ import annotations

import attrs
import numpy as np

RELATIVE_VARIANCE_FLOOR = 1e-24
"""Lowest variance, as a fraction of the squared improvement (a standard deviation
1e-12 of the improvement)."""

VARIANCE_FLOOR = float(np.finfo(float).tiny)
"""Lowest variance where the improvement is 0 too (no scale to be relative to)."""


def variance_floor(improvement: np.ndarray) -> np.ndarray:
    """The floor of each point's variance, relative to its squared improvement."""
    return np.maximum(RELATIVE_VARIANCE_FLOOR * np.square(improvement), VARIANCE_FLOOR)


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
        improvement = best - xi - np.asarray(mean, dtype=float)
        floor = variance_floor(improvement)
        floored = variance < floor
        sigma = np.sqrt(np.where(floored, floor, variance))
        return cls(z=improvement / sigma, sigma=sigma, floored=floored)

    def chain(self, by_z: np.ndarray, by_sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Turn derivatives with respect to (z, sigma at fixed improvement) into
        derivatives with respect to (mean, variance); where the floor holds, sigma is
        taken as fixed."""
        by_mean = -by_z / self.sigma
        by_sigma_total = by_sigma - by_z * self.z / self.sigma
        by_variance = np.where(self.floored, 0.0, by_sigma_total / (2.0 * self.sigma))
        return by_mean, by_variance
