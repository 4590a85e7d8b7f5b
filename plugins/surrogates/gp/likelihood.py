"""Log marginal likelihood of the GP and its gradient in the hyperparameter vector.

For each block, with ``W = alpha alpha^T - K^-1``, ``d L / d theta = 1/2 tr(W dK/dtheta)``;
blocks add up because the conditional kernel matrix is block-diagonal.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
from ensembo.plugins.surrogates.gp.kernels import RadialKernel, lengthscale_gradient
from ensembo.plugins.surrogates.gp.posterior import Posterior


def log_likelihood_and_gradient(
    kernel: RadialKernel, vector: np.ndarray, x: np.ndarray, y: np.ndarray, keys: np.ndarray
) -> tuple[float, np.ndarray]:
    hp = Hyperparameters.from_vector(vector)
    posterior = Posterior(kernel, hp, x, y, keys)
    gradient = np.zeros_like(vector, dtype=float)
    for block in posterior.blocks.values():
        n = len(block.rows)
        inverse = cho_solve((block.cholesky, True), np.eye(n), check_finite=False)
        weights = np.outer(block.alpha, block.alpha) - inverse
        q = kernel.q(block.distance)
        gradient[:-3] += 0.5 * hp.amplitude * lengthscale_gradient(weights * q, block.x, hp.lengthscales)
        gradient[-3] += 0.5 * hp.amplitude * float(np.sum(weights * block.unit_kernel))
        gradient[-2] += 0.5 * hp.noise * float(np.trace(weights))
        gradient[-1] += float(np.sum(block.alpha))
    return posterior.log_marginal_likelihood(), gradient
