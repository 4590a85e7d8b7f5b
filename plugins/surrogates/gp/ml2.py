"""Type-II maximum likelihood (MAP with the priors as penalties).

Multi-start L-BFGS-B on the log-space vector: the previous optimum (warm start, which
is usually within a few iterations of the new one), a neutral start, and random
starts from the priors. Few starts keep the per-iteration cost low; the warm start
carries what earlier restarts found.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ensembo.plugins.surrogates.gp.hyperparameters import (
    Hyperparameters,
    log_prior,
    sample_vector,
)
from ensembo.plugins.surrogates.gp.kernels import Kernel
from ensembo.plugins.surrogates.gp.likelihood import log_likelihood_and_gradient
from ensembo.plugins.surrogates.gp.posterior import BlockGeometry, training_geometry


def negative_log_posterior(
    vector: np.ndarray,
    kernel: Kernel,
    x: np.ndarray,
    y: np.ndarray,
    keys: np.ndarray,
    geometry: dict[int, BlockGeometry],
) -> tuple[float, np.ndarray]:
    value, gradient = log_likelihood_and_gradient(kernel, vector, x, y, keys, geometry)
    prior, prior_gradient = log_prior(vector, jacobian=False)
    total = value + prior
    if not np.isfinite(total) or not np.all(np.isfinite(gradient)):
        return 1e25, np.zeros_like(vector)
    return -total, -(gradient + prior_gradient)


def fit_ml2(
    kernel: Kernel,
    x: np.ndarray,
    y: np.ndarray,
    keys: np.ndarray,
    rng: np.random.Generator,
    previous: Hyperparameters | None,
    restarts: int,
    bounds: np.ndarray,
    max_iterations: int = 200,
) -> Hyperparameters:
    """Best hyperparameters over L-BFGS-B runs.

    A warm start (``previous``) is one run; a cold fit uses ``restarts`` runs from the
    neutral start and prior draws.
    """
    d = x.shape[1]
    geometry = training_geometry(x, keys)
    if previous is not None and len(previous.lengthscales) == d:
        starts = [previous.to_vector()]
    else:
        starts = [Hyperparameters.initial(d).to_vector()]
        while len(starts) < restarts:
            starts.append(sample_vector(d, rng))
    best_vector, best_value = starts[0], np.inf
    for start in starts:
        start = np.clip(start, bounds[:, 0], bounds[:, 1])
        result = minimize(
            negative_log_posterior, start, args=(kernel, x, y, keys, geometry), jac=True,
            method="L-BFGS-B", bounds=bounds, options={"maxiter": max_iterations},
        )
        if result.fun < best_value:
            best_vector, best_value = result.x, float(result.fun)
    return Hyperparameters.from_vector(best_vector)
