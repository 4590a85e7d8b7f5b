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


def _where_ei_is_a_normal_float(ei: SurrogateAcquisition, rng) -> EncodedBatch:
    """Random points where the integrated EI is far from underflow, so log(EI) is exact."""
    points = rng.uniform(size=(200, 2))
    points = points[ei.score(_batch(points)) > 1e-100][:8]
    assert len(points) >= 4
    return _batch(points)


def test_log_ei_integrates_as_the_log_of_the_mean_ei():
    """log-ei over samples is log mean_s EI_s (same maximizer as integrated EI), not
    mean_s log EI_s (the geometric mean, which picked points with up to 64% less EI)."""
    surrogate, best = _fitted_mcmc()
    log_ei = SurrogateAcquisition(surrogate, LogExpectedImprovement(), best=best)
    ei = SurrogateAcquisition(surrogate, ExpectedImprovement(), best=best)
    query = _where_ei_is_a_normal_float(ei, np.random.default_rng(1))
    np.testing.assert_allclose(log_ei.score(query), np.log(ei.score(query)), rtol=1e-9)
    values, gradient = log_ei.score_with_gradient(query)
    np.testing.assert_allclose(values, log_ei.score(query), rtol=1e-12)
    ei_values, ei_gradient = ei.score_with_gradient(query)
    np.testing.assert_allclose(gradient, ei_gradient / ei_values[:, None], rtol=1e-6)


class _DeclaredLog:
    """A third-party acquisition declaring that it returns a log utility."""

    log_space = True

    def __call__(self, mean, variance, best):
        with np.errstate(divide="ignore"):  # EI underflows to 0 under some samples
            return np.log(ExpectedImprovement()(mean, variance, best))

    def gradient(self, mean, variance, best):
        value = ExpectedImprovement()(mean, variance, best)
        by_mean, by_variance = ExpectedImprovement().gradient(mean, variance, best)
        return by_mean / value, by_variance / value


def test_an_acquisition_declaring_log_space_integrates_in_log_space():
    surrogate, best = _fitted_mcmc()
    declared = SurrogateAcquisition(surrogate, _DeclaredLog(), best=best)
    ei = SurrogateAcquisition(surrogate, ExpectedImprovement(), best=best)
    query = _where_ei_is_a_normal_float(ei, np.random.default_rng(3))
    np.testing.assert_allclose(declared.score(query), np.log(ei.score(query)), rtol=1e-9)


def test_log_ei_far_in_the_tail_integrates_without_underflow():
    """Where every sample's EI underflows, the combination stays finite, with the
    gradient of the dominant sample."""
    surrogate, best = _fitted_mcmc()
    query = _batch(np.random.default_rng(4).uniform(size=(5, 2)))
    surface = SurrogateAcquisition(surrogate, LogExpectedImprovement(), best=best - 1e3)
    values, gradient = surface.score_with_gradient(query)
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(gradient))
    assert np.all(values < -700)  # EI itself would be 0
