"""The Poisson-binomial (PB) test of Lacoste et al. (notes/002 §3.3–3.4).

It answers "is A better than B within this context of data sets?" from per-data-set
probabilities ``p_i = Pr(A beats B on data set i)``, instead of only counting wins as
the sign test does. Confident per-data-set wins count more than coin flips.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import beta


def _check_prior(prior: float) -> None:
    """A Beta(prior, prior) needs prior > 0; 0, a negative or nan made every p nan."""
    if not (math.isfinite(prior) and prior > 0):
        raise ValueError(f"prior must be a finite number > 0, got {prior!r}")


def _check_count(name: str, count: float) -> None:
    """A disagreement count is finite and >= 0: nan passed ``count < 0`` and gave p nan."""
    if not (math.isfinite(count) and count >= 0):
        raise ValueError(f"{name} must be a finite count >= 0, got {count!r}")


def pairwise_probability(errors_a: float, errors_b: float, prior: float = 1.0) -> float:
    """``Pr(R(A) < R(B))`` on one data set (Theorem 4.5.1).

    ``errors_a`` counts test examples where A is wrong and B right, ``errors_b`` the
    reverse; examples where both agree do not matter (counts averaged over runs may be
    fractional). ``prior`` is the Dirichlet concentration (1 = maximum entropy, as in
    the thesis).
    """
    _check_count("errors_a", errors_a)
    _check_count("errors_b", errors_b)
    _check_prior(prior)
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
    _check_prior(prior)
    pmf = poisson_binomial_pmf(probabilities)
    n = len(pmf) - 1
    kappa = np.arange(n + 1)
    # The pmf's rounding can sum to 1 + 4e-16 (N = 200): a probability stays in [0, 1].
    return float(np.clip(np.sum(pmf * beta.cdf(0.5, n - kappa + prior, kappa + prior)), 0, 1))


def pb_test_from_counts(counts: Sequence[tuple[float, float]], prior: float = 1.0) -> float:
    """The PB test from per-data-set disagreement counts ``(k_a, k_b)``; a bad count is
    refused naming its data set's index in ``counts``."""
    _check_prior(prior)
    return pb_test([_data_set_probability(i, pair, prior) for i, pair in enumerate(counts)], prior)


def _data_set_probability(index: int, pair: tuple[float, float], prior: float) -> float:
    """:func:`pairwise_probability` of ``counts[index]``, an error naming that index."""
    errors_a, errors_b = pair
    try:
        return pairwise_probability(errors_a, errors_b, prior)
    except ValueError as error:
        raise ValueError(f"counts[{index}] (data set {index}): {error}") from None
