"""Expected improvement (Jones et al. 1998; the seeds' Eq. 2.9 corrected).

``EI = sigma * (z * Phi(z) + phi(z))`` with ``z`` the standardized improvement. It
underflows to 0 far from the incumbent, which flattens the surface L-BFGS climbs; use
``log-ei`` when that matters.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ensembo.plugins.acquisitions.improvement import StandardizedImprovement
from ensembo.plugins.option_checks import non_negative

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def normal_pdf(z: np.ndarray) -> np.ndarray:
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


class ExpectedImprovement:
    """``xi`` >= 0 asks for an improvement of at least ``xi`` (in target units)."""

    def __init__(self, xi: float = 0.0):
        # finite: NaN passed "< 0" and made every acquisition value NaN
        self.xi = non_negative("ei", "xi", xi)

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        return s.sigma * (s.z * ndtr(s.z) + normal_pdf(s.z))

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        cdf, pdf = ndtr(s.z), normal_pdf(s.z)
        # d/dz of sigma*h(z) is sigma*Phi(z); at fixed z, d/dsigma is h(z).
        return s.chain(by_z=s.sigma * cdf, by_sigma=s.z * cdf + pdf)
