"""The :class:`Ensemble` value: which trials, with which weights.

An ensemble is a weighted multiset of trials. It combines the members' stored
per-example predictions by weighted average — class-probability averaging or, for
label predictions, weighted vote; weighted mean for regression — so it can be scored
on the validation set without retraining anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np


def members_text(members: Sequence[int], weights: Sequence[float]) -> str:
    """``"1:0.2, 4:0.0015"``: trial:weight with three significant digits, so a small
    weight (an Agnostic Bayes posterior's tail) does not print as 0.00."""
    return ", ".join(f"{m}:{w:.3g}" for m, w in zip(members, weights, strict=True))


def _normalized(weights: Sequence[float]) -> tuple[float, ...]:
    array = np.asarray(weights, dtype=float)
    if array.size and (np.any(array < 0) or array.sum() <= 0):
        raise ValueError(f"ensemble weights must be non-negative and not all zero, got {array}")
    return tuple((array / array.sum()).tolist()) if array.size else ()


@attrs.frozen(kw_only=True)
class EnsembleContext:
    """What ensemble strategies need to score trial predictions.

    ``y_true`` are the validation labels/values the trials' ``predictions`` refer to
    (``None`` when the objective reports only losses); ``loss`` is the task's loss
    name (a registered loss); ``budget`` is the planned number of trials, if known.
    """

    y_true: np.ndarray | None = attrs.field(default=None, eq=False)
    loss: str | None = None
    task: str | None = attrs.field(
        default=None, validator=attrs.validators.in_({None, "classification", "regression"})
    )
    classes: np.ndarray | None = attrs.field(default=None, eq=False)
    budget: int | None = None
    seed: int = 0

    @property
    def has_predictions(self) -> bool:
        return self.y_true is not None

    def prediction_problem(self, predictions: Any) -> str | None:
        """Why ``predictions`` cannot be scored against ``y_true``, or ``None`` if they can.

        Checked when a trial is told, so that a trial a strategy cannot use fails alone
        instead of being stored complete and breaking every later ensemble (and resume).
        """
        if self.y_true is None:
            return None
        if predictions is None:
            return "the trial reported no predictions (Evaluation(predictions=...))"
        shape = np.shape(predictions)
        if len(shape) not in (1, 2) or shape[0] != len(self.y_true):
            return (
                f"predictions of shape {shape} do not match the {len(self.y_true)} "
                "validation targets"
            )
        if len(shape) == 2 and self.classes is not None and shape[1] != len(self.classes):
            return (
                f"predictions have {shape[1]} class columns but the task has "
                f"{len(self.classes)} classes {self.classes.tolist()}"
            )
        array = np.asarray(predictions)
        if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
            bad = np.count_nonzero(~np.isfinite(array))
            return f"predictions hold {bad} NaN or infinite values"
        if len(shape) == 1 and self.classes is not None:
            strangers = np.unique(array[~np.isin(array, self.classes)])
            if strangers.size:
                return (
                    f"predicted labels {strangers[:5].tolist()} are not among the task's "
                    f"classes {self.classes.tolist()}"
                )
        return None


@attrs.frozen(kw_only=True)
class Ensemble:
    """Members are trial numbers; weights are normalized to sum to one."""

    members: tuple[int, ...] = attrs.field(converter=tuple)
    weights: tuple[float, ...] = attrs.field(converter=_normalized)

    def __attrs_post_init__(self) -> None:
        if len(self.members) != len(self.weights):
            raise ValueError(
                f"{len(self.members)} members but {len(self.weights)} weights"
            )

    @classmethod
    def from_counts(cls, counts: Mapping[int, float]) -> Ensemble:
        """Build from ``{trial number: multiplicity or weight}``, dropping zero weights."""
        kept = {m: w for m, w in sorted(counts.items()) if w > 0}
        return cls(members=tuple(kept), weights=tuple(kept.values()))

    @classmethod
    def single(cls, member: int) -> Ensemble:
        return cls(members=(member,), weights=(1.0,))

    def __len__(self) -> int:
        return len(self.members)

    def combine(
        self, predictions: Sequence[np.ndarray], *, vote_classes: np.ndarray | None = None
    ) -> np.ndarray:
        """Weighted combination of the members' predictions, in member order.

        Arrays of shape (m,) or (m, k) are averaged. With ``vote_classes``, 1-D label
        predictions are turned into a weighted vote over those classes and the winning
        label is returned.
        """
        if len(predictions) != len(self.members):
            raise ValueError(
                f"expected {len(self.members)} prediction arrays, got {len(predictions)}"
            )
        weights = np.asarray(self.weights)
        if vote_classes is not None:
            votes = np.zeros((len(predictions[0]), len(vote_classes)))
            for weight, labels in zip(weights, predictions, strict=True):
                votes += weight * (np.asarray(labels)[:, None] == vote_classes[None, :])
            return vote_classes[np.argmax(votes, axis=1)]
        stacked = np.stack([np.asarray(p, dtype=float) for p in predictions])
        return np.tensordot(weights, stacked, axes=1)
