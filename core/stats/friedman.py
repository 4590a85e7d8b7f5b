"""Friedman test over several methods and the Nemenyi critical difference (Demšar 2006).

Two methods whose average ranks differ by more than the critical difference are
significantly different at level ``alpha`` after correcting for all pairs.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from scipy.stats import chi2, studentized_range

from ensembo.stats.ranking import _finite_or_infinite, average_ranks, tie_float_noise


@attrs.frozen(kw_only=True)
class FriedmanResult:
    statistic: float
    p_value: float
    average_ranks: np.ndarray = attrs.field(eq=False)
    critical_difference: float


def _check_alpha(alpha: float) -> None:
    """A significance level: 0 gave a critical difference of inf, 1 and beyond 0 or nan."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")


def nemenyi_critical_difference(n_methods: int, n_problems: int, alpha: float = 0.05) -> float:
    """``q_alpha * sqrt(k (k+1) / (6 N))`` with ``q_alpha`` the studentized range
    quantile over sqrt(2) (Demšar's table: 2.343 for k=3 at alpha=0.05)."""
    _check_alpha(alpha)
    if n_methods < 2 or n_problems < 1:
        raise ValueError(f"need >= 2 methods and >= 1 problem, got {n_methods} and {n_problems}")
    q_alpha = studentized_range.ppf(1 - alpha, n_methods, np.inf) / math.sqrt(2)
    return float(q_alpha * math.sqrt(n_methods * (n_methods + 1) / (6.0 * n_problems)))


def friedman_test(losses, alpha: float = 0.05) -> FriedmanResult:
    """Friedman chi-square with tie correction (matches scipy.stats.friedmanchisquare).

    Losses that agree to a relative 1e-12 tie (:func:`ensembo.stats.tie_float_noise`), in
    the ranks and in the tie correction alike; NaN losses are refused with a ValueError, and
    so is an ``alpha`` outside (0, 1), before any work."""
    _check_alpha(alpha)
    matrix = tie_float_noise(_finite_or_infinite(losses, "friedman_test"))
    if matrix.ndim != 2 or matrix.shape[1] < 3:
        raise ValueError(
            f"Friedman needs a (problems, methods) matrix with >= 3 methods, got {matrix.shape}"
        )
    n, k = matrix.shape
    ranks = average_ranks(matrix)
    statistic = 12.0 * n / (k * (k + 1)) * np.sum((ranks - (k + 1) / 2.0) ** 2)
    tie_term = 0.0
    for row in matrix:
        _, sizes = np.unique(row, return_counts=True)
        tie_term += np.sum(sizes**3 - sizes)
    correction = 1.0 - tie_term / (n * k * (k * k - 1))
    statistic = float(statistic / correction) if correction > 0 else 0.0
    return FriedmanResult(
        statistic=statistic,
        p_value=float(chi2.sf(statistic, k - 1)),
        average_ranks=ranks,
        critical_difference=nemenyi_critical_difference(k, n, alpha),
    )
