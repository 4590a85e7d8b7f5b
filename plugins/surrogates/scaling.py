"""Standardized targets, so a surrogate behaves the same whatever the targets' unit.

Rescaling the targets by a positive constant should change nothing but the unit of the
predictions. Constants written in target units break that: a GP noise floor, a forest's
variance floor, scikit-learn's absolute ``EPSILON`` below which a node counts as pure
(a forest on targets of order 1e-13 grew stumps). Surrogates fit standardized targets
and scale their predictions back.

The one exception is targets beyond :data:`TARGET_LIMIT`, which are clipped to it: a
surrogate reports variances in target units, its scale squared times a standardized
variance, and above about 1e154 that square is no float (one loss of 1e308 made every
later prediction infinite, and the study could never ask again).
"""

from __future__ import annotations

import numpy as np

TARGET_LIMIT = 1e150
"""Largest target magnitude a surrogate models. Its square, 1e300, leaves a factor 1e8
below the largest float for standardized variances and their gradients; a loss this
large is as bad as any larger one for choosing where to search."""


ROUNDING_ULPS = 8
"""Targets whose range is at most this many ulps of their largest magnitude count as
equal: the same loss summed in another order differs by an ulp or two."""


def standardize(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Finite-ized, standardized targets, their location and scale; failed (infinite)
    targets count as the worst, and huge ones as :data:`TARGET_LIMIT`.

    Any spread above rounding (:data:`ROUNDING_ULPS` ulps of the largest |target|) is
    divided out, however small: targets of order 1e-13 are as informative as targets of
    order 1 (an absolute threshold of 1e-12 left them unscaled, below the GP's noise
    floor, and the posterior learned nothing), and so is a signal of 1e-4 on an offset
    of 1e9 (a relative threshold of 1e-12, some 4500 ulps, left it unscaled and the GP
    fit noise). Only equal targets keep the unit scale: their ``std`` is rounding
    error, not 0 (three targets of 0.1 give 1.4e-17), and dividing by it would turn them
    into ones; so are targets within a few ulps of each other.
    """
    y = _within_limit(_finite(np.asarray(y, dtype=float)))
    location = float(np.mean(y))
    scale = _standard_deviation(y)
    # in ulps of the magnitude, so scale-free: a few ulps apart is rounding, not signal
    spread = np.ptp(y) > ROUNDING_ULPS * float(np.spacing(np.max(np.abs(y))))
    scale = scale if spread else 1.0
    return (y - location) / scale, location, scale


def _standard_deviation(y: np.ndarray) -> float:
    """``np.std(y)`` without underflow: the squares of targets below about 1e-162 are
    0, so distinct targets got a scale of 0 and standardized to -inf, nan, inf (every
    ask of gp and rf failed). The std is taken of the targets divided by a power of two
    near their magnitude, which is exact, so other targets get the same std bit for bit.
    """
    magnitude = float(np.max(np.abs(y)))
    unit = float(np.ldexp(1.0, int(np.frexp(magnitude)[1])))
    return float(np.std(y / unit)) * unit


def _finite(y: np.ndarray) -> np.ndarray:
    """Failed (infinite or NaN) targets replaced by the worst finite one, or 0."""
    finite = np.isfinite(y)
    if finite.all():
        return y
    worst = float(np.max(y[finite])) if finite.any() else 0.0
    return np.where(finite, y, worst)


def _within_limit(y: np.ndarray) -> np.ndarray:
    """Targets clipped to +-TARGET_LIMIT, so neither their mean, their spread nor the
    variances in target units can overflow; ordinary targets are returned unchanged."""
    return np.clip(y, -TARGET_LIMIT, TARGET_LIMIT)


def clip_upper_tail(y: np.ndarray, spread: float) -> np.ndarray:
    """Targets above the median plus ``spread`` interquartile ranges set to that bound.

    A minimizer learns nothing from how bad the worst losses are, and a few far above
    the rest (a diverged model, a penalty value) shrink every difference among the good
    ones to noise once the targets are standardized. Without an interquartile range
    (most targets equal) nothing is clipped."""
    finite = y[np.isfinite(y)]
    if finite.size < 4:
        return y
    low, middle, high = np.percentile(finite, [25, 50, 75])
    if high <= low:
        return y
    return np.minimum(y, middle + spread * (high - low))
