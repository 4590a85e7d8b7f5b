"""The Poisson-binomial (PB) test of Lacoste et al. (notes/002 §3.3–3.4).

It answers "is A better than B within this context of data sets?" from per-data-set
probabilities ``p_i = Pr(A beats B on data set i)``, instead of only counting wins as
the sign test does. Confident per-data-set wins count more than coin flips.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import beta


def pairwise_probability(errors_a: int, errors_b: int, prior: float = 1.0) -> float:
    """``Pr(R(A) < R(B))`` on one data set (Theorem 4.5.1).

    ``errors_a`` counts test examples where A is wrong and B right, ``errors_b`` the
    reverse; examples where both agree do not matter. ``prior`` is the Dirichlet
    concentration (1 = maximum entropy, as in the thesis).
    """
    if errors_a < 0 or errors_b < 0:
        raise ValueError(f"disagreement counts must be >= 0, got ({errors_a}, {errors_b})")
    return float(beta.cdf(0.5, prior + errors_a, prior + errors_b))


def disagreement_counts(wrong_a: np.ndarray, wrong_b: np.ndarray) -> tuple[int, int]:
    """``(k_a, k_b)``: examples only A gets wrong, and examples only B gets wrong."""
    wrong_a = np.asarray(wrong_a, dtype=bool)
    wrong_b = np.asarray(wrong_b, dtype=bool)
    if wrong_a.shape != wrong_b.shape:
        raise ValueError(f"error vectors differ in shape: {wrong_a.shape} vs {wrong_b.shape}")
    return int(np.sum(wrong_a & ~wrong_b)), int(np.sum(wrong_b & ~wrong_a))


def poisson_binomial_pmf(probabilities: Sequence[float]) -> np.ndarray:
    """``Pr(kappa)`` for kappa = 0..N successes of independent Bernoulli(p_i) trials.

    The O(N²) recursion of L973: ``q_i(k) = p_i q_{i-1}(k-1) + (1-p_i) q_{i-1}(k)``.
    """
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError(f"probabilities must be a 1-D sequence in [0, 1], got {probabilities!r}")
    q = np.zeros(len(p) + 1)
    q[0] = 1.0
    for i, p_i in enumerate(p, start=1):
        q[1 : i + 1] = p_i * q[0:i] + (1.0 - p_i) * q[1 : i + 1]
        q[0] *= 1.0 - p_i
    return q


def pb_test(probabilities: Sequence[float], prior: float = 1.0) -> float:
    """``Pr(A ≻ B | data)``: posterior probability that A wins on more than half of the
    context's data sets (Eq. at L952–959, Beta(prior, prior) on the win rate)."""
    pmf = poisson_binomial_pmf(probabilities)
    n = len(pmf) - 1
    kappa = np.arange(n + 1)
    return float(np.sum(pmf * beta.cdf(0.5, n - kappa + prior, kappa + prior)))


def pb_test_from_counts(counts: Sequence[tuple[int, int]], prior: float = 1.0) -> float:
    """The PB test from per-data-set disagreement counts ``(k_a, k_b)``."""
    return pb_test([pairwise_probability(a, b, prior) for a, b in counts], prior)
