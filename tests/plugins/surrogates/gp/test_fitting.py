"""Kernel and likelihood gradients, priors, ML-II, MCMC and the surrogate's contract."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensembo.errors import ComponentOptionError, PluginContractError
from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters, log_prior, vector_bounds
from ensembo.plugins.surrogates.gp.kernels import Laplace, LaplaceL1, Matern52
from ensembo.plugins.surrogates.gp.likelihood import log_likelihood_and_gradient
from ensembo.plugins.surrogates.gp.posterior import block_keys, training_geometry
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate, gp_conditional
from ensembo.protocols import DifferentiableSurrogate
from ensembo.registry import registry
from ensembo.spaces import EncodedBatch
from ensembo.spaces.encoding import activity_signature


def _batch(values, active=None):
    values = np.asarray(values, dtype=float)
    active = np.ones_like(values, dtype=bool) if active is None else active
    return EncodedBatch(values=values, active=active, signature=activity_signature(active))


def _central(f, x, step=1e-6):
    grad = np.zeros_like(x)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = step
        grad[i] = (f(x + e) - f(x - e)) / (2 * step)
    return grad


@pytest.mark.parametrize("kernel", [Matern52(), Laplace(), LaplaceL1()], ids=lambda k: k.name)
def test_kernel_input_and_lengthscale_gradients_match_finite_differences(kernel):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(size=(4, 3)), rng.uniform(size=(6, 3))
    hp = Hyperparameters(lengthscales=np.array([0.4, 0.9, 2.0]), amplitude=1.7, noise=1e-3, mean=0)
    weights = rng.normal(size=(4, 6))

    def weighted_sum(query):
        distance = kernel.distance(query.reshape(4, 3), b, hp.lengthscales)
        return float(np.sum(weights * hp.amplitude * kernel.value(distance)))

    np.testing.assert_allclose(
        kernel.input_gradient(weights, kernel.distance(a, b, hp.lengthscales), a, b, hp).ravel(),
        _central(weighted_sum, a.ravel()),
        rtol=1e-5,
    )
    sym = rng.normal(size=(6, 6))
    sym = sym + sym.T

    def by_log_lengthscales(log_l):
        distance = kernel.distance(b, b, np.exp(log_l))
        return float(np.sum(sym * hp.amplitude * kernel.value(distance)))

    (block,) = training_geometry(b, block_keys(None, 6)).values()
    np.testing.assert_allclose(
        kernel.lengthscale_gradient(sym, kernel.block_distance(block, hp.lengthscales), block, hp),
        _central(by_log_lengthscales, np.log(hp.lengthscales)),
        rtol=1e-5,
    )


@pytest.mark.parametrize("kernel", [Matern52(), LaplaceL1()], ids=lambda k: k.name)
@pytest.mark.parametrize("conditional", [False, True])
def test_log_likelihood_gradient_matches_finite_differences(conditional, kernel):
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(25, 3))
    y = np.cos(4 * x[:, 0]) + x[:, 2]
    keys = rng.choice([1, 2], size=25) if conditional else block_keys(None, 25)
    vector = Hyperparameters(
        lengthscales=np.array([0.3, 0.6, 1.1]), amplitude=1.2, noise=0.05, mean=0.2
    ).to_vector()
    _, gradient = log_likelihood_and_gradient(kernel, vector, x, y, keys)
    numeric = _central(lambda v: log_likelihood_and_gradient(kernel, v, x, y, keys)[0], vector)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jacobian", [False, True])
def test_log_prior_gradient_matches_finite_differences(jacobian):
    vector = np.array([-1.0, 0.3, 0.5, np.log(1e-3), 0.1])
    _, gradient = log_prior(vector, jacobian)
    np.testing.assert_allclose(
        gradient, _central(lambda v: log_prior(v, jacobian)[0], vector), rtol=1e-6, atol=1e-8
    )


def test_ml2_recovers_short_lengthscale_on_the_relevant_dimension():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(40, 3))
    y = np.sin(8 * x[:, 0])  # only x0 matters
    surrogate = GaussianProcessSurrogate()
    surrogate.fit(_batch(x), y, rng)
    (hp,) = surrogate.hyperparameters
    assert hp.lengthscales[0] < hp.lengthscales[1] and hp.lengthscales[0] < hp.lengthscales[2]
    bounds = np.exp(vector_bounds(3)[:3])
    assert np.all(hp.lengthscales >= bounds[:, 0] - 1e-12)
    assert np.all(hp.lengthscales <= bounds[:, 1] + 1e-9)
    mean, _ = surrogate.predict(_batch(x[:5]))
    np.testing.assert_allclose(mean, y[:5], atol=0.05)


def test_two_hundred_duplicated_points_do_not_raise():
    rng = np.random.default_rng(3)
    x = np.repeat(rng.uniform(size=(2, 4)), 100, axis=0)
    y = np.repeat([1.0, 2.0], 100)
    for options in ({}, {"kernel": "laplace"}):
        surrogate = GaussianProcessSurrogate(**options)
        surrogate.fit(_batch(x), y, rng)
        mean, variance, d_mean, d_variance = surrogate.predict_with_gradients(
            _batch(rng.uniform(size=(5, 4)))
        )
        assert (
            np.all(np.isfinite(mean)) and np.all(variance >= 0) and np.all(np.isfinite(d_variance))
        )
    constant = GaussianProcessSurrogate()
    constant.fit(_batch(x), np.zeros(200), rng)  # all targets equal too
    assert np.all(np.isfinite(constant.predict(_batch(x[:3]))[0]))


def test_mcmc_on_duplicated_points_does_not_raise():
    rng = np.random.default_rng(6)
    x = np.repeat(rng.uniform(size=(2, 3)), 25, axis=0)
    surrogate = GaussianProcessSurrogate(hyperparameters="mcmc", samples=1, burn_in=1)
    surrogate.fit(_batch(x), np.repeat([1.0, 2.0], 25), rng)
    assert np.all(np.isfinite(surrogate.predict(_batch(rng.uniform(size=(3, 3))))[0]))


def test_mcmc_samples_hyperparameters_within_bounds_and_mixture_gradients():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(15, 2))
    y = np.sin(5 * x[:, 0]) + x[:, 1]
    surrogate = GaussianProcessSurrogate(hyperparameters="mcmc", samples=4)
    surrogate.fit(_batch(x), y, rng)
    samples = surrogate.hyperparameters
    assert len(samples) == 4
    assert len({tuple(h.to_vector()) for h in samples}) > 1
    bounds = vector_bounds(2)
    for h in samples:
        v = h.to_vector()
        assert np.all(v >= bounds[:, 0]) and np.all(v <= bounds[:, 1])
    query = rng.uniform(size=(6, 2))
    _, _, d_mean, d_variance = surrogate.predict_with_gradients(_batch(query))
    step = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = step
        up = surrogate.predict(_batch(query + e))
        down = surrogate.predict(_batch(query - e))
        np.testing.assert_allclose(
            d_mean[:, j], (up[0] - down[0]) / (2 * step), rtol=1e-4, atol=1e-7
        )
        np.testing.assert_allclose(
            d_variance[:, j], (up[1] - down[1]) / (2 * step), rtol=1e-4, atol=1e-7
        )


@pytest.mark.parametrize("kernel, hyperparameters", [
    ("matern52", "ml2"), ("laplace-l1", "ml2"), ("laplace-l1", "mcmc"),
])
def test_conditional_gp_keeps_branches_apart(kernel, hyperparameters):
    rng = np.random.default_rng(5)
    values = rng.uniform(size=(30, 2))
    active = np.ones((30, 2), dtype=bool)
    active[15:, 1] = False
    values[15:, 1] = 0.5
    y = np.where(active[:, 1], 10.0 + values[:, 0], values[:, 0])
    options = {"samples": 3, "burn_in": 5} if hyperparameters == "mcmc" else {}
    surrogate = gp_conditional(kernel=kernel, hyperparameters=hyperparameters, **options)
    surrogate.fit(_batch(values, active), y, rng)
    assert surrogate.kernel.name == kernel
    assert surrogate.posteriors[0].blocks.keys() == set(activity_signature(active).tolist())
    bounds = vector_bounds(2)
    for hp in surrogate.hyperparameters:
        assert np.all((hp.to_vector() >= bounds[:, 0]) & (hp.to_vector() <= bounds[:, 1]))
    # A point of branch 2 placed exactly where branch-1 points cluster is not pulled up,
    # and each branch predicts its own observations.
    query = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.5]])
    query_active = np.array([[True, False], [True, True], [True, False]])
    mean, variance, d_mean, d_variance = surrogate.predict_with_gradients(
        _batch(query, query_active)
    )
    assert mean[0] < 5.0 < mean[1]
    assert np.all(variance >= 0.0) and np.all(np.isfinite(d_mean) & np.isfinite(d_variance))
    np.testing.assert_allclose(
        surrogate.predict(_batch(values[:4], active[:4]))[0], y[:4], atol=0.1
    )


def test_options_are_validated_with_valid_choices_listed():
    with pytest.raises(ValueError, match=r"\['laplace', 'laplace-l1', 'matern52'\]"):
        GaussianProcessSurrogate(kernel="laplace-L1")
    with pytest.raises(ValueError, match="mcmc"):
        GaussianProcessSurrogate(hyperparameters="hmc")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # "false" gave the conditional kernel (bool of a non-empty string)
        ({"conditional": "false"}, "gp: conditional must be true or false"),
        # accepted, and behaved like 0
        ({"hyperparameters": "mcmc", "burn_in": -5}, "gp: burn_in must be an integer >= 0"),
        # wrong types: a bare TypeError from a comparison, naming no option
        ({"restarts": "3"}, "gp: restarts must be an integer >= 1"),
        ({"samples": 2.5}, "gp: samples must be an integer >= 1"),
        ({"noise_floor": "1e-6"}, "gp: noise_floor must be a finite number > 0"),
        # accepted, and overflowed in the noise prior's gradient at every fit
        ({"noise_floor": 1e-300}, "gp: noise_floor must be in [1e-16, 1.0), got 1e-300"),
        ({"kernel": ["matern52"]}, "gp: unknown kernel"),
    ],
)
def test_refused_values_name_the_option(options, expected):
    with pytest.raises(ComponentOptionError, match=re.escape(expected)):
        registry().create("surrogate", "gp", **options)


@pytest.mark.parametrize("options", [{"restarts": 0}, {"kernel": "rbf"}, {"noise_floor": 1.0}])
def test_gp_cond_errors_name_gp_cond(options):
    """``gp-cond`` builds the ``gp`` class, and its option errors began ``gp:``."""
    with pytest.raises(ComponentOptionError, match=r"gp-cond: (restarts|unknown|noise)"):
        registry().create("surrogate", "gp-cond", **options)


def test_the_plugin_name_is_not_an_option():
    for name in ("gp", "gp-cond"):
        with pytest.raises(PluginContractError, match="unknown: plugin; its options: kernel"):
            registry().create("surrogate", name, plugin="x")


def test_valid_options_are_kept():
    surrogate = GaussianProcessSurrogate(conditional=True, restarts=3, noise_floor=1e-5)
    assert surrogate.conditional is True and surrogate.restarts == 3
    assert surrogate.noise_floor == 1e-5


@pytest.mark.parametrize("name", ["gp", "gp-cond"])
def test_registered_and_differentiable(name):
    assert isinstance(registry().create("surrogate", name), DifferentiableSurrogate)


@pytest.mark.parametrize("name", ["gp", "gp-cond"])
def test_inactive_values_left_missing_are_refused_naming_the_rule(name):
    """Under imputation rule ``none`` a GP's predictions were NaN: ``gp`` failed a few
    trials in with a PluginContractError blaming itself, ``gp-cond`` went on silently."""
    from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

    from ensembo.errors import SpaceError
    from ensembo.spaces import Space
    from ensembo.study import Study

    configspace = ConfigurationSpace()
    kernel, gamma = Categorical("k", ["lin", "rbf"]), Float("g", (0.0, 1.0))
    configspace.add([kernel, gamma])
    configspace.add(EqualsCondition(gamma, kernel, "rbf"))
    study = Study(Space(configspace).with_imputation("none"), surrogate=name, seed=0)
    with pytest.raises(SpaceError, match=rf"surrogate '{name}' cannot use imputation rule 'none'"):
        study.optimize(lambda c: 1.0 if c["k"] == "lin" else (c["g"] - 0.3) ** 2, n_trials=15)

