import numpy as np
import pytest
from scipy.stats import binomtest, rankdata, wilcoxon

from ensembo.stats import sign_test, wilcoxon_signed_rank
from ensembo.stats.wilcoxon import EXACT_LIMIT

# Table 4.6 of Lacoste's thesis (L1167-1191): test risks on 22 data sets.
SVM = [
    0.157,
    0.041,
    0.187,
    0.140,
    0.279,
    0.196,
    0.057,
    0.000,
    0.014,
    0.009,
    0.349,
    0.003,
    0.007,
    0.011,
    0.017,
    0.000,
    0.015,
    0.154,
    0.161,
    0.069,
    0.049,
    0.068,
]
ANN = [
    0.157,
    0.041,
    0.129,
    0.150,
    0.286,
    0.135,
    0.074,
    0.004,
    0.017,
    0.013,
    0.366,
    0.012,
    0.007,
    0.037,
    0.035,
    0.000,
    0.054,
    0.202,
    0.052,
    0.065,
    0.021,
    0.067,
]
PARZEN = [
    0.172,
    0.053,
    0.144,
    0.140,
    0.231,
    0.196,
    0.160,
    0.001,
    0.008,
    0.027,
    0.395,
    0.006,
    0.008,
    0.017,
    0.022,
    0.001,
    0.282,
    0.192,
    0.198,
    0.092,
    0.077,
    0.080,
]
ADABOOST = [
    0.151,
    0.053,
    0.141,
    0.206,
    0.231,
    0.257,
    0.109,
    0.009,
    0.040,
    0.038,
    0.331,
    0.016,
    0.007,
    0.016,
    0.041,
    0.000,
    0.027,
    0.202,
    0.357,
    0.051,
    0.042,
    0.079,
]


@pytest.mark.parametrize(
    ("a", "b", "printed"),
    [(SVM, PARZEN, 1.00), (ANN, PARZEN, 0.71), (ANN, ADABOOST, 0.83), (ADABOOST, PARZEN, 0.18)],
)
def test_sign_test_matches_table_4_3(a, b, printed):
    # Table 4.3 prints 1 - p (two decimals); pairs with rounding-induced ties are left out.
    assert 1 - sign_test(a, b).p_value == pytest.approx(printed, abs=0.005)


def test_wilcoxon_matches_table_4_4():
    assert 1 - wilcoxon_signed_rank(ANN, PARZEN).p_value == pytest.approx(0.95, abs=0.005)


def test_sign_test_against_scipy_binomtest():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.integers(0, 4, 15), rng.integers(0, 4, 15)
        result = sign_test(a, b)
        n = result.wins + result.losses
        expected = 1.0 if n == 0 else binomtest(result.wins, n, 0.5).pvalue
        assert result.p_value == pytest.approx(expected, rel=1e-9)
        assert result.ties == int(np.sum(a == b))


def test_wilcoxon_exact_matches_scipy_without_ties():
    rng = np.random.default_rng(0)
    for n in (1, 5, 12, 25):
        a, b = rng.normal(size=n), rng.normal(0.3, size=n)
        ours = wilcoxon_signed_rank(a, b)
        theirs = wilcoxon(a, b, method="exact")
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)
        assert min(ours.rank_sum_a_better, ours.rank_sum_b_better) == pytest.approx(
            theirs.statistic
        )


def test_wilcoxon_with_ties_is_close_to_scipy_normal_approximation():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 6, 60).astype(float)
    b = rng.integers(1, 7, 60).astype(float)
    ours = wilcoxon_signed_rank(a, b).p_value
    theirs = wilcoxon(a, b, method="approx", correction=False).pvalue
    assert ours == pytest.approx(theirs, rel=0.1, abs=1e-3)


def test_wilcoxon_large_sample_uses_normal_approximation_like_scipy():
    rng = np.random.default_rng(2)
    n = EXACT_LIMIT + 10
    a, b = rng.normal(size=n), rng.normal(0.1, size=n)
    theirs = wilcoxon(a, b, method="approx", correction=False).pvalue
    assert wilcoxon_signed_rank(a, b).p_value == pytest.approx(theirs, rel=1e-6)


