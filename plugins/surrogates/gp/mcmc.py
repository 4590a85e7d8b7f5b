"""Samples of GP hyperparameters from their posterior, for integrated acquisition.

The chain persists between fits: the data change by one point per iteration, so the
last state is already near the new posterior and a short burn-in suffices (as in
Spearmint). The first fit burns in longer from the ML-II-like neutral start.
"""

from __future__ import annotations

import numpy as np

from ensembo.plugins.surrogates.gp.hyperparameters import Hyperparameters, log_prior
from ensembo.plugins.surrogates.gp.kernels import Kernel
from ensembo.plugins.surrogates.gp.posterior import Posterior, training_geometry
from ensembo.plugins.surrogates.gp.slice_sampling import slice_sweep


class HyperparameterChain:
    def __init__(
        self, samples: int = 10, burn_in: int = 20, continue_burn_in: int = 3, thinning: int = 1
    ):
        if samples < 1:
            raise ValueError(f"gp mcmc: samples must be >= 1, got {samples}")
        self.samples = samples
        self.burn_in = burn_in
        self.continue_burn_in = continue_burn_in
        self.thinning = max(int(thinning), 1)
        # where the next call continues the chain; a resumed study restores it
        self.last_sample: np.ndarray | None = None

    def sample(
        self,
        kernel: Kernel,
        x: np.ndarray,
        y: np.ndarray,
        keys: np.ndarray,
        rng: np.random.Generator,
        bounds: np.ndarray,
    ) -> list[Hyperparameters]:
        d = x.shape[1]
        geometry = training_geometry(x, keys)

        def log_density(vector: np.ndarray) -> float:
            hp = Hyperparameters.from_vector(vector)
            value = Posterior(kernel, hp, x, y, keys, geometry).log_marginal_likelihood()
            value += log_prior(vector, jacobian=True)[0]
            return value if np.isfinite(value) else -np.inf

        if self.last_sample is None or len(self.last_sample) != d + 3:
            state, sweeps = Hyperparameters.initial(d).to_vector(), self.burn_in
        else:
            state, sweeps = self.last_sample, self.continue_burn_in
        widths = np.minimum(bounds[:, 1] - bounds[:, 0], 2.0)
        state = np.clip(state, bounds[:, 0], bounds[:, 1])
        current = log_density(state)
        for _ in range(sweeps):
            state, current = slice_sweep(log_density, state, current, widths, bounds, rng)
        kept = []
        for _ in range(self.samples):
            for _ in range(self.thinning):
                state, current = slice_sweep(log_density, state, current, widths, bounds, rng)
            kept.append(Hyperparameters.from_vector(state))
        self.last_sample = state
        return kept

