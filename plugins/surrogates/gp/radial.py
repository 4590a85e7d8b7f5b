"""Stationary ARD kernels written as functions of the scaled Euclidean distance ``r``.

``r = ||(x - x') / lengthscales||``. Each kernel gives ``k(r)`` and ``q(r) = k'(r) / r``;
with ``q`` both the gradient in the log length-scales (for ML-II) and the gradient in
the inputs (for L-BFGS on the acquisition) are products of ``q`` with coordinate
differences, so :class:`RadialKernel` implements them once for every radial kernel.
Matérn 5/2 has a finite ``q`` at ``r = 0``; the Laplace (exponential) kernel does not,
and its derivative at a training point is taken as 0 (a subgradient).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
    from ensembo.plugins.surrogates.gp.posterior import BlockGeometry

_SQRT5 = np.sqrt(5.0)
_EXACT_BELOW = 2_000_000  # elements of the (n, m, d) difference tensor


def scaled_distance(a: np.ndarray, b: np.ndarray, lengthscales: np.ndarray) -> np.ndarray:
    """Pairwise ``r`` between rows of ``a`` (n, d) and ``b`` (m, d), shape (n, m).

    Small problems use explicit differences (no cancellation near ``r = 0``); large ones
    the ``|a|^2 + |b|^2 - 2 a.b`` expansion, which needs no (n, m, d) tensor.
    """
    a = a / lengthscales
    b = b / lengthscales
    if a.shape[0] * b.shape[0] * a.shape[1] <= _EXACT_BELOW:
        diff = a[:, None, :] - b[None, :, :]
        return np.sqrt(np.einsum("abd,abd->ab", diff, diff))
    squared = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.sqrt(np.maximum(squared, 0.0))


class RadialKernel:
    """The distance and gradients every radial kernel shares; subclasses give ``value``
    and ``q``."""

    name: str

    def value(self, r: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def q(self, r: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def distance(self, a: np.ndarray, b: np.ndarray, lengthscales: np.ndarray) -> np.ndarray:
        return scaled_distance(a, b, lengthscales)

    def block_distance(self, block: BlockGeometry, lengthscales: np.ndarray) -> np.ndarray:
        """One product with ``1 / l^2`` of the block's kept squared differences."""
        return np.sqrt(block.squared_differences @ (1.0 / lengthscales**2))

    def lengthscale_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        block: BlockGeometry,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        """``d (sigma_f^2 k) / d log l_j = -sigma_f^2 q (x_aj - x_bj)^2 / l_j^2``, summed
        against the block's kept squared differences."""
        by_lengthscale = np.tensordot(
            weights * self.q(distance), block.squared_differences, axes=([0, 1], [0, 1])
        )
        return -(hyperparameters.amplitude * by_lengthscale) / hyperparameters.lengthscales**2

    def input_gradient(
        self,
        weights: np.ndarray,
        distance: np.ndarray,
        query: np.ndarray,
        train: np.ndarray,
        hyperparameters: Hyperparameters,
    ) -> np.ndarray:
        """``d (sigma_f^2 k) / d x = sigma_f^2 q (x - x') / l^2``: with ``M = W q``, the sum
        over ``b`` is ``rowsum(M) x_a - M train``, two (m, n) products."""
        weighted_q = hyperparameters.amplitude * self.q(distance) * weights
        return (weighted_q.sum(1)[:, None] * query - weighted_q @ train) / (
            hyperparameters.lengthscales**2
        )


class Matern52(RadialKernel):
    """``(1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r)``: twice differentiable, the seeds' kernel."""

    name = "matern52"

    def value(self, r: np.ndarray) -> np.ndarray:
        s = _SQRT5 * r
        return (1.0 + s + s * s / 3.0) * np.exp(-s)

    def q(self, r: np.ndarray) -> np.ndarray:
        s = _SQRT5 * r
        return -(5.0 / 3.0) * (1.0 + s) * np.exp(-s)


class Laplace(RadialKernel):
    """``exp(-r)`` on the Euclidean ARD distance: Matérn 1/2, rough sample paths.

    Not Lévesque's Laplace kernel (thesis ch. 5), which sums per-dimension L1 distances,
    ``exp(-sum_d |x_d - x'_d| / l_d)``: that is the ``laplace-l1`` option
    (:mod:`ensembo.plugins.surrogates.gp.laplace_l1`). The two differ when d > 1 (0.49
    against 0.37 at (0, 0) and (0.5, 0.5) with unit lengthscales). The name is kept for
    the studies stored with it."""

    name = "laplace"

    def value(self, r: np.ndarray) -> np.ndarray:
        return np.exp(-r)

    def q(self, r: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r > 0.0, -np.exp(-r) / np.where(r > 0.0, r, 1.0), 0.0)
