"""The :class:`Ensemble` value: which trials, with which weights.

An ensemble is a weighted multiset of trials. It combines the members' stored
per-example predictions by the rule its strategy built and scored it with — a weighted
majority vote or a weighted mean of class probabilities or values — so it can be
scored on the validation set without retraining anything.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.errors import ExperimentError


def members_text(members: Sequence[int], weights: Sequence[float]) -> str:
    """``"1:0.2, 4:0.0015"``: trial:weight with three significant digits, so a small
    weight (an Agnostic Bayes posterior's tail) does not print as 0.00."""
    return ", ".join(f"{m}:{w:.3g}" for m, w in zip(members, weights, strict=True))


def _trial_numbers(members: Any) -> tuple[int, ...]:
    """Members as ``int`` trial numbers (numpy integers too). A float such as ``4.0`` was
    kept, and the report, the fitted ensemble and the stored study failed on it later,
    after the whole budget."""
    members = tuple(members)
    numbers = []
    for member in members:
        try:
            if isinstance(member, bool):
                raise TypeError(member)
            numbers.append(operator.index(member))
        except TypeError:
            raise ValueError(
                f"ensemble members are trial numbers (int), got {member!r} "
                f"({type(member).__name__}) among members {list(members)}"
            ) from None
    return tuple(numbers)


def _normalized(weights: Sequence[float]) -> tuple[float, ...]:
    array = np.asarray(weights, dtype=float)
    if not np.all(np.isfinite(array)):  # as given: refused with the members, after init
        return tuple(array.tolist())
    if array.size and (np.any(array < 0) or array.sum() <= 0):
        raise ValueError(f"ensemble weights must be non-negative and not all zero, got {array}")
    return tuple((array / array.sum()).tolist()) if array.size else ()


def context_classes(
    given: Sequence[Any] | None, validation_targets: Any, task: str | None
) -> np.ndarray | None:
    """The labels class predictions' columns stand for (:attr:`EnsembleContext.classes`):
    ``given`` (the training classes, some of which a holdout may lack, checked against
    the targets), else those among the validation targets."""
    if validation_targets is None or task != "classification":
        return None
    if given is None:
        return np.unique(validation_targets)
    classes = np.unique(np.asarray(given))
    if len(classes) != len(given):
        raise ExperimentError("classes", f"labels are listed twice in {list(given)!r}")
    if classes.tolist() != np.asarray(given).tolist():  # the columns' order
        raise ExperimentError("classes", f"must be in sorted order, as the columns of class "
                                         f"probabilities are, got {list(given)!r}")
    strangers = np.setdiff1d(np.asarray(validation_targets), classes)
    if strangers.size:
        raise ExperimentError(
            "classes",
            f"validation targets {strangers[:10].tolist()} are not among {classes.tolist()}",
        )
    return classes


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
    classes_from_targets: bool = attrs.field(default=False, eq=False, repr=False)
    """The classes are those among ``y_true`` (no ``classes=``): a holdout lacking a
    class has fewer than the training data, which refusals then say."""
    budget: int | None = None
    seed: int = 0
    registry: Any = attrs.field(default=None, eq=False, repr=False)
    """Where the study builds its components (``None``: the installed plugins), so a
    strategy builds its losses from the same one."""

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
        if self.task == "regression" and len(shape) != 1:
            # A Keras or torch regressor's (m, 1) column was stored complete, then broke
            # every later ensemble: the pool stacks it beside 1-D trials.
            return (
                f"regression predictions must be 1-D, one value per example, of shape "
                f"({len(self.y_true)},), got shape {shape}; pass a 1-D array "
                "(predictions.ravel() for a single output column)"
            )
        if len(shape) == 2 and self.classes is not None and shape[1] != len(self.classes):
            return (
                f"predictions have {shape[1]} class columns but the task has "
                f"{len(self.classes)} classes {self.classes.tolist()}"
                + self._missing_classes_hint(shape[1] > len(self.classes))
            )
        array = np.asarray(predictions)
        if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
            bad = np.count_nonzero(~np.isfinite(array))
            return f"predictions hold {bad} NaN or infinite values"
        if self.task == "regression":
            return _residual_problem(array, self.y_true)
        if len(shape) == 1 and self.classes is not None:
            strangers = np.unique(array[~np.isin(array, self.classes)])
            if strangers.size:
                return (
                    f"predicted labels {strangers[:5].tolist()} are not among the task's "
                    f"classes {self.classes.tolist()}" + self._missing_classes_hint(True)
                )
        if len(shape) == 2 and self.task != "regression":
            return probability_problem(array)
        return None

    def _missing_classes_hint(self, more_than_known: bool) -> str:
        """The fix when predictions know more classes than the validation targets hold:
        the trial is right, the study was not told the training classes."""
        if not (more_than_known and self.classes_from_targets):
            return ""
        return (
            "; the classes were taken from validation_targets, which may lack some "
            "training classes: give the study classes= (all training classes, sorted)"
        )


RESIDUAL_LIMIT = 1e150
"""Largest distance of a regression prediction from its target an ensemble can score:
the squares of larger ones, summed over examples, overflow, and an infinite
per-example loss made a strategy's risks NaN (``agnostic-bayes`` then never chose a
later trial) or its targets infinite (``esmbo`` and ``segor`` refused every later ask,
and a resume too)."""


def _residual_problem(predictions: np.ndarray, y_true: np.ndarray) -> str | None:
    """Why regression ``predictions`` are too far from ``y_true`` to be scored, if they are."""
    with np.errstate(over="ignore", invalid="ignore"):
        residuals = np.abs(predictions.astype(float) - np.asarray(y_true, dtype=float))
    largest = float(np.max(residuals, initial=0.0))
    if largest <= RESIDUAL_LIMIT:
        return None
    return (
        f"predictions are up to {largest:.3g} from the validation targets, beyond "
        f"{RESIDUAL_LIMIT:.0e}: squared errors that large overflow every ensemble's loss "
        "(did the model diverge?)"
    )


PROBABILITY_TOLERANCE = 1e-2
"""How far class probabilities may stray from [0, 1] and their rows' sums from 1: wide
enough for float16 and probabilities rounded to two or three decimals over many classes,
narrow enough to catch what is not a distribution (scores, logits, counts)."""


def probability_problem(probabilities: np.ndarray) -> str | None:
    """Why the rows of ``probabilities`` (n, k) are not probability distributions, or
    ``None``. Losses clip and ensembles average them as such, so probabilities times 3
    or minus 0.5 were stored complete and chose a worse ensemble."""
    if probabilities.dtype.kind not in "biuf":
        return f"class probabilities must be real numbers, got dtype {probabilities.dtype}"
    values = probabilities.astype(float)
    sums = values.sum(axis=1)
    off = np.abs(sums - 1.0) > PROBABILITY_TOLERANCE
    if off.any():
        row = int(np.flatnonzero(off)[0])
        return (
            f"class probabilities must sum to 1 in each row, but {np.count_nonzero(off)} "
            f"rows do not; row {row} sums to {sums[row]:.6g}"
        )
    outside = (values < -PROBABILITY_TOLERANCE) | (values > 1 + PROBABILITY_TOLERANCE)
    if outside.any():
        row, column = np.argwhere(outside)[0]
        return (
            f"class probabilities must lie in [0, 1], but {np.count_nonzero(outside)} do "
            f"not; row {row} holds {values[row, column]:.6g} in column {column}"
        )
    return None


COMBINATIONS = ("vote", "average")


VOTE_TIE_TOLERANCE = 1e-12
"""Vote totals closer than this share of the whole vote tie. Weights that are not whole
counts (a posterior's 0.45 + 0.05 against 0.2 + 0.2 + 0.1) sum to totals one ulp apart,
and float noise must not decide a vote, in the loss that scores it or in the ensemble
that predicts with it."""


def vote_at_least(votes: np.ndarray, others: np.ndarray, total: Any = 1.0) -> np.ndarray:
    """Whether ``votes`` reach ``others`` up to float noise: no more than
    :data:`VOTE_TIE_TOLERANCE` · ``total`` (the whole vote; 1 for normalized weights)
    below them. The one tie rule of the zero-one loss and of the fitted ensemble."""
    return votes >= others - VOTE_TIE_TOLERANCE * np.asarray(total, dtype=float)


def leading_votes(votes: np.ndarray) -> np.ndarray:
    """Boolean (n, k): the columns that share each row's largest vote (normalized)."""
    return vote_at_least(votes, votes.max(axis=1, keepdims=True))


def break_vote_ties(votes: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Column of the largest vote per row; among tied columns, the largest ``tiebreak``
    (the weighted mean probability), then the first."""
    return np.argmax(np.where(leading_votes(votes), tiebreak, -np.inf), axis=1)


def _nonzero(given: Mapping[Any, Any], what: str) -> dict[Any, float]:
    """The members of ``given`` (member -> weight or count) whose value is not zero, in
    member order. Negative and NaN values were dropped as zeros are, silently, and an
    ensemble of no member at all came back (which reads as false, so the best trial
    stood in for it): they are refused, naming them, as the docs say."""
    values = {member: float(value) for member, value in sorted(given.items())}
    refused = {m: v for m, v in values.items() if not (np.isfinite(v) and v >= 0)}
    if refused:
        raise ValueError(f"ensemble {what} must be finite and non-negative, got {what} "
                         f"{refused} (trial number: {what[:-1]})")
    kept = {m: v for m, v in values.items() if v != 0}
    if not kept:
        raise ValueError(f"an ensemble needs at least one member with {what} above zero, "
                         f"got {values}")
    return kept


def _default_size(ensemble: Ensemble) -> float:
    return float(len(ensemble.members))


@attrs.frozen(kw_only=True)
class Ensemble:
    """Members are trial numbers; weights are normalized to sum to one.

    ``size`` is m, the number of members counted with multiplicity (a member picked
    twice counts twice): normalized weights have lost it, and a loss that depends on
    it (``sigmoid-margin`` solves its scale for m) must score the ensemble the strategy
    built. ``combination`` is the rule the strategy built and scored the ensemble with,
    so that it predicts and is scored the same way: ``"vote"`` (weighted majority vote
    of each member's most probable class), ``"average"`` (weighted mean of class
    probabilities or values), or ``None``: as the study's loss combines.
    """

    members: tuple[int, ...] = attrs.field(converter=_trial_numbers)
    weights: tuple[float, ...] = attrs.field(converter=_normalized)
    size: float = attrs.field(default=attrs.Factory(_default_size, takes_self=True),
                              converter=float)
    combination: str | None = attrs.field(
        default=None, validator=attrs.validators.in_((None, *COMBINATIONS)))

    def __attrs_post_init__(self) -> None:
        if len(self.members) != len(self.weights):
            raise ValueError(
                f"{len(self.members)} members but {len(self.weights)} weights"
            )
        self._check_finite_weights()
        if self.members and not self.size > 0:
            raise ValueError(f"an ensemble's size must be positive, got {self.size}")

    def _check_finite_weights(self) -> None:
        """A NaN weight normalized every weight to NaN, and the ensemble then predicted
        the first class for every example, with nothing said."""
        if not np.all(np.isfinite(self.weights)):
            raise ValueError(
                f"ensemble weights must be finite numbers, got weights {list(self.weights)} "
                f"for members {list(self.members)}"
            )

    @classmethod
    def from_counts(cls, counts: Mapping[int, float], *,
                    combination: str | None = None) -> Ensemble:
        """Build from ``{trial number: multiplicity}``, dropping zeros; the size is the
        total multiplicity. A negative, NaN or infinite count, or none above zero, raises
        ``ValueError``."""
        kept = _nonzero(counts, "counts")
        return cls(members=tuple(kept), weights=tuple(kept.values()),
                   size=sum(kept.values()), combination=combination)

    @classmethod
    def from_weights(cls, weights: Mapping[int, float], *, size: float | None = None,
                     combination: str | None = None) -> Ensemble:
        """Build from ``{trial number: weight}``, dropping zeros. Weights are not counts:
        the size is one per member unless given (``esmbo``'s N bootstrap winners). A
        negative, NaN or infinite weight, or none above zero, raises ``ValueError``."""
        kept = _nonzero(weights, "weights")
        return cls(members=tuple(kept), weights=tuple(kept.values()),
                   size=len(kept) if size is None else size, combination=combination)

    @classmethod
    def single(cls, member: int) -> Ensemble:
        return cls(members=(member,), weights=(1.0,))

    def __len__(self) -> int:
        return len(self.members)

    @property
    def counts(self) -> np.ndarray:
        """Each member's multiplicity: its weight times the size. Whole multiplicities come
        back whole (1/49·49 is 0.999…), so a vote scored from them ties where the
        strategy's vote of whole counts tied."""
        counts = np.asarray(self.weights) * self.size
        whole = np.round(counts)
        return np.where(np.abs(counts - whole) <= 1e-9 * np.maximum(whole, 1.0), whole, counts)

    def combine(
        self, predictions: Sequence[np.ndarray], *, vote_classes: np.ndarray | None = None
    ) -> np.ndarray:
        """The members' predictions (in member order) combined by the ensemble's rule.

        Values (m,) or class probabilities (m, k) are averaged with the weights; a
        ``"vote"`` ensemble instead gives each class (m, k) its weighted share of the
        members' votes. With ``vote_classes`` (the classes of the columns; label
        predictions (m,) are votes for them) the winning class of each example is
        returned, as :class:`~ensembo.ml.FittedEnsemble` predicts it: a tie goes to the
        tied class with the highest weighted mean probability, then to the first.
        """
        if len(predictions) != len(self.members):
            raise ValueError(
                f"expected {len(self.members)} prediction arrays, got {len(predictions)}"
            )
        arrays = [np.asarray(p) for p in predictions]
        if vote_classes is not None:  # a member's label is its vote, a one-hot row
            arrays = [p[:, None] == np.asarray(vote_classes) if p.ndim == 1 else p for p in arrays]
        if len({p.shape for p in arrays}) > 1:
            raise ValueError(
                "members' predictions differ in shape "
                f"({sorted({p.shape for p in arrays})}): labels (m,) combine with class "
                "probabilities (m, k) only given vote_classes"
            )
        stacked = np.stack(arrays).astype(float)
        weights = np.asarray(self.weights)
        mean = np.tensordot(weights, stacked, axes=1)
        totals = mean
        if self.combination == "vote" and stacked.ndim == 3:
            from ensembo.plugins.losses.votes import one_hot_votes  # the losses' own vote

            totals = np.tensordot(weights, np.stack([one_hot_votes(p) for p in stacked]), axes=1)
        if stacked.ndim == 3:  # shares or probabilities: float sums can pass 1 by an ulp
            totals = np.minimum(totals, 1.0)
        if vote_classes is None:
            return totals
        return np.asarray(vote_classes)[break_vote_ties(totals, mean)]
