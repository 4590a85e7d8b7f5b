"""Ranks and win frequencies over a ``(n_problems, n_methods)`` loss matrix.

Pairwise tests are not transitive (notes/002 §3.4), so tables are sorted by rank.
Losses that agree to a relative ``RELATIVE_TOLERANCE`` tie (:func:`tie_float_noise`), in
every function here; the paired tests read :func:`paired_differences`. Losses must be
finite or ±inf: NaN is refused with a ValueError, as no rank or win can be read from it.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

RELATIVE_TOLERANCE = 1e-12
"""Two losses (or two paired differences) closer than this times the larger loss tie.

A mean of m losses summed in another order differs by about m float64 epsilons
(2.2e-16 each), so 1e-12 leaves room for sums of thousands of terms; the smallest real
difference between two mean error rates, one error in all test rows of all seeds, is
above 1e-6 of the rate below a million rows × seeds, six orders of magnitude away (the
archived records' smallest real gap is 2.6e-4 of the loss). Unlike rounding to 12 digits
(:func:`without_float_noise`), a tolerance cannot split two values 1 ulp apart that
straddle a rounding boundary. It decides the same ties as that rounding on every
archived benchmark record (benchmarks/records, 28 Nov)."""


def _finite_or_infinite(values, function: str, argument: str = "losses") -> np.ndarray:
    """``values`` as floats; a ValueError naming ``function`` if any is NaN."""
    array = np.asarray(values, dtype=float)
    if np.isnan(array).any():
        raise ValueError(
            f"{function}: {argument} must not be NaN (got {int(np.isnan(array).sum())} NaN of "
            f"{array.size}); drop or impute the failed runs before comparing"
        )
    return array


def _loss_matrix(losses, function: str) -> np.ndarray:
    matrix = _finite_or_infinite(losses, function)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError(
            f"need a (problems, methods) matrix with >= 2 methods, got shape {matrix.shape}"
        )
    return tie_float_noise(matrix)


def _close(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Equal, or both finite and within the tolerance of ``scale`` (an infinity ties only
    with itself)."""
    with np.errstate(invalid="ignore"):
        near = np.abs(a - b) <= RELATIVE_TOLERANCE * scale
    return (a == b) | (np.isfinite(a) & np.isfinite(b) & near)


def _merge_sorted(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``values`` (1-D, any order) with each run of neighbours (in sorted order) closer than
    the tolerance set to the run's smallest value; ``scale`` per value."""
    order = np.argsort(values, kind="stable")
    merged = values.astype(float).copy()
    for previous, current in zip(order[:-1], order[1:], strict=True):
        gap_scale = max(scale[previous], scale[current])
        if _close(values[previous], values[current], gap_scale):
            merged[current] = merged[previous]
    return merged


def tie_float_noise(losses) -> np.ndarray:
    """``losses`` with the values of each row (last axis) that agree to a relative
    ``RELATIVE_TOLERANCE`` set equal (to the smallest of them), so that ranks and wins
    read them as the tie they are. Values closer than the tolerance always tie, also
    through a chain of neighbours; order within a row is kept."""
    values = np.array(losses, dtype=float)
    if values.ndim == 0:
        return values
    rows = values.reshape(-1, values.shape[-1])
    for row in rows:
        row[:] = _merge_sorted(row, np.abs(row))
    return rows.reshape(values.shape)


def without_float_noise(losses, digits: int = 12) -> np.ndarray:
    """``losses`` rounded to ``digits`` significant digits (the tie rule of
    ``ensembo.trials`` and the ensemble tie-breaks; the statistics here use the relative
    tolerance of :func:`tie_float_noise` instead, which no rounding boundary can split).

    A mean of error rates depends on the order it is summed in by the last bit, so two
    methods with the same errors over the seeds in another order would compare unequal;
    ranks, win frequencies and paired tests must see that as the tie it is.

    Rounded through each value's decimal text, which is exact at every magnitude: a
    power-of-ten scale overflows below about 1e-297, and infinities pass through.
    """
    values = np.asarray(losses, dtype=float)
    rounded = [float(f"{value:.{digits - 1}e}") for value in values.ravel()]
    return np.array(rounded, dtype=float).reshape(values.shape)


def paired_differences(losses_a, losses_b, function: str = "paired_differences") -> np.ndarray:
    """``b - a`` without float noise, for the paired tests: 0 where the two losses agree to
    a relative ``RELATIVE_TOLERANCE``, and equal magnitudes where two differences agree to
    that tolerance of their larger loss (the sign is kept).

    0.3 - 0.1 and 0.4 - 0.2 differ in the last bit; here they tie. Pass the losses
    unrounded: rounding moves each by up to half its last kept digit, far more than the
    noise, and equal differences would then differ. A difference is compared on the scale
    of its losses because the subtraction leaves it their noise. NaN is refused
    (``function`` names the caller in the error).
    """
    a = _finite_or_infinite(losses_a, function, "losses_a")
    b = _finite_or_infinite(losses_b, function, "losses_b")
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two 1-D sequences of equal length, got {a.shape} and {b.shape}")
    scale = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore"):  # inf - inf
        difference = np.where(_close(a, b, scale), 0.0, b - a)
    nonzero = difference != 0  # a tie stays a tie, whatever the other pairs' scales
    magnitude = np.abs(difference)
    magnitude[nonzero] = _merge_sorted(magnitude[nonzero], scale[nonzero])
    return np.sign(difference) * magnitude


def average_ranks(losses) -> np.ndarray:
    """Mean rank of each method (1 = lowest loss; ties share mid-ranks), as in Friedman."""
    return rankdata(_loss_matrix(losses, "average_ranks"), axis=1).mean(axis=0)


def expected_rank(losses) -> np.ndarray:
    """Lacoste's expected rank (L1504): on each problem, the number of methods with loss
    <= this method's (itself included), averaged over problems. Ties count against."""
    return rankdata(_loss_matrix(losses, "expected_rank"), method="max", axis=1).mean(axis=0)


def win_frequency(losses) -> np.ndarray:
    """``W[a, b]``: fraction of problems where method a has lower loss than b, ties 0.5."""
    matrix = _loss_matrix(losses, "win_frequency")
    a = matrix[:, :, None]
    b = matrix[:, None, :]
    return ((a < b) + 0.5 * (a == b)).mean(axis=0)
