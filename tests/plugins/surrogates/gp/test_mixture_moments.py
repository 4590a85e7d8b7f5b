"""``predict`` / ``predict_with_gradients``: the hyperparameter mixture's moments stay
accurate under a large target offset (they were computed as mean(v + m^2) - mean(m)^2
in target units, which cancelled to 0)."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.spaces import EncodedBatch


def _batch(values):
    values = np.atleast_2d(np.asarray(values, dtype=float))
    return EncodedBatch(
        values=values,
        active=np.ones_like(values, dtype=bool),
        signature=np.zeros(len(values), dtype=np.int64),
    )


X = np.random.default_rng(4).uniform(size=(10, 1))
QUERY = _batch([[0.05], [0.5], [0.97]])


def _fitted(offset: float, **options) -> GaussianProcessSurrogate:
    surrogate = GaussianProcessSurrogate(**options)
    surrogate.fit(_batch(X), offset + 0.1 * np.sin(6 * X[:, 0]), np.random.default_rng(0))
    return surrogate


@pytest.mark.parametrize("offset", [0.0, 1e4, 1e9])
def test_one_sample_predicts_exactly_its_own_variance(offset):
    surrogate = _fitted(offset)
    means, variances = surrogate.predict_samples(QUERY)
    mean, variance = surrogate.predict(QUERY)
    np.testing.assert_array_equal(mean, means[0])
    np.testing.assert_allclose(variance, variances[0], rtol=1e-12)
    assert np.all(variance > 0)
    with_gradients = surrogate.predict_with_gradients(QUERY)
    per_sample = surrogate.predict_samples_with_gradients(QUERY)
    for got, expected in zip(with_gradients, per_sample, strict=True):
        np.testing.assert_allclose(got, expected[0], rtol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1e9])
def test_mcmc_mixture_variance_and_its_gradient(offset):
    surrogate = _fitted(offset, hyperparameters="mcmc", samples=3, burn_in=5)
    x, keys = QUERY.values, np.zeros(len(QUERY.values), dtype=np.int64)
    parts = [p.predict(x, keys) for p in surrogate.posteriors]  # standardized units
    means = np.stack([m for m, _ in parts])
    spread = means.var(0) + np.stack([v for _, v in parts]).mean(0)
    scale = surrogate._scale
    _, variance = surrogate.predict(QUERY)
    np.testing.assert_allclose(variance, spread * scale**2, rtol=1e-10)
    _, variance_too, _, d_variance = surrogate.predict_with_gradients(QUERY)
    np.testing.assert_allclose(variance_too, variance, rtol=1e-10)
    step = 1e-6
    up = surrogate.predict(_batch(QUERY.values + step))[1]
    down = surrogate.predict(_batch(QUERY.values - step))[1]
    np.testing.assert_allclose(d_variance[:, 0], (up - down) / (2 * step), rtol=1e-4)
