"""Logarithm of expected improvement, accurate far into the tail.

EI underflows where ``z`` is very negative, leaving L-BFGS a flat zero surface. Here
``log EI = log sigma + log h(z)`` with ``h(z) = z Phi(z) + phi(z)`` evaluated without
cancellation, following Ament et al. 2023 ("Unexpected improvements to expected
improvement"): for ``z <= -1``, ``h(z) = phi(z) * (1 - |z| * Phi(z)/phi(z))`` and the
Mills ratio ``Phi(z)/phi(z) = sqrt(pi/2) * erfcx(-z/sqrt 2)`` never underflows.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, ndtr

from ensembo.plugins.acquisitions.expected_improvement import normal_pdf
from ensembo.plugins.acquisitions.improvement import StandardizedImprovement
from ensembo.plugins.option_checks import non_negative

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SQRT_HALF_PI = np.sqrt(0.5 * np.pi)
_ASYMPTOTIC_BELOW = -1e6  # beyond this 1 - |z| * Mills ratio is 1/z**2 to double precision


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x < 0`` (Mächler 2012)."""
    return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_h_and_ratio(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log h(z)`` and ``d log h / dz = Phi(z) / h(z)``."""
    z = np.asarray(z, dtype=float)
    log_h = np.empty_like(z)
    ratio = np.empty_like(z)

    upper = z > -1.0
    zu = z[upper]
    h = zu * ndtr(zu) + normal_pdf(zu)
    log_h[upper] = np.log(h)
    ratio[upper] = ndtr(zu) / h

    middle = (z <= -1.0) & (z > _ASYMPTOTIC_BELOW)
    zm = z[middle]
    mills = _SQRT_HALF_PI * erfcx(-zm / np.sqrt(2.0))  # Phi(z)/phi(z)
    log_h_over_phi = _log1mexp(np.log(-zm * mills))
    log_h[middle] = -0.5 * zm * zm - _LOG_SQRT_2PI + log_h_over_phi
    ratio[middle] = mills / np.exp(log_h_over_phi)

    tail = z <= _ASYMPTOTIC_BELOW
    zt = z[tail]
    log_h[tail] = -0.5 * zt * zt - _LOG_SQRT_2PI - 2.0 * np.log(-zt)
    ratio[tail] = -zt
    return log_h, ratio


class LogExpectedImprovement:
    """``log EI``; same maximizer as EI but with informative gradients everywhere."""

    log_space = True  # under GP hyperparameter samples, combine as the log of mean EI

    def __init__(self, xi: float = 0.0):
        # finite: NaN passed "< 0" and made every acquisition value NaN
        self.xi = non_negative("log-ei", "xi", xi)

    def __call__(self, mean: np.ndarray, variance: np.ndarray, best: float) -> np.ndarray:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        log_h, _ = log_h_and_ratio(s.z)
        return np.log(s.sigma) + log_h

    def gradient(
        self, mean: np.ndarray, variance: np.ndarray, best: float
    ) -> tuple[np.ndarray, np.ndarray]:
        s = StandardizedImprovement.of(mean, variance, best, self.xi)
        _, ratio = log_h_and_ratio(s.z)
        return s.chain(by_z=ratio, by_sigma=1.0 / s.sigma)



