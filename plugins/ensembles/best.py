"""The ``best`` strategy: no ensemble, the single trial with the lowest loss.

It is the baseline every other strategy is compared with, and the default, so a study
without ensembling behaves like classical SMBO.
"""

from __future__ import annotations

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.trials import History, Trial


class BestSingle:
    def targets(self, history: History, context: EnsembleContext) -> np.ndarray:
        return history.losses()

    def update(self, history: History, trial: Trial, context: EnsembleContext) -> None:
        """Nothing to track: the best trial is read from the history."""

    def ensemble(self, history: History, context: EnsembleContext) -> Ensemble | None:
        best = history.best()
        return None if best is None else Ensemble.single(best.number)
