"""The GP posterior under fixed hyperparameters, solved block by block.

Rows are grouped into blocks. The plain GP has one block; the conditional GP
(Lévesque ch. 5, Eq. 5.9) has one block per condition signature, because its kernel
is 0 between configurations whose active hyperparameters differ — the kernel matrix
is block-diagonal and each block is factorized alone. A query only sees the block of
its own signature; a signature never observed gets the prior.

A signature is the *set of active hyperparameters*, not the values of the active
conditional ones that Eq. 5.9 compares (``k_C = k`` only if ``gamma_c = gamma'_c`` for
every active conditional ``c``). This keys blocks on what the thesis calls the essence
of the test, that "the conditions activate the same children" (notes/003, L1356).
The two differ where different parent values activate the same hyperparameters: two
choices with the same children (or none), or numeric parent values inside one range
condition. Eq. 5.9 puts such configurations in separate blocks; here they share one,
and covary through the base kernel on the parent's encoded column.

Everything here is in standardized target units; the surrogate undoes the scaling.
"""

from __future__ import annotations

import functools

import attrs
import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from ensembo.plugins.surrogates.gp.cholesky import robust_cholesky
from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters
from ensembo.plugins.surrogates.gp.kernels import Kernel

ONE_BLOCK = 0


@attrs.frozen(kw_only=True)
class Block:
    """One independent part of the training set, factorized."""

    rows: np.ndarray = attrs.field(eq=False)  # indices into the training set
    x: np.ndarray = attrs.field(eq=False)
    unit_kernel: np.ndarray = attrs.field(eq=False)  # kernel values without amplitude
    distance: np.ndarray = attrs.field(eq=False)  # the kernel's distances among the rows
    cholesky: np.ndarray = attrs.field(eq=False)
    alpha: np.ndarray = attrs.field(eq=False)  # K^-1 (y - mean)
    residual: np.ndarray = attrs.field(eq=False)
    jitter: float


def block_keys(signature: np.ndarray | None, n: int) -> np.ndarray:
    """Block key per row: the signature for the conditional kernel, else one block."""
    return np.full(n, ONE_BLOCK, dtype=np.int64) if signature is None else np.asarray(signature)


@attrs.frozen(kw_only=True)
class BlockGeometry:
    """Rows of one block, their coordinates and, once a radial kernel asks, their
    per-dimension squared differences (n_b, n_b, d).

    Hyperparameter fitting evaluates the likelihood many times on the same points;
    with the differences kept, each radial distance matrix is one product with
    ``1 / lengthscales^2`` instead of a fresh pairwise computation. They are made on
    first use because ``laplace-l1`` works from the coordinates and needs no such tensor.
    """

    rows: np.ndarray = attrs.field(eq=False)
    x: np.ndarray = attrs.field(eq=False)

    @functools.cached_property
    def squared_differences(self) -> np.ndarray:
        diff = self.x[:, None, :] - self.x[None, :, :]
        return diff * diff


def training_geometry(x: np.ndarray, keys: np.ndarray) -> dict[int, BlockGeometry]:
    geometry = {}
    for key in np.unique(keys):
        rows = np.flatnonzero(keys == key)
        geometry[int(key)] = BlockGeometry(rows=rows, x=x[rows])
    return geometry


class Posterior:
    """Exact GP posterior; ``keys`` assigns each training row to a block."""

    def __init__(
        self,
        kernel: Kernel,
        hyperparameters: Hyperparameters,
        x: np.ndarray,
        y: np.ndarray,
        keys: np.ndarray,
        geometry: dict[int, BlockGeometry] | None = None,
    ):
        self.kernel = kernel
        self.hyperparameters = hp = hyperparameters
        self.blocks: dict[int, Block] = {}
        for key in np.unique(keys):
            rows = np.flatnonzero(keys == key)
            xb = x[rows]
            if geometry is not None:
                distance = kernel.block_distance(geometry[int(key)], hp.lengthscales)
            else:
                distance = kernel.distance(xb, xb, hp.lengthscales)
            unit = kernel.value(distance)
            matrix = hp.amplitude * unit + hp.noise * np.eye(len(rows))
            chol, jitter = robust_cholesky(matrix)
            residual = y[rows] - hp.mean
            alpha = cho_solve((chol, True), residual, check_finite=False)
            self.blocks[int(key)] = Block(
                rows=rows, x=xb, unit_kernel=unit, distance=distance,
                cholesky=chol, alpha=alpha, residual=residual, jitter=jitter,
            )

    def log_marginal_likelihood(self) -> float:
        total = 0.0
        for block in self.blocks.values():
            total -= 0.5 * float(block.residual @ block.alpha)
            total -= float(np.sum(np.log(np.diag(block.cholesky))))
            total -= 0.5 * len(block.rows) * np.log(2.0 * np.pi)
        return total

    def _query_blocks(self, keys: np.ndarray):
        for key in np.unique(keys):
            yield self.blocks.get(int(key)), np.flatnonzero(keys == key)

    def predict(self, x: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Latent mean and variance (noise excluded) at rows of ``x``."""
        hp = self.hyperparameters
        mean = np.full(len(x), hp.mean)
        variance = np.full(len(x), hp.amplitude)
        for block, rows in self._query_blocks(keys):
            if block is None:
                continue
            cross = hp.amplitude * self.kernel.value(
                self.kernel.distance(x[rows], block.x, hp.lengthscales)
            )
            mean[rows] += cross @ block.alpha
            v = solve_triangular(block.cholesky, cross.T, lower=True, check_finite=False)
            variance[rows] -= np.einsum("ij,ij->j", v, v)
        return mean, np.maximum(variance, 0.0)

    def predict_with_gradients(
        self, x: np.ndarray, keys: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Mean, variance and their gradients in ``x``, shapes (m,), (m,), (m, d), (m, d)."""
        hp = self.hyperparameters
        m = len(x)
        mean = np.full(m, hp.mean)
        variance = np.full(m, hp.amplitude)
        d_mean = np.zeros_like(x)
        d_variance = np.zeros_like(x)
        for block, rows in self._query_blocks(keys):
            if block is None:
                continue
            query = x[rows]
            distance = self.kernel.distance(query, block.x, hp.lengthscales)
            cross = hp.amplitude * self.kernel.value(distance)
            beta = cho_solve((block.cholesky, True), cross.T, check_finite=False).T  # K^-1 k*
            mean[rows] += cross @ block.alpha
            variance[rows] -= np.einsum("ij,ij->i", cross, beta)
            where = (distance, query, block.x, hp)
            d_mean[rows] = self.kernel.input_gradient(block.alpha[None, :], *where)
            d_variance[rows] = -2.0 * self.kernel.input_gradient(beta, *where)
        clipped = variance <= 0.0
        d_variance[clipped] = 0.0
        return mean, np.maximum(variance, 0.0), d_mean, d_variance
