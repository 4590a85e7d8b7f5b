"""Probability of improvement, ``Phi(z)`` (Kushner 1964).

Greedier than EI: it ignores how large the improvement is, so a positive ``xi`` is
the usual way to keep it exploring.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ensembo.plugins.acquisitions.expected_improvement import normal_pdf
from ensembo.plugins.acquisitions.improvement import StandardizedImprovement


class ProbabilityOfImprovement:
    def __init__(self, xi: float = 0.0):
        if xi < 0:
            raise ValueError(f"pi: xi must be >= 0, got {xi}")
        self.xi = float(xi)

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        return ndtr(StandardizedImprovement.of(mean, variance, best, self.xi).z)

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        return s.chain(by_z=normal_pdf(s.z), by_sigma=np.zeros_like(s.z))
