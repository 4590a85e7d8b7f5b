"""The ``random`` acquisition optimizer: score many prior samples, keep the best.

The thesis' GP-cond, GP-laplace and GP-matern runs optimize the acquisition this way
with 1000 samples (notes/003 §1.4). By default the number of samples grows with the
dimension, since the same density of samples needs more of them in more dimensions,
within bounds that keep one call to a few milliseconds of surrogate time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.plugins.acquisition_optimizers.selection import best_distinct, vector_keys
from ensembo.plugins.option_checks import whole
from ensembo.protocols import AcquisitionSurface
from ensembo.spaces import Space
from ensembo.trial_vectors import TrialVectors
from ensembo.trials import History

SAMPLES_PER_DIMENSION = 200
MIN_SAMPLES = 1000
MAX_SAMPLES = 10_000


def default_samples(space: Space) -> int:
    """``200 * d`` samples, between 1,000 and 10,000."""
    return int(np.clip(SAMPLES_PER_DIMENSION * space.dimension, MIN_SAMPLES, MAX_SAMPLES))


class RandomSearchOptimizer:
    """Scores ``n_samples`` random configurations and returns the best unseen ones."""

    def __init__(self, n_samples: int | None = None):
        # an integer: 2.5 passed "< 1" and failed in the first model-based ask
        self.n_samples = None if n_samples is None else whole("random", "n_samples", n_samples, 1)
        self._trial_vectors = TrialVectors()

    def maximize(
        self,
        surface: AcquisitionSurface,
        space: Space,
        history: History,
        n: int,
        rng: np.random.Generator,
    ) -> list[dict[str, Any]]:
        count = max(self.n_samples or default_samples(space), n)
        vectors = space.sample_vectors(count, rng)
        scores = surface.score(space.encode_vectors(vectors))
        seen = vector_keys(self._trial_vectors(space, list(history)))
        return best_distinct(space, vectors, scores, n, seen)
