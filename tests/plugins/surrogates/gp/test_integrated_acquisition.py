"""Acquisition integrated over MCMC hyperparameter samples (SurrogateAcquisition)."""

from __future__ import annotations

import numpy as np

from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.acquisitions.log_expected_improvement import LogExpectedImprovement
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.proposal import SurrogateAcquisition
from ensembo.protocols import SampledSurrogate
from ensembo.spaces import EncodedBatch


def _batch(values):
    values = np.asarray(values, dtype=float)
    active = np.ones_like(values, dtype=bool)
    return EncodedBatch(
        values=values, active=active, signature=np.zeros(len(values), dtype=np.int64)
    )


def _fitted_mcmc():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(12, 2))
    surrogate = GaussianProcessSurrogate(hyperparameters="mcmc", samples=3)
    y = np.sin(4 * x[:, 0]) + x[:, 1]
    surrogate.fit(_batch(x), y, rng)
    return surrogate, float(y.min())


def test_score_is_the_average_of_per_sample_acquisitions():
    surrogate, best = _fitted_mcmc()
    assert isinstance(surrogate, SampledSurrogate)
    query = _batch(np.random.default_rng(1).uniform(size=(7, 2)))
    surface = SurrogateAcquisition(surrogate, ExpectedImprovement(), best=best)
    means, variances = surrogate.predict_samples(query)
    per_sample = [ExpectedImprovement()(m, v, best) for m, v in zip(means, variances, strict=True)]
    np.testing.assert_allclose(surface.score(query), np.mean(per_sample, axis=0), rtol=1e-12)
    mixture_ei = ExpectedImprovement()(*surrogate.predict(query), best)
    # Integrated over the samples, not moment-matched:
    assert not np.allclose(surface.score(query), mixture_ei, rtol=1e-6, atol=0)


def test_integrated_gradient_matches_finite_differences():
    surrogate, best = _fitted_mcmc()
    surface = SurrogateAcquisition(surrogate, LogExpectedImprovement(), best=best)
    query = np.random.default_rng(2).uniform(size=(5, 2))
    values, gradient = surface.score_with_gradient(_batch(query))
    np.testing.assert_allclose(values, surface.score(_batch(query)), rtol=1e-6)
    step = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = step
        numeric = (surface.score(_batch(query + e)) - surface.score(_batch(query - e))) / (2 * step)
        np.testing.assert_allclose(gradient[:, j], numeric, rtol=1e-4, atol=1e-7)
