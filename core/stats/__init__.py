"""Statistical comparison of optimizers and learners over many problems.

Used by the benchmark reports: the Poisson-binomial test (Lacoste), sign test,
Wilcoxon signed-rank, Friedman with the Nemenyi critical difference, expected rank and
win frequency.
"""

from ensembo.stats.friedman import FriedmanResult, friedman_test, nemenyi_critical_difference
from ensembo.stats.poisson_binomial import (
    disagreement_counts,
    pairwise_probability,
    pb_test,
    pb_test_from_counts,
    poisson_binomial_pmf,
)
from ensembo.stats.ranking import (
    average_ranks,
    expected_rank,
    paired_differences,
    tie_float_noise,
    win_frequency,
    without_float_noise,
)
from ensembo.stats.sign_test import SignTestResult, sign_test
from ensembo.stats.wilcoxon import WilcoxonResult, wilcoxon_signed_rank

__all__ = [
    "FriedmanResult",
    "SignTestResult",
    "WilcoxonResult",
    "average_ranks",
    "disagreement_counts",
    "expected_rank",
    "friedman_test",
    "nemenyi_critical_difference",
    "paired_differences",
    "pairwise_probability",
    "pb_test",
    "pb_test_from_counts",
    "poisson_binomial_pmf",
    "sign_test",
    "tie_float_noise",
    "win_frequency",
    "wilcoxon_signed_rank",
    "without_float_noise",
]
