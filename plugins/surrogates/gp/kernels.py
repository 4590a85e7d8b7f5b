"""The GP's kernels: what the posterior and the likelihood ask of one, and the registry.

Two families. Radial kernels are functions ``k(r)`` of the Euclidean ARD distance and
share one implementation of the distance and the gradients
(:mod:`ensembo.plugins.surrogates.gp.radial`: ``matern52``, ``laplace``). Lévesque's
Laplace kernel sums per-dimension L1 distances and has its own
(:mod:`ensembo.plugins.surrogates.gp.laplace_l1`: ``laplace-l1``). Each kernel owns its
distance and both gradients, so the posterior and the likelihood work with either
family unchanged, the conditional kernel's blocks included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from ensembo.plugins.surrogates.gp.laplace_l1 import LaplaceL1
from ensembo.plugins.surrogates.gp.radial import Laplace, Matern52

if TYPE_CHECKING:
    from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
    from ensembo.plugins.surrogates.gp.posterior import BlockGeometry


class Kernel(Protocol):
    """A stationary kernel ``k = value(distance)`` with unit amplitude.

    ``distance`` is whatever the kernel is a function of (the Euclidean ARD distance or
    the summed L1 one); a posterior keeps it per block, and the gradients take it back
    rather than recompute it. The gradients are of the signal covariance ``sigma_f^2 k``
    against weights ``W``.
    """

    name: str

    def distance(self, a: np.ndarray, b: np.ndarray, lengthscales: np.ndarray) -> np.ndarray:
        """Between rows of ``a`` (n, d) and ``b`` (m, d), shape (n, m)."""
        ...

    def block_distance(self, block: BlockGeometry, lengthscales: np.ndarray) -> np.ndarray:
        """Among a training block's rows, from what the block keeps across the likelihood
        evaluations of one fit."""
        ...

    def value(self, distance: np.ndarray) -> np.ndarray: ...

    def lengthscale_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        block: BlockGeometry,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        """``sum_ab W_ab d (sigma_f^2 k(x_a, x_b)) / d log l_j`` for every j, shape (d,)."""
        ...

    def input_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        query: np.ndarray,
        train: np.ndarray,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        """``sum_b W_ab d (sigma_f^2 k(query_a, train_b)) / d query_a``, shape (m, d)."""
        ...


KERNELS: dict[str, type[Kernel]] = {
    "matern52": Matern52,
    "laplace": Laplace,
    "laplace-l1": LaplaceL1,
}
