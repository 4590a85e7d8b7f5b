"""Ranks and win frequencies over a ``(n_problems, n_methods)`` loss matrix.

Pairwise tests are not transitive (notes/002 §3.4), so tables are sorted by rank.
Losses equal to 12 significant digits tie (:func:`without_float_noise`), in every
function here; the paired tests read :func:`paired_differences`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def _loss_matrix(losses) -> np.ndarray:
    matrix = without_float_noise(losses)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError(
            f"need a (problems, methods) matrix with >= 2 methods, got shape {matrix.shape}"
        )
    return matrix


def without_float_noise(losses, digits: int = 12) -> np.ndarray:
    """``losses`` rounded to ``digits`` significant digits.

    A mean of error rates depends on the order it is summed in by the last bit, so two
    methods with the same errors over the seeds in another order would compare unequal;
    ranks, win frequencies and paired tests must see that as the tie it is.

    Rounded through each value's decimal text, which is exact at every magnitude: a
    power-of-ten scale overflows below about 1e-297, and infinities pass through.
    """
    values = np.asarray(losses, dtype=float)
    rounded = [float(f"{value:.{digits - 1}e}") for value in values.ravel()]
    return np.array(rounded, dtype=float).reshape(values.shape)


def paired_differences(losses_a, losses_b, digits: int = 12) -> np.ndarray:
    """``b - a`` without float noise, for the paired tests: 0 where the two losses agree to
    ``digits`` significant digits, else rounded to ``digits - 2`` significant digits.

    0.3 - 0.1 and 0.4 - 0.2 differ in the last bit; rounded, they tie. The losses are not
    rounded first: that moves each by up to half its last kept digit, far more than the
    noise, and equal differences would then differ. A difference keeps fewer digits than
    a loss because the subtraction leaves it the noise of the larger loss.
    """
    a = np.asarray(losses_a, dtype=float)
    b = np.asarray(losses_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two 1-D sequences of equal length, got {a.shape} and {b.shape}")
    same = without_float_noise(a, digits) == without_float_noise(b, digits)
    return np.where(same, 0.0, without_float_noise(b - a, digits - 2))


def average_ranks(losses) -> np.ndarray:
    """Mean rank of each method (1 = lowest loss; ties share mid-ranks), as in Friedman."""
    return rankdata(_loss_matrix(losses), axis=1).mean(axis=0)


def expected_rank(losses) -> np.ndarray:
    """Lacoste's expected rank (L1504): on each problem, the number of methods with loss
    <= this method's (itself included), averaged over problems. Ties count against."""
    return rankdata(_loss_matrix(losses), method="max", axis=1).mean(axis=0)


def win_frequency(losses) -> np.ndarray:
    """``W[a, b]``: fraction of problems where method a has lower loss than b, ties 0.5."""
    matrix = _loss_matrix(losses)
    a = matrix[:, :, None]
    b = matrix[:, None, :]
    return ((a < b) + 0.5 * (a == b)).mean(axis=0)