def test_all_ties_give_p_one():
    assert sign_test([1, 2], [1, 2]).p_value == 1.0
    assert wilcoxon_signed_rank([1, 2], [1, 2]).p_value == 1.0


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="equal length"):
        sign_test([1, 2], [1])
    with pytest.raises(ValueError, match="equal length"):
        wilcoxon_signed_rank([1, 2], [1])


def test_wilcoxon_ties_differences_that_differ_only_in_the_last_bit():
    # b - a is 0.19999999999999998, 0.19999999999999996, 0.1, -0.2: three tied magnitudes
    a, b = [0.1, 0.5, 0.0, 0.2], [0.3, 0.7, 0.1, 0.0]
    result = wilcoxon_signed_rank(a, b)
    assert (result.rank_sum_a_better, result.rank_sum_b_better) == (7.0, 3.0)
    # ranks 3, 3, 1, 3 with random signs: a rank sum <= 3 in 5 of the 16 sign patterns
    assert result.p_value == pytest.approx(2 * 5 / 16)


SAME_ERRORS_REORDERED = (np.mean([0.1, 0.2, 0.3]), np.mean([0.3, 0.2, 0.1]))


def test_wilcoxon_drops_a_difference_that_is_float_noise():
    first, second = SAME_ERRORS_REORDERED
    assert first != second
    result = wilcoxon_signed_rank([first, 0.1, 0.2], [second, 0.3, 0.5])
    assert result.n_used == 2


def test_sign_test_counts_float_noise_as_a_tie():
    first, second = SAME_ERRORS_REORDERED
    result = sign_test([first, 0.1], [second, 0.3])
    assert (result.wins, result.losses, result.ties) == (1, 0, 1)


def test_equal_error_rate_differences_tie_whatever_the_rates():
    """Test errors are counts over n examples; two pairs whose counts differ by the same
    number must tie, however the rates were rounded on the way (run-to-run noise)."""
    from ensembo.stats import paired_differences

    rng = np.random.default_rng(4)
    for n in (249, 347, 900):
        count_a, count_b = rng.integers(0, n // 2, 200), rng.integers(0, n // 2, 200)
        count_b[:100] = count_a[:100] + rng.integers(-3, 4, 100)  # many equal differences
        exact = (count_b - count_a) / n  # one division each: equal rationals, equal floats
        noisy = paired_differences(count_a / n, count_b / n)
        np.testing.assert_array_equal(rankdata(np.abs(noisy)), rankdata(np.abs(exact)))
        np.testing.assert_array_equal(noisy == 0, exact == 0)
        result = wilcoxon_signed_rank(count_a / n, count_b / n)
        assert result.p_value == wilcoxon_signed_rank(np.zeros(200), exact).p_value


def test_differences_one_ulp_apart_across_a_rounding_boundary_tie():
    # 0.1234567890125 and the next float round to 12 digits on either side of ...2|...3;
    # within a relative tolerance they are the tie they are.
    from ensembo.stats import paired_differences

    a = 0.1234567890125
    b = np.nextafter(a, 1.0)
    assert paired_differences([a], [b]).tolist() == [0.0]
    result = sign_test([a, 0.1], [b, 0.3])
    assert (result.wins, result.losses, result.ties) == (1, 0, 1)
    assert wilcoxon_signed_rank([a, 0.1], [b, 0.3]).n_used == 1


@pytest.mark.parametrize(
    ("test", "name"), [(sign_test, "sign_test"), (wilcoxon_signed_rank, "wilcoxon_signed_rank")]
)
def test_paired_tests_refuse_nan_naming_the_function(test, name):
    with pytest.raises(ValueError, match=rf"{name}: losses_a must not be NaN"):
        test([0.1, np.nan, 0.3, 0.2], [0.2, 0.5, 0.6, 0.9])
    with pytest.raises(ValueError, match=rf"{name}: losses_b must not be NaN"):
        test([0.2, 0.5, 0.6, 0.9], [0.1, np.nan, 0.3, 0.2])
