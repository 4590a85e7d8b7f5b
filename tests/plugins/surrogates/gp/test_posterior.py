"""GP posterior: agreement with scikit-learn, gradients, conditional block structure."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern

from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
from ensembo.plugins.surrogates.gp.kernels import Laplace, LaplaceL1, Matern52
from ensembo.plugins.surrogates.gp.posterior import Posterior, block_keys


def _data(seed=0, n=30, d=3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, d))
    y = np.sin(6 * x[:, 0]) + x[:, 1] ** 2 - 0.5 * x[:, 2] + 0.05 * rng.normal(size=n)
    return x, y


HP = Hyperparameters(lengthscales=np.array([0.3, 0.7, 1.5]), amplitude=1.7, noise=0.01, mean=0.0)


def test_posterior_equals_sklearn_under_fixed_hyperparameters():
    x, y = _data()
    query = np.random.default_rng(1).uniform(size=(50, 3))
    kernel = ConstantKernel(HP.amplitude, "fixed") * Matern(HP.lengthscales, "fixed", nu=2.5)
    reference = GaussianProcessRegressor(kernel, alpha=HP.noise, optimizer=None).fit(x, y)
    ref_mean, ref_std = reference.predict(query, return_std=True)
    mean, variance = Posterior(Matern52(), HP, x, y, block_keys(None, len(x))).predict(
        query, block_keys(None, 50)
    )
    np.testing.assert_allclose(mean, ref_mean, atol=1e-8, rtol=0)
    np.testing.assert_allclose(variance, ref_std**2, atol=1e-8, rtol=0)


def test_log_marginal_likelihood_equals_sklearn():
    x, y = _data()
    kernel = ConstantKernel(HP.amplitude, "fixed") * Matern(HP.lengthscales, "fixed", nu=2.5)
    reference = GaussianProcessRegressor(kernel, alpha=HP.noise, optimizer=None).fit(x, y)
    ours = Posterior(Matern52(), HP, x, y, block_keys(None, len(x))).log_marginal_likelihood()
    assert ours == pytest.approx(reference.log_marginal_likelihood_value_, abs=1e-8)


@pytest.mark.parametrize("kernel", [Matern52(), Laplace(), LaplaceL1()], ids=lambda k: k.name)
def test_mean_and_variance_gradients_match_finite_differences(kernel):
    x, y = _data(2)
    posterior = Posterior(kernel, HP, x, y, block_keys(None, len(x)))
    query = np.random.default_rng(3).uniform(size=(8, 3))
    keys = block_keys(None, len(query))
    _, _, d_mean, d_variance = posterior.predict_with_gradients(query, keys)
    step = 1e-6
    for j in range(3):
        shift = np.zeros(3)
        shift[j] = step
        up_m, up_v = posterior.predict(query + shift, keys)
        down_m, down_v = posterior.predict(query - shift, keys)
        np.testing.assert_allclose(d_mean[:, j], (up_m - down_m) / (2 * step), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(
            d_variance[:, j], (up_v - down_v) / (2 * step), rtol=1e-5, atol=1e-7
        )


def test_predict_with_gradients_agrees_with_predict():
    x, y = _data(4)
    posterior = Posterior(Matern52(), HP, x, y, block_keys(None, len(x)))
    query = np.vstack([x[:3], np.random.default_rng(5).uniform(size=(5, 3))])
    keys = block_keys(None, len(query))
    mean, variance = posterior.predict(query, keys)
    mean_g, variance_g, _, _ = posterior.predict_with_gradients(query, keys)
    np.testing.assert_allclose(mean_g, mean, atol=1e-10)
    np.testing.assert_allclose(variance_g, variance, atol=1e-10)


def _matern52(diff):
    s = np.sqrt(5.0 * (diff**2).sum(-1))
    return (1.0 + s + s * s / 3.0) * np.exp(-s)


def _laplace_l1(diff):
    return np.exp(-np.abs(diff).sum(-1))


def _dense_conditional(x, y, signature, query, query_signature, hp, unit_kernel=_matern52):
    """The conditional kernel as one dense matrix (zero across signatures), solved densely;
    ``unit_kernel`` maps scaled differences (n, m, d) to kernel values."""

    def k(a, sa, b, sb):
        diff = (a[:, None, :] - b[None, :, :]) / hp.lengthscales
        value = hp.amplitude * unit_kernel(diff)
        return value * (sa[:, None] == sb[None, :])

    matrix = k(x, signature, x, signature) + hp.noise * np.eye(len(x))
    cross = k(query, query_signature, x, signature)
    mean = hp.mean + cross @ np.linalg.solve(matrix, y - hp.mean)
    variance = hp.amplitude - np.einsum("ij,ji->i", cross, np.linalg.solve(matrix, cross.T))
    residual = y - hp.mean
    sign, logdet = np.linalg.slogdet(matrix)
    lml = (
        -0.5 * residual @ np.linalg.solve(matrix, residual)
        - 0.5 * logdet
        - 0.5 * len(x) * np.log(2 * np.pi)
    )
    return mean, variance, lml


@pytest.mark.parametrize(
    ("kernel", "unit_kernel"),
    [(Matern52(), _matern52), (LaplaceL1(), _laplace_l1)],
    ids=["matern52", "laplace-l1"],
)
def test_block_diagonal_conditional_solve_equals_dense_solve(kernel, unit_kernel):
    x, y = _data(6, n=40)
    rng = np.random.default_rng(7)
    signature = rng.choice([11, 22, 33], size=len(x))
    query = rng.uniform(size=(20, 3))
    query_signature = rng.choice([11, 22, 33, 44], size=len(query))  # 44: never observed
    hp = Hyperparameters(
        lengthscales=np.array([0.3, 0.7, 1.5]), amplitude=1.3, noise=0.02, mean=0.1
    )
    posterior = Posterior(kernel, hp, x, y, signature)
    mean, variance = posterior.predict(query, query_signature)
    dense_mean, dense_variance, dense_lml = _dense_conditional(
        x, y, signature, query, query_signature, hp, unit_kernel
    )
    np.testing.assert_allclose(mean, dense_mean, atol=1e-10)
    np.testing.assert_allclose(variance, dense_variance, atol=1e-10)
    assert posterior.log_marginal_likelihood() == pytest.approx(dense_lml, abs=1e-9)
    unseen = query_signature == 44
    np.testing.assert_allclose(mean[unseen], hp.mean)
    np.testing.assert_allclose(variance[unseen], hp.amplitude)
