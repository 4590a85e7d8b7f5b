"""``standardize`` on targets with a large offset: a spread of thousands of ulps is
signal, not rounding, and is divided out; a spread of a few ulps is not."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.plugins.surrogates.scaling import standardize
from ensembo.spaces import EncodedBatch


def _batch(values):
    values = np.asarray(values, dtype=float)
    return EncodedBatch(
        values=values,
        active=np.ones_like(values, dtype=bool),
        signature=np.zeros(len(values), dtype=np.int64),
    )


def test_a_small_signal_on_a_large_offset_is_standardized():
    signal = 1e-4 * np.random.default_rng(0).normal(size=20)  # ~3000 ulps of 1e9 wide
    standardized, location, scale = standardize(1e9 + signal)
    assert scale == pytest.approx(np.std(signal), rel=1e-3)  # targets round to 1.2e-7
    assert np.std(standardized) == pytest.approx(1.0, rel=1e-6)
    np.testing.assert_allclose(standardized, standardize(signal)[0], atol=3e-3)  # one ulp: 1.4e-3


@pytest.mark.parametrize("offset", [0.1, 1.0, -3.0, 1e9, 1e-13])
def test_targets_a_few_ulps_apart_count_as_equal(offset):
    ulp = np.spacing(abs(offset))
    y = offset + ulp * np.array([0.0, 1.0, 3.0, -2.0])
    standardized, location, scale = standardize(y)
    assert scale == 1.0
    assert np.all(np.abs(standardized) <= 8 * ulp)


def test_a_gp_fits_the_same_shape_under_a_large_offset():
    """With the offset 1e9 and a signal of 1e-3 the old threshold left the targets
    unscaled; ML-II then ran into its bounds (amplitude 0.05 against 0.22)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(12, 2))
    f = (x[:, 0] - 0.37) ** 2 + (x[:, 1] - 0.61) ** 2 + 0.3 * np.sin(7 * x[:, 0])
    plain, offset = GaussianProcessSurrogate(), GaussianProcessSurrogate()
    plain.fit(_batch(x), f, np.random.default_rng(0))
    offset.fit(_batch(x), 1e9 + 1e-3 * f, np.random.default_rng(0))
    (a,), (b,) = plain.hyperparameters, offset.hyperparameters
    assert b.amplitude == pytest.approx(a.amplitude, rel=0.05)
    np.testing.assert_allclose(b.lengthscales, a.lengthscales, rtol=0.05)
