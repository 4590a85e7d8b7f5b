"""Acquisition values against closed forms and gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from ensembo.errors import ComponentOptionError
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.acquisitions.log_expected_improvement import LogExpectedImprovement
from ensembo.plugins.acquisitions.lower_confidence_bound import LowerConfidenceBound
from ensembo.plugins.acquisitions.probability_of_improvement import ProbabilityOfImprovement
from ensembo.protocols import Acquisition
from ensembo.registry import registry

ACQUISITIONS = {
    "ei": ExpectedImprovement(),
    "ei-xi": ExpectedImprovement(xi=0.1),
    "log-ei": LogExpectedImprovement(),
    "pi": ProbabilityOfImprovement(xi=0.05),
    "lcb": LowerConfidenceBound(kappa=1.5),
}


def _points(seed: int = 0, n: int = 40):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    variance = rng.uniform(0.05, 2.0, size=n)
    return mean, variance


@pytest.mark.parametrize("name", sorted(ACQUISITIONS))
def test_gradient_matches_finite_differences(name):
    acquisition = ACQUISITIONS[name]
    mean, variance = _points()
    best = -0.3
    by_mean, by_variance = acquisition.gradient(mean, variance, best)
    step = 1e-6
    fd_mean = (
        acquisition(mean + step, variance, best) - acquisition(mean - step, variance, best)
    ) / (2 * step)
    fd_var = (
        acquisition(mean, variance + step, best) - acquisition(mean, variance - step, best)
    ) / (2 * step)
    np.testing.assert_allclose(by_mean, fd_mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(by_variance, fd_var, rtol=1e-5, atol=1e-7)


def test_ei_matches_closed_form():
    mean, variance = _points(1)
    best = 0.2
    sigma = np.sqrt(variance)
    z = (best - mean) / sigma
    expected = (best - mean) * norm.cdf(z) + sigma * norm.pdf(z)
    np.testing.assert_allclose(ExpectedImprovement()(mean, variance, best), expected, rtol=1e-12)


def test_log_ei_equals_log_of_ei_where_ei_is_representable():
    mean = np.linspace(-3, 8, 50)
    variance = np.full(50, 0.7)
    ei = ExpectedImprovement()(mean, variance, 0.0)
    np.testing.assert_allclose(LogExpectedImprovement()(mean, variance, 0.0), np.log(ei), rtol=1e-9)


def test_log_ei_is_finite_and_monotone_in_the_far_tail():
    # z from -5 to -1e8: EI underflows to 0 long before the end, log-EI must not.
    mean = np.logspace(0.7, 8, 200)
    variance = np.ones_like(mean)
    assert ExpectedImprovement()(mean, variance, 0.0)[-1] == 0.0
    values = LogExpectedImprovement()(mean, variance, 0.0)
    assert np.all(np.isfinite(values))
    assert np.all(np.diff(values) < 0)
    # Asymptotics: log h(z) ~ -z^2/2 - log(sqrt(2 pi)) - 2 log|z|.
    z = -mean[-1]
    assert values[-1] == pytest.approx(
        -0.5 * z * z - 0.5 * np.log(2 * np.pi) - 2 * np.log(-z), rel=1e-12
    )


def test_log_ei_gradient_in_the_tail_matches_finite_differences():
    acquisition = LogExpectedImprovement()
    mean = np.array([6.0, 20.0, 40.0, 300.0])
    variance = np.ones_like(mean)
    by_mean, by_variance = acquisition.gradient(mean, variance, 0.0)
    step = 1e-5
    fd = (
        acquisition(mean + step, variance, 0.0) - acquisition(mean - step, variance, 0.0)
    ) / (2 * step)
    fd_var = (
        acquisition(mean, variance + step, 0.0) - acquisition(mean, variance - step, 0.0)
    ) / (2 * step)
    np.testing.assert_allclose(by_mean, fd, rtol=1e-5)
    np.testing.assert_allclose(by_variance, fd_var, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(ACQUISITIONS))
def test_zero_variance_gives_finite_values_and_gradients(name):
    acquisition = ACQUISITIONS[name]
    mean, variance = np.array([0.0, 1.0]), np.zeros(2)
    assert np.all(np.isfinite(acquisition(mean, variance, 0.5)))
    assert all(np.all(np.isfinite(g)) for g in acquisition.gradient(mean, variance, 0.5))


def test_lcb_prefers_low_mean_and_high_variance():
    lcb = LowerConfidenceBound(kappa=2.0)
    values = lcb(np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 4.0]), 0.0)
    assert values[1] > values[0] and values[2] > values[0]


def test_negative_parameters_are_rejected_with_the_plugin_name():
    with pytest.raises(ValueError, match="ei: xi"):
        ExpectedImprovement(xi=-1)
    with pytest.raises(ValueError, match="lcb: kappa"):
        LowerConfidenceBound(kappa=-1)


@pytest.mark.parametrize(
    ("name", "option"), [("ei", "xi"), ("log-ei", "xi"), ("pi", "xi"), ("lcb", "kappa")]
)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), "0.1", None, True])
def test_non_finite_or_non_numeric_parameters_are_refused_by_name(name, option, value):
    """NaN passed ``< 0`` and made every acquisition value NaN, so the model was never
    used; a string or None failed in the comparison with a bare TypeError."""
    with pytest.raises(ComponentOptionError, match=f"{name}: {option} must be a finite number"):
        registry().create("acquisition", name, **{option: value})


def test_valid_parameters_become_floats():
    assert registry().create("acquisition", "ei", xi=1).xi == 1.0
    assert registry().create("acquisition", "lcb", kappa=0).kappa == 0.0


@pytest.mark.parametrize("name", ["ei", "log-ei", "pi", "lcb"])
def test_registered_and_satisfy_protocol(name):
    built = registry().create("acquisition", name)
    assert isinstance(built, Acquisition)
