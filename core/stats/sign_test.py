"""The two-sided sign test over paired scores (notes/002 §3.5): ties are dropped."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
from scipy.stats import binom

from ensembo.stats.ranking import paired_differences


@attrs.frozen(kw_only=True)
class SignTestResult:
    wins: int
    losses: int
    ties: int
    p_value: float


def sign_test(losses_a: Sequence[float], losses_b: Sequence[float]) -> SignTestResult:
    """Does A win (lower loss) more or less often than B? ``wins`` counts A's wins.

    ``p = 2 Σ_{i<=min(wins, losses)} C(n, i) / 2^n`` (capped at 1), n = wins + losses.
    Losses that differ only by float noise tie (:func:`paired_differences`), as in the
    Wilcoxon test. NaN losses are refused with a ValueError.
    """
    difference = paired_differences(losses_a, losses_b, "sign_test")  # > 0: A is better
    wins, losses = int(np.sum(difference > 0)), int(np.sum(difference < 0))
    n = wins + losses
    p_value = 1.0 if n == 0 else min(1.0, 2.0 * float(binom.cdf(min(wins, losses), n, 0.5)))
    return SignTestResult(wins=wins, losses=losses, ties=len(difference) - n, p_value=p_value)
