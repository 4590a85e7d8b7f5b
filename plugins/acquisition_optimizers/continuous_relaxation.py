"""Which parts of a configuration a gradient method may move, and how to land back.

L-BFGS works on ConfigSpace vectors (see :meth:`Space.vectors`). In a row it moves
only the *free* entries: active numeric hyperparameters that no condition depends on.
Categorical and ordinal values, and every parent of a condition, stay fixed, so a
row keeps its branch (its condition signature) while it is optimized — optimizing
each branch separately is how conditional spaces are handled. Integers and stepped
values (``q``) are relaxed to the continuous range and put back on their grid
afterwards (the caller re-scores those rows): a row must be scored at the configuration
it will be run as, or the acquisition's optimum between two grid points is never seen
and never corrected.

Surrogates see the *encoded* batch, whose columns need not match the vector's (one-hot
encodings widen categoricals). The encoding of a numeric hyperparameter is affine in
its vector value, so its Jacobian is read off once by encoding two probe rows per
column; input gradients of the acquisition map back through it.
"""

from __future__ import annotations

import numpy as np
from ConfigSpace.hyperparameters import IntegerHyperparameter, NumericalHyperparameter

from ensembo.spaces import Space
from ensembo.spaces.quantize import snap_vectors, step_of

_PROBE = (0.25, 0.75)


class ContinuousRelaxation:
    def __init__(self, space: Space):
        self.space = space
        hyperparameters = [space.configspace[name] for name in space.names]
        parents = {p.name for name in space.names for p in space.configspace.parents_of[name]}
        self.numeric = np.array(
            [isinstance(hp, NumericalHyperparameter) and hp.size > 1 for hp in hyperparameters],
            dtype=bool,
        )
        self.free = self.numeric & np.array(
            [name not in parents for name in space.names], dtype=bool
        )
        self.integer_columns = [
            (j, hp)
            for j, hp in enumerate(hyperparameters)
            if isinstance(hp, IntegerHyperparameter) and self.free[j]
        ]
        self.stepped = self.free & np.array(
            [step_of(hp) is not None for hp in hyperparameters], dtype=bool
        )
        self._hyperparameters = hyperparameters
        self.jacobian = self._encoding_jacobian()

    def _encoding_jacobian(self) -> np.ndarray:
        """(d, e): d encoded column / d vector column for the free columns (0 elsewhere)."""
        d = self.space.dimension
        columns = np.flatnonzero(self.free)
        if columns.size == 0:
            return np.zeros((d, 0))
        probes = np.full((2 * columns.size, d), np.nan)
        for k, j in enumerate(columns):
            probes[2 * k, j], probes[2 * k + 1, j] = _PROBE
        encoded = np.nan_to_num(self.space.encode_vectors(probes).values, nan=0.0)
        jacobian = np.zeros((d, encoded.shape[1]))
        jacobian[columns] = (encoded[1::2] - encoded[0::2]) / (_PROBE[1] - _PROBE[0])
        return jacobian

    def movable(self, vectors: np.ndarray) -> np.ndarray:
        """Boolean (n, d): the entries of each row that may move."""
        return self.free[None, :] & ~np.isnan(vectors)

    def vector_gradient(self, encoded_gradient: np.ndarray) -> np.ndarray:
        """Gradient in vector columns (n, d) from one in encoded columns (n, e)."""
        return np.nan_to_num(encoded_gradient, nan=0.0) @ self.jacobian.T

    def fill(self, templates: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Rows of ``templates`` with their movable entries taken from ``points`` in [0, 1]^d."""
        filled = templates.copy()
        movable = self.movable(templates)
        filled[movable] = points[movable]
        return self.onto_grid(filled)

    def onto_grid(self, vectors: np.ndarray) -> np.ndarray:
        """Integer entries moved to the vector value of the nearest integer, and stepped
        entries to their nearest grid point."""
        vectors = vectors.copy()
        for j, hp in self.integer_columns:
            rows = ~np.isnan(vectors[:, j])
            if rows.any():
                values = np.clip(vectors[rows, j], 0.0, 1.0)
                vectors[rows, j] = np.asarray(
                    hp.to_vector(np.asarray(hp.to_value(values))), dtype=float
                )
        if self.stepped.any():
            vectors[:, self.stepped] = snap_vectors(
                [hp for hp, on in zip(self._hyperparameters, self.stepped, strict=True) if on],
                np.clip(vectors[:, self.stepped], 0.0, 1.0),
            )
        return vectors
