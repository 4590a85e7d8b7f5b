"""Lower confidence bound (Srinivas et al. 2010, for minimization).

Returned negated, ``kappa * sigma - mean``, because acquisitions are maximized. The
value needs no variance floor, so it scales with the targets; the gradient in the
variance, ``kappa / (2 sigma)``, is taken as 0 below the smallest positive float, which
no target scale reaches.
"""

from __future__ import annotations

import numpy as np

from ensembo.plugins.acquisitions.improvement import VARIANCE_FLOOR
from ensembo.plugins.option_checks import non_negative


class LowerConfidenceBound:
    def __init__(self, kappa: float = 2.0):
        # finite: NaN passed "< 0" and made every acquisition value NaN
        self.kappa = non_negative("lcb", "kappa", kappa)

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        sigma = np.sqrt(np.maximum(np.asarray(variance, dtype=float), 0.0))
        return self.kappa * sigma - np.asarray(mean, dtype=float)

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        variance = np.asarray(variance, dtype=float)
        floored = variance < VARIANCE_FLOOR
        sigma = np.sqrt(np.where(floored, VARIANCE_FLOOR, variance))
        by_variance = np.where(floored, 0.0, self.kappa / (2.0 * sigma))
        return -np.ones_like(sigma), by_variance
