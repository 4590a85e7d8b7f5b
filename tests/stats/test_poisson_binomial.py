import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from ensembo.stats import (
    disagreement_counts,
    pairwise_probability,
    pb_test,
    pb_test_from_counts,
    poisson_binomial_pmf,
)

# Table 4.5 of Lacoste's thesis (L1128-1152): columns k_h+1, k_g+1 (svm vs parzen).
TABLE_4_5 = [
    (11, 14),
    (12, 20),
    (10, 16),
    (13, 15),
    (31, 17),
    (22, 22),
    (27, 35),
    (14, 18),
    (17, 25),
    (24, 17),
    (149, 240),
    (16, 30),
    (19, 14),
    (11, 16),
    (79, 127),
    (15, 20),
    (10, 11),
    (15, 15),
    (11, 29),
    (14, 18),
    (46, 64),
    (31, 1019),
]


def brute_force_pmf(p):
    pmf = np.zeros(len(p) + 1)
    for outcome in itertools.product([0, 1], repeat=len(p)):
        weight = np.prod([pi if d else 1 - pi for pi, d in zip(p, outcome, strict=True)])
        pmf[sum(outcome)] += weight
    return pmf


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=9))
def test_dp_matches_enumeration(p):
    np.testing.assert_allclose(poisson_binomial_pmf(p), brute_force_pmf(p), atol=1e-12)


def test_pb_test_matches_direct_sum_over_outcomes():
    p = [0.9, 0.2, 0.65, 0.5, 0.99]
    direct = 0.0
    for outcome in itertools.product([0, 1], repeat=len(p)):
        weight = np.prod([pi if d else 1 - pi for pi, d in zip(p, outcome, strict=True)])
        kappa = sum(outcome)
        direct += weight * beta.cdf(0.5, len(p) - kappa + 1, kappa + 1)
    assert pb_test(p) == pytest.approx(direct, abs=1e-12)


def test_worked_number_from_notes_002():
    # notes/002 §3.6 [CHECK]: Pr(svm > parzen) = 0.957 on Table 4.5's counts.
    counts = [(a - 1, b - 1) for a, b in TABLE_4_5]
    assert pb_test_from_counts(counts) == pytest.approx(0.957, abs=5e-4)


def test_pairwise_probability_closed_form_and_symmetry():
    # notes/002 §3.3 [CHECK]: k_h=10, k_g=20 -> 0.9646 (h made fewer exclusive errors).
    assert pairwise_probability(10, 20) == pytest.approx(0.9646, abs=5e-5)
    assert pairwise_probability(10, 20) + pairwise_probability(20, 10) == pytest.approx(1.0)
    assert pairwise_probability(7, 7) == pytest.approx(0.5)


def test_pb_test_is_symmetric_and_half_for_coin_flips():
    p = [0.8, 0.3, 0.95, 0.6]
    assert pb_test(p) + pb_test([1 - x for x in p]) == pytest.approx(1.0)
    assert pb_test([0.5] * 7) == pytest.approx(0.5)


def test_disagreement_counts():
    wrong_a = np.array([1, 0, 1, 1, 0], dtype=bool)
    wrong_b = np.array([1, 1, 0, 0, 0], dtype=bool)
    assert disagreement_counts(wrong_a, wrong_b) == (2, 1)


@pytest.mark.parametrize("bad", [[1.2], [-0.1], [float("nan")]])
def test_rejects_invalid_probabilities(bad):
    with pytest.raises(ValueError, match="probabilities"):
        poisson_binomial_pmf(bad)


def test_pb_test_stays_a_probability_when_the_pmf_rounds_above_one():
    """200 near-certain wins summed to 1.0000000000000004."""
    assert pb_test(np.full(200, 0.999)) <= 1.0
    assert pb_test(np.full(200, 0.001)) >= 0.0


@pytest.mark.parametrize(
    ("errors_a", "errors_b", "named"),
    [(float("nan"), 3, "errors_a"), (2, float("inf"), "errors_b"), (-1, 3, "errors_a")],
)
def test_pairwise_probability_refuses_a_count_that_is_not_finite_or_negative(
    errors_a, errors_b, named
):
    with pytest.raises(ValueError, match=f"{named} must be a finite count >= 0"):
        pairwise_probability(errors_a, errors_b)


@pytest.mark.parametrize("prior", [0.0, -1.0, float("nan")])
def test_a_prior_that_is_not_positive_is_refused_naming_prior(prior):
    """prior 0 gave p nan, and from counts an error about "probabilities"."""
    with pytest.raises(ValueError, match="prior must be a finite number > 0"):
        pairwise_probability(0, 0, prior=prior)
    with pytest.raises(ValueError, match="prior must be a finite number > 0"):
        pb_test_from_counts([(1, 2), (0, 0)], prior=prior)
    with pytest.raises(ValueError, match="prior must be a finite number > 0"):
        pb_test([0.5, 0.7], prior=prior)


def test_a_bad_count_is_refused_naming_its_data_set():
    with pytest.raises(ValueError, match=r"counts\[1\] \(data set 1\): errors_b must be a "
                       r"finite count >= 0, got nan"):
        pb_test_from_counts([(1, 2), (0, float("nan")), (3, 1)])
