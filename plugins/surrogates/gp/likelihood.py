"""Log marginal likelihood of the GP and its gradient in the hyperparameter vector.

For each block, with ``W = alpha alpha^T - K^-1``, ``d L / d theta = 1/2 tr(W dK/dtheta)``;
blocks add up because the conditional kernel matrix is block-diagonal. The inverse
comes from the Cholesky factor (LAPACK ``potri``) and the length-scale terms from the
kernel, given the block's kept geometry, so one evaluation costs two O(n^3/3)
factorizations and a few O(n^2 d) products.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpotri

from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
from ensembo.plugins.surrogates.gp.kernels import Kernel
from ensembo.plugins.surrogates.gp.posterior import BlockGeometry, Posterior, training_geometry


def cholesky_inverse(lower: np.ndarray) -> np.ndarray:
    inverse, info = dpotri(lower, lower=1)
    if info != 0:  # cannot happen for a factor robust_cholesky produced; stay exact anyway
        identity = np.eye(len(lower))
        return np.linalg.solve(lower.T, np.linalg.solve(lower, identity))
    return np.tril(inverse) + np.tril(inverse, -1).T


def log_likelihood_and_gradient(
    kernel: Kernel,
    vector: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    keys: np.ndarray,
    geometry: dict[int, BlockGeometry] | None = None,
) -> tuple[float, np.ndarray]:
    geometry = training_geometry(x, keys) if geometry is None else geometry
    hp = Hyperparameters.from_vector(vector)
    posterior = Posterior(kernel, hp, x, y, keys, geometry)
    gradient = np.zeros_like(vector, dtype=float)
    for key, block in posterior.blocks.items():
        weights = np.outer(block.alpha, block.alpha) - cholesky_inverse(block.cholesky)
        gradient[:-3] += 0.5 * kernel.lengthscale_gradient(
            weights, block.distance, geometry[key], hp
        )
        gradient[-3] += 0.5 * hp.amplitude * float(np.sum(weights * block.unit_kernel))
        gradient[-2] += 0.5 * hp.noise * float(np.trace(weights))
        gradient[-1] += float(np.sum(block.alpha))
    return posterior.log_marginal_likelihood(), gradient
