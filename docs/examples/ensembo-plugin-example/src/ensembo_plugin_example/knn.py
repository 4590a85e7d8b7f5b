"""``knn``: k-nearest-neighbour regression as a surrogate.

The mean at a point is the inverse-distance-weighted mean of the targets of its ``k``
nearest evaluated configurations. The variance has two parts: how much those
neighbours disagree, and how far away they are — ``exploration * var(y) * d̄ / √D``,
where d̄ is the mean distance to the neighbours and √D the diameter of the unit cube.
Far from every evaluation the surrogate is therefore as uncertain as the targets
themselves, which is what lets an acquisition such as EI explore.

Distances are measured on ensembo's encoding (every hyperparameter in [0, 1]); a
hyperparameter active in one configuration and inactive in the other counts as the
largest possible difference, 1, so configurations from different branches of a
conditional space are far apart.
"""

from __future__ import annotations

import numpy as np
from ensembo.spaces import EncodedBatch

from ensembo_plugin_example.errors import OptionError

_TINY = 1e-12


def branch_aware_distances(a: EncodedBatch, b: EncodedBatch) -> np.ndarray:
    """Euclidean distances (len(a), len(b)); a dimension active on one side only counts 1."""
    both = a.active[:, None, :] & b.active[None, :, :]
    one = a.active[:, None, :] ^ b.active[None, :, :]
    difference = np.where(both, a.values[:, None, :] - b.values[None, :, :], 0.0)
    return np.sqrt(np.sum(difference**2, axis=2) + np.sum(one, axis=2))


class KNNSurrogate:
    """k-NN surrogate with distance-based variance (options: ``k``, ``exploration``)."""

    def __init__(self, k: int = 5, exploration: float = 1.0):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise OptionError("surrogate 'knn'", "k", k, "an integer >= 1")
        if not isinstance(exploration, int | float) or exploration < 0:
            raise OptionError("surrogate 'knn'", "exploration", exploration, "a number >= 0")
        self.k = k
        self.exploration = float(exploration)
        self._batch: EncodedBatch | None = None
        self._y = np.empty(0)

    def fit(self, batch: EncodedBatch, y: np.ndarray, rng: np.random.Generator) -> None:
        y = np.asarray(y, dtype=float)
        if y.shape != (len(batch),):
            raise ValueError(f"knn: expected {len(batch)} targets, got shape {y.shape}")
        self._batch = batch
        self._y = y

    def predict(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        if self._batch is None:
            raise RuntimeError("knn: predict called before fit")
        distances = branch_aware_distances(batch, self._batch)
        k = min(self.k, len(self._y))
        nearest = np.argpartition(distances, k - 1, axis=1)[:, :k]
        near_distances = np.take_along_axis(distances, nearest, axis=1)
        near_y = self._y[nearest]
        weights = 1.0 / (near_distances + 1e-6)
        weights /= weights.sum(axis=1, keepdims=True)
        mean = np.sum(weights * near_y, axis=1)
        disagreement = np.sum(weights * (near_y - mean[:, None]) ** 2, axis=1)
        diameter = np.sqrt(max(batch.values.shape[1], 1))
        remoteness = near_distances.mean(axis=1) / diameter
        scale = float(np.var(self._y)) if len(self._y) > 1 else 1.0
        variance = disagreement + self.exploration * max(scale, _TINY) * remoteness
        return mean, np.maximum(variance, _TINY)
