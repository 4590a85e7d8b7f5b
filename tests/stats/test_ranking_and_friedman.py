import numpy as np
import pytest
from scipy.stats import friedmanchisquare

from ensembo.stats import (
    average_ranks,
    expected_rank,
    friedman_test,
    nemenyi_critical_difference,
    win_frequency,
    without_float_noise,
)

LOSSES = np.array([[0.1, 0.2, 0.3], [0.3, 0.1, 0.2], [0.2, 0.3, 0.1], [0.1, 0.1, 0.4]])


def test_average_ranks_use_mid_ranks():
    np.testing.assert_allclose(
        average_ranks(LOSSES), [(1 + 3 + 2 + 1.5) / 4, (2 + 1 + 3 + 1.5) / 4, (3 + 2 + 1 + 3) / 4]
    )


def test_expected_rank_counts_ties_against_each_method():
    # Rank_{h_i} = sum_l I[R(h_l) <= R(h_i)] (notes/002 §4).
    np.testing.assert_allclose(
        expected_rank(LOSSES), [(1 + 3 + 2 + 2) / 4, (2 + 1 + 3 + 2) / 4, (3 + 2 + 1 + 3) / 4]
    )


def test_win_frequency_counts_ties_half():
    w = win_frequency(LOSSES)
    assert w[0, 1] == pytest.approx((1 + 0 + 1 + 0.5) / 4)
    np.testing.assert_allclose(w + w.T, np.ones((3, 3)))
    np.testing.assert_allclose(np.diag(w), 0.5)


def test_non_transitive_cycle_from_notes():
    # notes/002 §3.4: A beats B, B beats C, C beats A, each 2 of 3.
    w = win_frequency(LOSSES[:3])
    assert w[0, 1] > 0.5 and w[1, 2] > 0.5 and w[2, 0] > 0.5


def test_friedman_matches_scipy_including_ties():
    rng = np.random.default_rng(0)
    losses = rng.integers(0, 5, size=(12, 4)).astype(float)
    ours = friedman_test(losses)
    theirs = friedmanchisquare(*losses.T)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)


@pytest.mark.parametrize(("k", "q"), [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (10, 3.164)])
def test_nemenyi_critical_difference_uses_demsar_table(k, q):
    n = 14
    expected = q * np.sqrt(k * (k + 1) / (6 * n))
    assert nemenyi_critical_difference(k, n) == pytest.approx(expected, rel=1e-3)


def test_friedman_needs_three_methods():
    with pytest.raises(ValueError, match=">= 3 methods"):
        friedman_test(np.ones((4, 2)))


def test_means_of_the_same_errors_summed_in_another_order_tie():
    first, second = np.mean([0.1, 0.2, 0.3]), np.mean([0.3, 0.2, 0.1])
    assert first != second  # the last bit differs
    losses = without_float_noise([[first, second, 0.25], [0.0, -1e-3, 123.456789]])
    assert losses[0, 0] == losses[0, 1]
    assert average_ranks(losses[:1]).tolist() == [1.5, 1.5, 3.0]
    np.testing.assert_array_equal(losses[1], [0.0, -1e-3, 123.456789])


def test_rounding_passes_infinities_and_keeps_values_of_any_magnitude():
    values = [np.inf, -np.inf, 1e-300, 5e-324, -2.5e-310, 1e300, 0.0]
    np.testing.assert_array_equal(without_float_noise(values), values)
    assert np.isnan(without_float_noise([np.nan])).all()
    assert without_float_noise([1e-300 * (1 + 1e-15)])[0] == 1e-300


def test_ranks_and_friedman_tie_losses_that_differ_in_the_last_bit():
    first, second = np.mean([0.1, 0.2, 0.3]), np.mean([0.3, 0.2, 0.1])
    noisy = [[first, second, 0.25], [0.3, 0.1, 0.2]]
    exact = [[0.2, 0.2, 0.25], [0.3, 0.1, 0.2]]
    np.testing.assert_array_equal(average_ranks(noisy), average_ranks(exact))
    np.testing.assert_array_equal(expected_rank(noisy), expected_rank(exact))
    np.testing.assert_array_equal(win_frequency(noisy), win_frequency(exact))
    assert friedman_test(noisy).statistic == friedman_test(exact).statistic


def test_losses_one_ulp_apart_across_a_rounding_boundary_tie():
    # 0.1234567890125 and the next float round to 12 digits on either side of ...2|...3;
    # a relative tolerance cannot split them.
    a = 0.1234567890125
    b = np.nextafter(a, 1.0)
    losses = [[a, b, 0.5], [0.3, 0.1, 0.2]]
    exact = [[a, a, 0.5], [0.3, 0.1, 0.2]]
    np.testing.assert_array_equal(average_ranks(losses), average_ranks(exact))
    np.testing.assert_array_equal(expected_rank(losses), expected_rank(exact))
    np.testing.assert_array_equal(win_frequency(losses), win_frequency(exact))
    assert friedman_test(losses).statistic == friedman_test(exact).statistic


def test_the_tolerance_keeps_real_differences_and_infinities_apart():
    from ensembo.stats import tie_float_noise

    row = [0.1, 0.1 * (1 + 1e-10), np.inf, 1e300, -np.inf, 0.0, 5e-324]
    np.testing.assert_array_equal(tie_float_noise([row]), [row])
    assert average_ranks([[np.inf, 1e300, np.inf]]).tolist() == [2.5, 1.0, 2.5]


@pytest.mark.parametrize(
    ("function", "name"),
    [(average_ranks, "average_ranks"), (expected_rank, "expected_rank"),
     (win_frequency, "win_frequency"), (friedman_test, "friedman_test")],
)
def test_ranks_and_friedman_refuse_nan_naming_the_function(function, name):
    with pytest.raises(ValueError, match=rf"{name}: losses must not be NaN"):
        function([[np.nan, 1.0, 2.0], [0.0, 1.0, 2.0]])


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_alpha_outside_zero_one_is_refused_naming_alpha(alpha):
    """alpha 1.5 gave a critical difference of nan, 0 one of inf, with no error."""
    with pytest.raises(ValueError, match="alpha must be strictly between 0 and 1"):
        nemenyi_critical_difference(5, 10, alpha=alpha)
    with pytest.raises(ValueError, match="alpha must be strictly between 0 and 1"):
        friedman_test(LOSSES, alpha=alpha)
