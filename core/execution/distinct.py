"""Which suggestions a study may hand out while other trials run.

A suggestion must not repeat any trial exactly, and must not lie within ``tolerance``
(max-norm in the encoded unit cube) of a pending trial or of another suggestion of the
same batch: evaluating both at once wastes a worker, since neither result can inform
the other. Nearness to *finished* trials is allowed — that is how a serial run refines
around its optimum.

The tolerance is small (1e-4) because a run that converges refines at that scale
with several trials in flight too: with 1e-2, the 8-worker FIFO replay of Branin and
Hartmann3 (issue 9) ended with a median regret of 4e-5 against 1.5e-6 and 1.1e-7
with 1e-4, and no worker evaluated a repeat either way. Spreading the suggestions
is the fantasies' job (see :mod:`ensembo.proposal`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ensembo.spaces import Space
from ensembo.trials import History, config_key

__all__ = ["TOLERANCE", "DistinctConfigs", "config_key"]

TOLERANCE = 1e-4


class DistinctConfigs:
    def __init__(self, space: Space, history: History, tolerance: float | None = None):
        self.space = space
        self.tolerance = TOLERANCE if tolerance is None else tolerance
        self._history = history  # its trials' configurations are taken
        self._admitted: set[Hashable] = set()
        pending = [trial.config for trial in history.pending()]
        # encoded width, not the hyperparameter count: one-hot columns outnumber them
        self._in_flight = (
            space.encode(pending).values if pending else np.empty((0, space.encoded_dimension))
        )

    def admit(self, config: Mapping[str, Any]) -> bool:
        """True (and remember ``config`` as in flight) if it may be handed out."""
        key = config_key(config)
        if key in self._admitted or self._history.holds_config(config):
            return False
        encoded = self.space.encode([config]).values
        if (
            len(self._in_flight)
            and np.abs(self._in_flight - encoded).max(axis=1).min() < self.tolerance
        ):
            return False
        self._admitted.add(key)
        self._in_flight = np.vstack([self._in_flight, encoded])
        return True
