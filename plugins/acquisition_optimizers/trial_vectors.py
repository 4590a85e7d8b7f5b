"""ConfigSpace vectors of a study's trials, each configuration encoded once.

Optimizers and TPE read the whole history every iteration; re-encoding every trial
would make each suggestion cost O(history x hyperparameters) Python calls. A trial's
configuration never changes once handed out, so its vector is kept by trial number
(and checked against the configuration, in case a new study reuses the object).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.spaces import Space
from ensembo.trials import Trial


class TrialVectors:
    """Vectors (n, d) of trials over one space; switching spaces clears the cache."""

    def __init__(self) -> None:
        self._space: Space | None = None
        self._rows: dict[int, tuple[dict[str, Any], np.ndarray]] = {}

    def __call__(self, space: Space, trials: Sequence[Trial]) -> np.ndarray:
        if space is not self._space:
            self._space, self._rows = space, {}
        missing = [
            t for t in trials if t.number not in self._rows or self._rows[t.number][0] != t.config
        ]
        if missing:
            for trial, row in zip(missing, space.vectors([t.config for t in missing]), strict=True):
                self._rows[trial.number] = (trial.config, row)
        if not trials:
            return np.empty((0, space.dimension))
        return np.array([self._rows[t.number][1] for t in trials])
