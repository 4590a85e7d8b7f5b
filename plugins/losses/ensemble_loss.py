"""The ensemble-level side of a loss: score a weighted combination of members.

A per-example :class:`~ensembo.protocols.Loss` scores one model. Ensemble strategies
(post-hoc selection, EO, SEGOR) must score *combinations* of stored predictions many
times per iteration, and some losses (margins, the C-bound) are only defined on a
vote. An :class:`~ensembo.protocols.EnsembleLoss` therefore splits the work in two:

* ``contributions(predictions)`` — what one member adds to the ensemble's running
  total: one-hot votes (m, k), class probabilities (m, k) or values (m,);
* ``ensemble_loss(y_true, totals, size)`` — the mean loss of ensembles whose members'
  contributions sum to ``totals`` with total weight ``size``.

``totals`` may carry leading batch axes (c candidate ensembles at once), so scoring
"the ensemble plus each model of the pool" is one vectorized call. Classification
``y_true`` are class indices (columns of the predictions), regression ``y_true`` values.
A loss may name its rule in a ``combination`` attribute (``"vote"`` for one-hot votes,
``"average"``): strategies hand it on with their ensembles (:func:`combination_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ensembo.plugins.losses.votes import one_hot_votes
from ensembo.protocols import EnsembleLoss

if TYPE_CHECKING:
    from ensembo.ensemble import Ensemble


def weighted_ensemble_loss(
    loss: EnsembleLoss, y_true: np.ndarray, member_predictions: np.ndarray, weights: np.ndarray
) -> float:
    """Loss of the ensemble of ``member_predictions`` (n, m[, k]) with ``weights`` (n,)."""
    weights = np.asarray(weights, dtype=float)
    contributions = np.stack([loss.contributions(p) for p in member_predictions])
    totals = np.tensordot(weights, contributions, axes=1)
    return float(loss.ensemble_loss(y_true, totals, weights.sum()))


def combination_of(loss: Any) -> str | None:
    """How an ensemble built and scored with ``loss`` combines its members: the loss's
    ``combination`` (``"vote"`` or ``"average"``), ``None`` for a loss that does not say."""
    return getattr(loss, "combination", None)


def member_contributions(combination: str | None,
                         loss: Any = None) -> Callable[[np.ndarray], np.ndarray] | None:
    """What one member adds to the total of an ensemble combined by ``combination``: its
    one-hot vote, or its predictions themselves (``None``); an ensemble that does not say
    combines as ``loss`` does (its ``contributions``)."""
    if combination == "vote":
        return one_hot_votes
    if combination == "average":
        return None
    return getattr(loss, "contributions", None)


def ensemble_loss_of(loss: EnsembleLoss, y_true: np.ndarray,
                     member_predictions: Sequence[np.ndarray], ensemble: Ensemble) -> float:
    """``loss`` of ``ensemble`` whose members predicted ``member_predictions`` (member
    order): combined by the ensemble's rule and scored at its size, the number the
    strategy optimized (weights alone would make every ensemble one of size 1)."""
    share = member_contributions(ensemble.combination, loss)
    contributions = np.stack([np.asarray(p, dtype=float) if share is None else share(p)
                              for p in member_predictions])
    totals = np.tensordot(ensemble.counts, contributions, axes=1)
    return float(loss.ensemble_loss(y_true, totals, ensemble.size))


class SummedCandidates:
    """Candidate members scored by summing each one into the ensemble total (any loss)."""

    def __init__(self, loss: EnsembleLoss, contributions: np.ndarray):
        self.loss = loss
        self.contributions = contributions

    def adding_each(self, y_true: np.ndarray, total: np.ndarray, size: float) -> np.ndarray:
        candidates = total[None] + self.contributions
        if len(candidates) == 1:
            # A batch of one is reduced in another order than rows of a larger batch (by
            # the last digits): score it as a row of two, so a candidate's score does not
            # depend on how many others are offered with it (greedy kept current).
            return self.loss.ensemble_loss(y_true, np.concatenate([candidates] * 2),
                                           size + 1.0)[:1]
        return self.loss.ensemble_loss(y_true, candidates, size + 1.0)


def prepare_candidates(loss: EnsembleLoss, contributions: np.ndarray):
    """Candidates (n, m[, k]) ready to be scored as "the ensemble plus each one of them".

    That is the inner step of greedy selection and of EO/SEGOR re-labelling, repeated
    with the same candidates and a changing ensemble, so a loss may prepare them once
    (``prepare_candidates``; vote losses do). The result has
    ``adding_each(y_true, total, size) -> (n,)``.
    """
    prepare = getattr(loss, "prepare_candidates", None)
    return prepare(contributions) if prepare is not None else SummedCandidates(loss, contributions)


__all__ = [
    "EnsembleLoss",
    "SummedCandidates",
    "combination_of",
    "ensemble_loss_of",
    "member_contributions",
    "prepare_candidates",
    "weighted_ensemble_loss",
]
