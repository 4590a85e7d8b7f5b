"""Probability of improvement, ``Phi(z)`` (Kushner 1964).

Greedier than EI: it ignores how large the improvement is, so a positive ``xi`` is
the usual way to keep it exploring.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ensembo.plugins.acquisitions.expected_improvement import normal_pdf
from ensembo.plugins.acquisitions.improvement import StandardizedImprovement
from ensembo.plugins.option_checks import non_negative


class ProbabilityOfImprovement:
    def __init__(self, xi: float = 0.0):
        # finite: NaN passed "< 0" and made every acquisition value NaN
        self.xi = non_negative("pi", "xi", xi)

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        return ndtr(StandardizedImprovement.of(mean, variance, best, self.xi).z)

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        return s.chain(by_z=normal_pdf(s.z), by_sigma=np.zeros_like(s.z))
