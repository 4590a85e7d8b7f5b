"""Ranks and win frequencies over a ``(n_problems, n_methods)`` loss matrix.

Pairwise tests are not transitive (notes/002 §3.4), so tables are sorted by rank.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def _loss_matrix(losses) -> np.ndarray:
    matrix = np.asarray(losses, dtype=float)
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
    """
    values = np.asarray(losses, dtype=float)
    magnitude = np.floor(np.log10(np.abs(np.where(values == 0.0, 1.0, values))))
    scale = 10.0 ** (digits - 1 - magnitude)
    return np.round(values * scale) / scale


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
