"""How a study turns its history into the next configurations.

Everything that proposes is a :class:`~ensembo.protocols.Proposer`. Random search and
TPE-like plugins implement it directly; :class:`ModelBasedProposer` composes a
surrogate, an acquisition and an acquisition optimizer. Pending trials (handed out,
not yet told) enter the surrogate as *constant-liar* fantasies so that parallel
suggestions differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.protocols import Acquisition, AcquisitionOptimizer, SampledSurrogate, Surrogate
from ensembo.spaces import EncodedBatch, Space
from ensembo.trials import History


class RandomProposer:
    """Random search: configurations from the space's prior."""

    def propose(
        self, space: Space, history: History, targets: np.ndarray, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        return space.sample(n, rng)


class SurrogateAcquisition:
    """A fitted surrogate composed with an acquisition (an ``AcquisitionSurface``)."""

    def __init__(self, surrogate: Surrogate, acquisition: Acquisition, best: float):
        self.surrogate = surrogate
        self.acquisition = acquisition
        self.best = best

    def score(self, batch: EncodedBatch) -> np.ndarray:
        if isinstance(self.surrogate, SampledSurrogate):  # integrate over the samples
            means, variances = self.surrogate.predict_samples(batch)
            return self.acquisition(means, variances, self.best).mean(0)
        mean, variance = self.surrogate.predict(batch)
        return self.acquisition(mean, variance, self.best)

    def score_with_gradient(self, batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
        """Values (n,) and input gradients (n, d); needs a differentiable surrogate."""
        if isinstance(self.surrogate, SampledSurrogate):
            mean, variance, d_mean, d_variance = self.surrogate.predict_samples_with_gradients(batch)
        else:
            mean, variance, d_mean, d_variance = self.surrogate.predict_with_gradients(batch)  # type: ignore[attr-defined]
        values = self.acquisition(mean, variance, self.best)
        by_mean, by_variance = self.acquisition.gradient(mean, variance, self.best)
        gradient = by_mean[..., None] * d_mean + by_variance[..., None] * d_variance
        if isinstance(self.surrogate, SampledSurrogate):
            return values.mean(0), gradient.mean(0)
        return values, gradient


def constant_liar(targets: np.ndarray) -> float:
    """The lie told for pending points: the best target so far (CL-min).

    Lying optimistically makes the acquisition near a pending point collapse, which
    pushes the next suggestion elsewhere.
    """
    return float(np.min(targets))


FANTASIES = ("constant-liar", "kriging-believer")


class ModelBasedProposer:
    """Surrogate -> acquisition -> acquisition optimizer.

    ``fantasy`` is what pending points are told: ``constant-liar`` (the best target)
    or ``kriging-believer`` (the surrogate's own mean there, fitted on the completed
    trials first — one more fit, warm-started for the GP).
    """

    def __init__(
        self,
        surrogate: Surrogate,
        acquisition: Acquisition,
        optimizer: AcquisitionOptimizer,
        fantasy: str = "constant-liar",
    ):
        if fantasy not in FANTASIES:
            raise ValueError(f"unknown fantasy {fantasy!r} for pending points; valid: {', '.join(FANTASIES)}")
        self.surrogate = surrogate
        self.acquisition = acquisition
        self.optimizer = optimizer
        self.fantasy = fantasy

    def _lies(self, space: Space, configs: list, pending: list, y: np.ndarray, rng) -> np.ndarray:
        if self.fantasy == "kriging-believer":
            self.surrogate.fit(space.encode(configs), y, rng)
            return np.asarray(self.surrogate.predict(space.encode(pending))[0], dtype=float)
        return np.full(len(pending), constant_liar(y))

    def propose(
        self, space: Space, history: History, targets: np.ndarray, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        configs = [t.config for t in history.completed()]
        pending = [t.config for t in history.pending()]
        y = np.asarray(targets, dtype=float)
        if pending:
            y = np.concatenate([y, self._lies(space, configs, pending, y, rng)])
            configs = configs + pending
        self.surrogate.fit(space.encode(configs), y, rng)
        surface = SurrogateAcquisition(self.surrogate, self.acquisition, float(np.min(targets)))
        return self.optimizer.maximize(surface, space, history, n, rng)
