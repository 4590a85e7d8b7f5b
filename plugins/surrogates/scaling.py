"""Standardized targets, so a surrogate behaves the same whatever the targets' unit.

Rescaling the targets by a positive constant should change nothing but the unit of the
predictions. Constants written in target units break that: a GP noise floor, a forest's
variance floor, scikit-learn's absolute ``EPSILON`` below which a node counts as pure
(a forest on targets of order 1e-13 grew stumps). Surrogates fit standardized targets
and scale their predictions back.
"""

from __future__ import annotations

import numpy as np


def standardize(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Finite-ized, standardized targets, their location and scale; failed (infinite)
    targets count as the worst.

    Any spread above rounding (1e-12 of the targets' magnitude) is divided out, however
    small: targets of order 1e-13 are as informative as targets of order 1 (an absolute
    threshold of 1e-12 left them unscaled, below the GP's noise floor, and the posterior
    learned nothing). Only equal targets keep the unit scale: their ``std`` is rounding
    error, not 0 (three targets of 0.1 give 1.4e-17), and dividing by it would turn them
    into ones; so are targets within rounding of each other.
    """
    y = np.asarray(y, dtype=float)
    finite = np.isfinite(y)
    if not finite.all():
        worst = float(np.max(y[finite])) if finite.any() else 0.0
        y = np.where(finite, y, worst)
    location = float(np.mean(y))
    scale = float(np.std(y))
    # relative, so scale-free: targets one ulp apart are rounding, not signal to magnify
    spread = np.ptp(y) > 1e-12 * float(np.max(np.abs(y)))
    scale = scale if np.isfinite(scale) and spread else 1.0
    return (y - location) / scale, location, scale
