"""The validation loss of an ensemble, from its members' stored predictions.

Progress bars and reports show the ensemble's loss next to the best single trial's. A
one-member ensemble scores as its trial. Larger ensembles are scored by combining the
members' predictions (:meth:`Ensemble.combine`) and applying the study's loss, which
needs the validation targets and a loss name in the :class:`EnsembleContext`; without
them the loss is unknown (``None``) rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ensembo import components
from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.registry import Registry
from ensembo.trials import Trial


def ensemble_loss(
    trials: Sequence[Trial],
    ensemble: Ensemble | None,
    context: EnsembleContext,
    registry: Registry | None = None,
) -> float | None:
    """Mean loss of ``ensemble`` on the validation set, or ``None`` if it cannot be known."""
    if ensemble is None or len(ensemble) == 0:
        return None
    members = [trials[number] for number in ensemble.members]
    if len(members) == 1:
        return members[0].loss
    predictions = [member.predictions for member in members]
    if not context.has_predictions or context.loss is None or any(p is None for p in predictions):
        return None
    loss = components.build("loss", context.loss, registry)
    combined = ensemble.combine(predictions, vote_classes=_vote_classes(predictions, context))
    return float(np.mean(loss(np.asarray(context.y_true), combined)))


def _vote_classes(predictions: Sequence[np.ndarray], context: EnsembleContext) -> np.ndarray | None:
    """Label predictions of a classifier are combined by weighted vote, not averaged."""
    if context.task != "classification" or np.ndim(predictions[0]) != 1:
        return None
    if context.classes is not None:
        return np.asarray(context.classes)
    return np.unique(np.concatenate([np.asarray(context.y_true), *predictions]))
