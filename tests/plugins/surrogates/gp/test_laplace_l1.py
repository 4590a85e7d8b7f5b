"""``laplace-l1``: Lévesque's per-dimension L1 Laplace kernel, next to the radial ones.

Gradients of the kernel, of the likelihood and of the posterior, and the conditional
kernel's block solve, are checked for every kernel in test_fitting.py and
test_posterior.py; here are its values, the pinned values of the radial kernels, and
the surrogate using it end to end.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ensembo
from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
from ensembo.plugins.surrogates.gp.kernels import KERNELS
from ensembo.plugins.surrogates.gp.posterior import Posterior, block_keys
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate, gp_conditional
from ensembo.spaces import EncodedBatch
from ensembo.spaces.encoding import activity_signature

ORIGIN = np.array([[0.0, 0.0]])
POINTS = np.array([[0.5, 0.5], [0.2, 0.9]])


def _batch(values, active=None):
    values = np.asarray(values, dtype=float)
    active = np.ones_like(values, dtype=bool) if active is None else active
    return EncodedBatch(values=values, active=active, signature=activity_signature(active))


def _unit(name, lengthscales):
    kernel = KERNELS[name]()
    return kernel.value(kernel.distance(ORIGIN, POINTS, np.asarray(lengthscales, dtype=float)))


def test_value_is_exp_of_minus_the_summed_per_dimension_distances():
    # (0, 0) against (0.5, 0.5) with unit length-scales: exp(-1), where the Euclidean
    # ``laplace`` gives exp(-sqrt(0.5)) = 0.4931
    np.testing.assert_allclose(_unit("laplace-l1", [1.0, 1.0]), [[math.exp(-1.0), math.exp(-1.1)]])
    assert _unit("laplace-l1", [1.0, 1.0])[0, 0] == pytest.approx(0.3679, abs=1e-4)
    assert _unit("laplace", [1.0, 1.0])[0, 0] == pytest.approx(0.4931, abs=1e-4)
    # per-dimension length-scales: 0.5 / 0.25 + 0.5 / 2 = 2.25, 0.2 / 0.25 + 0.9 / 2 = 1.25
    np.testing.assert_allclose(
        _unit("laplace-l1", [0.25, 2.0]), [[math.exp(-2.25), math.exp(-1.25)]], rtol=1e-15
    )
    rng = np.random.default_rng(0)
    a, b, lengthscales = rng.uniform(size=(5, 4)), rng.uniform(size=(7, 4)), rng.uniform(size=4)
    kernel = KERNELS["laplace-l1"]()
    formula = np.exp(-(np.abs(a[:, None, :] - b[None, :, :]) / lengthscales).sum(-1))
    np.testing.assert_allclose(kernel.value(kernel.distance(a, b, lengthscales)), formula)


def test_matern52_and_laplace_are_unchanged():
    """Values as the radial kernels gave them before ``laplace-l1``: stored studies use them."""

    def matern52(squared_r):  # (1 + s + s^2 / 3) exp(-s), s = sqrt(5) r
        s = math.sqrt(5.0 * squared_r)
        return (1.0 + s + s * s / 3.0) * math.exp(-s)

    np.testing.assert_allclose(
        _unit("matern52", [1.0, 1.0]), [[matern52(0.5), matern52(0.85)]], rtol=1e-14
    )
    # r^2 = (0.5 / 0.25)^2 + (0.5 / 2)^2 and (0.2 / 0.25)^2 + (0.9 / 2)^2
    np.testing.assert_allclose(
        _unit("laplace", [0.25, 2.0]),
        [[math.exp(-math.sqrt(4.0625)), math.exp(-math.sqrt(0.8425))]],
        rtol=1e-14,
    )
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(8, 2))
    y = np.sin(5 * x[:, 0]) + x[:, 1]
    hp = Hyperparameters(lengthscales=np.array([0.3, 0.8]), amplitude=1.4, noise=0.01, mean=0.2)
    query = np.array([[0.3, 0.6], [0.85, 0.1]])
    recorded = {  # mean, variance, d mean / dx, d variance / dx
        "matern52": (
            [0.9535477186809347, -0.8250493140205051],
            [0.6653299294674478, 0.016724740249565384],
            [[2.0862934035390697, 0.7996212452961506], [-2.0117915067022123, 0.6429023223068789]],
            [[-1.6047547457045563, 0.05069599388087559], [0.23283319051847526, 0.2502512808156109]],
        ),
        "laplace": (
            [0.5827799040644999, -0.7700116758838504],
            [1.0464490010459913, 0.2032074550787366],
            [[1.2682391387897314, 0.41977970798493436], [-0.5699756684774194, 1.562707053955315]],
            [
                [-0.8292097514641213, 0.049429674019131266],
                [-0.2751894660329571, 2.4049779085177385],
            ],
        ),
    }
    for name, expected in recorded.items():
        posterior = Posterior(KERNELS[name](), hp, x, y, block_keys(None, len(x)))
        for ours, theirs in zip(
            posterior.predict_with_gradients(query, block_keys(None, 2)), expected, strict=True
        ):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_a_short_optimization_completes():
    space = {
        "params": {
            "x": {"type": "float", "low": 0.0, "high": 1.0},
            "y": {"type": "float", "low": 0.0, "high": 1.0},
        }
    }

    def loss(config):
        return abs(config["x"] - 0.3) + abs(config["y"] - 0.6)

    study = ensembo.Study(
        space, surrogate={"name": "gp", "kernel": "laplace-l1"}, seed=0, n_initial=8
    )
    study.optimize(loss, n_trials=30)
    assert study.proposer.surrogate.kernel.name == "laplace-l1"
    assert len(study.trials) == 30 and all(np.isfinite(t.loss) for t in study.trials)
    assert study.best_trial.loss < min(t.loss for t in study.trials[:8])


@pytest.mark.parametrize("make, hyperparameters", [
    (GaussianProcessSurrogate, "ml2"), (GaussianProcessSurrogate, "mcmc"),
    (gp_conditional, "ml2"),
])
def test_the_l1_kernel_never_builds_the_squared_difference_tensor(
    monkeypatch, make, hyperparameters
):
    """The (n, n, d) tensor the radial kernels keep costs n^2 d floats (288 MB at n = 300,
    d = 200); the L1 kernel works from the coordinates, one dimension at a time."""
    from ensembo.plugins.surrogates.gp import posterior

    def built(self):
        raise AssertionError("the (n, n, d) squared-difference tensor was built")

    monkeypatch.setattr(posterior.BlockGeometry, "squared_differences", property(built))
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(40, 5))
    active = np.ones_like(x, dtype=bool)
    active[20:, 3:] = False
    x[20:, 3:] = 0.5
    surrogate = make(kernel="laplace-l1", hyperparameters=hyperparameters, samples=2,
                     burn_in=2)
    surrogate.fit(_batch(x, active), x.sum(1), np.random.default_rng(0))
    surrogate.predict_with_gradients(_batch(x, active))
    with pytest.raises(AssertionError, match="tensor was built"):  # the radial ones do
        GaussianProcessSurrogate(kernel="matern52").fit(
            _batch(x, active), x.sum(1), np.random.default_rng(0)
        )
