"""The validation loss of an ensemble, from its members' stored predictions.

Progress bars and reports show the ensemble's loss next to the best single trial's. A
one-member ensemble scores as its trial. Larger ensembles are scored the way ensemble
strategies score them: the trials' predictions in the pool form of
:mod:`ensembo.plugins.ensembles.pool` (class probabilities and class indices for
classification), combined by the ensemble's own rule and scored at its size through the
loss's ensemble side (:func:`~ensembo.plugins.losses.ensemble_loss.ensemble_loss_of`),
so vote-based losses such as the C-bound or the sigmoid margin get the same number the
strategy optimized. Without validation targets or predictions the loss is unknown
(``None``) rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.errors import EnsemboError
from ensembo.plugins.ensembles.pool import build_pool, resolve_loss
from ensembo.plugins.losses.ensemble_loss import EnsembleLoss, ensemble_loss_of
from ensembo.trials import History, Trial


def ensemble_loss(
    trials: Sequence[Trial],
    ensemble: Ensemble | None,
    context: EnsembleContext,
) -> float | None:
    """Mean validation loss of ``ensemble``, or ``None`` if it cannot be known."""
    if ensemble is None or len(ensemble) == 0:
        return None
    if len(ensemble) == 1:
        return trials[ensemble.members[0]].loss
    history = trials if isinstance(trials, History) else History(trials)
    try:
        pool = build_pool(history, context, "report")
    except EnsemboError:  # no validation targets, or trials without predictions
        return None
    position = {number: index for index, number in enumerate(pool.numbers)}
    if any(member not in position for member in ensemble.members):
        return None
    predictions = pool.predictions[[position[m] for m in ensemble.members]]
    loss = resolve_loss(context.loss, context, pool.task)
    if isinstance(loss, EnsembleLoss):
        return ensemble_loss_of(loss, pool.y, predictions, ensemble)
    return float(np.mean(loss(pool.y, ensemble.combine(list(predictions)))))
