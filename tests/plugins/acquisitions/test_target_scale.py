"""Acquisitions rank points the same whatever the unit of the targets, down to points
whose variance is (nearly) zero: the variance floor is relative, not 1e-12 in target
units."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.acquisitions.log_expected_improvement import LogExpectedImprovement
from ensembo.plugins.acquisitions.lower_confidence_bound import LowerConfidenceBound
from ensembo.plugins.acquisitions.probability_of_improvement import ProbabilityOfImprovement

# points on observations (variance 0) and near them; a point with no variance *and* no
# improvement has no scale to follow (its variance is the smallest float) and is left out
MEAN = np.array([0.0, 0.3, -0.2, 0.5, 0.05, 0.1])
VARIANCE = np.array([0.0, 0.0, 1e-3, 0.04, 1e-8, 1e-10])
BEST = 0.1

# how each value changes when the targets are multiplied by c
SCALED = {
    "ei": (ExpectedImprovement(), lambda value, c: value * c),
    "log-ei": (LogExpectedImprovement(), lambda value, c: value + np.log(c)),
    "pi": (ProbabilityOfImprovement(), lambda value, c: value),
    "lcb": (LowerConfidenceBound(), lambda value, c: value * c),
}


@pytest.mark.parametrize("name", sorted(SCALED))
@pytest.mark.parametrize("c", [1e-13, 1e6])
def test_values_follow_the_unit_of_the_targets(name, c):
    acquisition, expected = SCALED[name]
    reference = acquisition(MEAN, VARIANCE, BEST)
    scaled = acquisition(MEAN * c, VARIANCE * c**2, BEST * c)
    np.testing.assert_allclose(scaled, expected(reference, c), rtol=1e-9, atol=0.0)


@pytest.mark.parametrize("name", sorted(SCALED))
def test_a_point_on_the_incumbent_with_no_variance_has_finite_gradients(name):
    acquisition, _ = SCALED[name]
    mean, variance = np.array([BEST]), np.zeros(1)
    assert np.all(np.isfinite(acquisition(mean, variance, BEST)))
    assert all(np.all(np.isfinite(g)) for g in acquisition.gradient(mean, variance, BEST))


def test_ei_with_no_variance_is_the_improvement():
    values = ExpectedImprovement()(MEAN * 1e-13, np.zeros(len(MEAN)), BEST * 1e-13)
    np.testing.assert_allclose(values, np.maximum(BEST - MEAN, 0.0) * 1e-13, rtol=1e-9, atol=1e-150)
