"""ConfigSpace vectors of a study's trials, each configuration encoded once.

Proposers and acquisition optimizers read the whole history on every ask; re-encoding
every trial made each suggestion cost O(history x hyperparameters) Python calls
(``Space.vectors`` is a loop over configurations and hyperparameters): about 10 ms of
an 80 ms forest ask at 600 trials, growing linearly, where encoding the one new trial
costs 0.1 ms. A trial's configuration never changes once handed out, so its vector is
kept by trial number, and checked against a copy of the configuration it was made
from, in case a trial is replaced, its configuration changed, or a new study reuses
the object.

Here in core, not among the plugins, because :class:`~ensembo.proposal.ModelBasedProposer`
uses it as well as the acquisition optimizers and TPE, and core does not import plugins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ensembo.spaces import Space
from ensembo.trials import Trial


class TrialVectors:
    """Vectors (n, d) of trials over one space; switching spaces clears the cache.

    With ``check``, each configuration is checked once, when its row is made, as
    :meth:`Space.encode` checks it (range and activity, see :meth:`Space.checked_vectors`),
    so that rows given to :meth:`Space.encode_vectors` encode exactly what ``encode``
    would, and a configuration ``encode`` refuses is refused with the same message.
    """

    def __init__(self, *, check: bool = False) -> None:
        self.check = check
        # (space, rows by trial number), replaced as one: an optimizer object may serve
        # two studies in two threads, and reading the space and the rows apart, or a
        # row after checking it, could give one study the other's vectors.
        self._cache: tuple[Space | None, dict[int, tuple[dict[str, Any], np.ndarray]]] = (
            None, {})

    def __call__(self, space: Space, trials: Sequence[Trial]) -> np.ndarray:
        cached_space, rows = self._cache
        if space is not cached_space:
            rows = {}
            self._cache = (space, rows)
        # each (configuration, row) pair read once, and used as read
        found = [rows.get(trial.number) for trial in trials]
        missing = [
            position
            for position, (kept, trial) in enumerate(zip(found, trials, strict=True))
            if kept is None or kept[0] != trial.config
        ]
        if missing:
            configs = [trials[position].config for position in missing]
            if self.check:  # positions in ``trials``, so errors name the rows encode would
                made = space.checked_vectors(configs, positions=missing)
            else:
                made = space.vectors(configs)
            for position, config, row in zip(missing, configs, made, strict=True):
                found[position] = rows[trials[position].number] = (dict(config), row)
        if not trials:
            return np.empty((0, space.dimension))
        return np.array([kept[1] for kept in found])
