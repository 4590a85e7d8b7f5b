"""Lévesque's Laplace kernel with one length-scale per dimension (thesis §5.4.2, Eq. 5.15).

``k(x, x') = exp(-s)`` with the L1 distance ``s = sum_d |x_d - x'_d| / l_d``: a product of
one-dimensional exponential kernels, the limit of the Mondrian kernel's axis-aligned
cuts, which is why the thesis expects it to behave like a random forest while keeping
GP uncertainty (notes/003, L1385-1421; per-dimension length-scales as its experiments
used, L1474). It is not radial, so it has its own gradients:
``d k / d log l_j = k |x_j - x'_j| / l_j`` and ``d k / d x_j = -k sign(x_j - x'_j) / l_j``,
the latter taken as 0 where ``x_j = x'_j`` (a subgradient, like ``laplace`` at ``r = 0``).
Everything loops over dimensions on (n, m) matrices, so no (n, m, d) tensor is made
whatever n and d.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
    from ensembo.plugins.surrogates.gp.posterior import BlockGeometry


def _differences(a: np.ndarray, b: np.ndarray) -> Iterator[np.ndarray]:
    """``a_j - b_j`` as an (n, m) matrix, for one dimension ``j`` after the other."""
    return (a[:, j, None] - b[None, :, j] for j in range(a.shape[1]))


class LaplaceL1:
    """``exp(-sum_d |x_d - x'_d| / l_d)``: ``value`` of the summed L1 distance ``s``."""

    name = "laplace-l1"

    def distance(self, a: np.ndarray, b: np.ndarray, lengthscales: np.ndarray) -> np.ndarray:
        total = np.zeros((a.shape[0], b.shape[0]))
        for diff, lengthscale in zip(_differences(a, b), lengthscales, strict=True):
            total += np.abs(diff) / lengthscale
        return total

    def block_distance(self, block: BlockGeometry, lengthscales: np.ndarray) -> np.ndarray:
        """From the coordinates: the kept squared differences are of no use here."""
        return self.distance(block.x, block.x, lengthscales)

    def value(self, s: np.ndarray) -> np.ndarray:
        return np.exp(-s)

    def lengthscale_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        block: BlockGeometry,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        weighted = hyperparameters.amplitude * self.value(distance) * weights
        pairs = zip(_differences(block.x, block.x), hyperparameters.lengthscales, strict=True)
        return np.array(
            [np.sum(weighted * np.abs(diff)) / lengthscale for diff, lengthscale in pairs],
            dtype=float,
        )

    def input_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        query: np.ndarray,
        train: np.ndarray,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        weighted = hyperparameters.amplitude * self.value(distance) * weights
        gradient = np.empty(query.shape, dtype=float)
        pairs = zip(_differences(query, train), hyperparameters.lengthscales, strict=True)
        for j, (diff, lengthscale) in enumerate(pairs):
            gradient[:, j] = -(weighted * np.sign(diff)).sum(1) / lengthscale
        return gradient
