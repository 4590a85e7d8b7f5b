"""Wilcoxon signed-rank test with an exact null distribution (notes/002 §3.5).

Zero differences are dropped and tied magnitudes share mid-ranks. Differences are
freed of float noise first (:func:`paired_differences`): 0.3 - 0.1 and 0.4 - 0.2 differ
in the last bit, and only within a relative tolerance do they tie. The null
distribution of ``c+`` is computed exactly for the observed ranks (each rank gets
sign ± with probability 1/2), so mid-ranks need no normal approximation. Ranks are
doubled to stay integers. Above ``EXACT_LIMIT`` pairs the normal approximation with
tie correction is used.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
from scipy.stats import norm, rankdata

from ensembo.stats.ranking import paired_differences

EXACT_LIMIT = 400


@attrs.frozen(kw_only=True)
class WilcoxonResult:
    rank_sum_a_better: float  # c+ : ranks of pairs where A has the lower loss
    rank_sum_b_better: float  # c- : ranks of pairs where B has the lower loss
    n_used: int
    p_value: float


def signed_rank_null(doubled_ranks: np.ndarray) -> np.ndarray:
    """``Pr(2 c+ = s)`` for s = 0..sum(doubled_ranks) under random signs."""
    total = int(np.sum(doubled_ranks))
    distribution = np.zeros(total + 1)
    distribution[0] = 1.0
    reach = 0
    for rank in doubled_ranks.astype(int):
        shifted = distribution[: reach + 1].copy()
        distribution[: reach + 1] *= 0.5
        distribution[rank : rank + reach + 1] += 0.5 * shifted
        reach += rank
    return distribution


def wilcoxon_signed_rank(losses_a: Sequence[float], losses_b: Sequence[float]) -> WilcoxonResult:
    """Two-sided test that the paired differences are symmetric around zero; NaN losses
    are refused with a ValueError. Pass unrounded losses (:func:`paired_differences`)."""
    difference = paired_differences(losses_a, losses_b, "wilcoxon_signed_rank")  # > 0: A better
    difference = difference[difference != 0]
    n = len(difference)
    if n == 0:
        return WilcoxonResult(rank_sum_a_better=0.0, rank_sum_b_better=0.0, n_used=0, p_value=1.0)
    ranks = rankdata(np.abs(difference))  # mid-ranks
    c_plus = float(np.sum(ranks[difference > 0]))
    c_minus = float(np.sum(ranks[difference < 0]))
    if n <= EXACT_LIMIT:
        null = signed_rank_null(np.rint(2 * ranks))
        tail = float(np.sum(null[: int(round(2 * min(c_plus, c_minus))) + 1]))
    else:
        tail = _normal_tail(min(c_plus, c_minus), ranks)
    return WilcoxonResult(
        rank_sum_a_better=c_plus, rank_sum_b_better=c_minus, n_used=n, p_value=min(1.0, 2 * tail)
    )


def _normal_tail(statistic: float, ranks: np.ndarray) -> float:
    n = len(ranks)
    mean = n * (n + 1) / 4
    _, tie_sizes = np.unique(ranks, return_counts=True)
    variance = n * (n + 1) * (2 * n + 1) / 24 - np.sum(tie_sizes**3 - tie_sizes) / 48
    return float(norm.cdf((statistic - mean) / np.sqrt(variance)))
