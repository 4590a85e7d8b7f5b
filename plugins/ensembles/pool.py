"""The pool of finished trials an ensemble strategy chooses from, with their predictions.

Every strategy that looks past the single best needs the same thing: the completed
trials, their stored validation predictions stacked into one array, the validation
targets in the form losses expect (class indices for classification), and a loss that
can score both single models and combinations. Pending and failed trials are not in
the pool, so strategies run unchanged under asynchronous evaluation.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ensembo import components
from ensembo.ensemble import EnsembleContext
from ensembo.errors import EnsemboError
from ensembo.loss_fit import DEFAULT_LOSS
from ensembo.plugins.losses.ensemble_loss import EnsembleLoss, prepare_candidates
from ensembo.plugins.losses.votes import VoteCandidates, VoteLoss, vote_index
from ensembo.trials import History, Trial


class MissingPredictionsError(EnsemboError, ValueError):
    """A strategy needs per-example validation predictions that a study does not have."""


class EnsembleLossRequiredError(EnsemboError, TypeError):
    """A strategy was given a loss that cannot score combinations of models."""


@attrs.frozen(kw_only=True)
class Pool:
    """Completed trials in history order and what strategies compute from them.

    ``predictions`` is (n, m, k) class probabilities or (n, m) values; ``y`` is the
    class index (classification) or value (regression) of each validation example.
    """

    numbers: tuple[int, ...]
    predictions: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    task: str

    def __len__(self) -> int:
        return len(self.numbers)


def _task(context: EnsembleContext, trial: Trial) -> str:
    if context.task is not None:
        return context.task
    return "classification" if np.ndim(trial.predictions) == 2 else "regression"


def _class_probabilities(trial: Trial, classes: np.ndarray) -> np.ndarray:
    predictions = np.asarray(trial.predictions)
    if predictions.ndim == 1:
        index = np.searchsorted(classes, predictions)
        probabilities = np.zeros((len(predictions), len(classes)))
        probabilities[np.arange(len(predictions)), np.clip(index, 0, len(classes) - 1)] = 1.0
        return probabilities
    if predictions.shape[1] != len(classes):
        raise MissingPredictionsError(
            f"trial {trial.number} predicts {predictions.shape[1]} class columns but the "
            f"task has {len(classes)} classes {classes.tolist()}"
        )
    return predictions.astype(float)


def build_pool(history: History, context: EnsembleContext, strategy: str,
               cache: TrialCache | None = None) -> Pool:
    """The completed trials of ``history`` with predictions; fails naming ``strategy``.

    With a ``cache`` (a strategy's own, kept between iterations), only trials it has not
    seen are converted and the stacked predictions grow in place.
    """
    trials = history.completed()
    if context.y_true is None:
        raise MissingPredictionsError(
            f"ensemble strategy {strategy!r} needs per-example validation predictions: give "
            "the study validation_targets= and have the objective return an Evaluation with "
            "predictions (ensembo.ml.Task does both), or use ensemble='best'"
        )
    missing = [t.number for t in trials if t.predictions is None]
    if missing:
        raise MissingPredictionsError(
            f"ensemble strategy {strategy!r} needs validation predictions, but trials "
            f"{missing[:10]}{'...' if len(missing) > 10 else ''} have none"
        )
    y_true = np.asarray(context.y_true)
    if not trials:
        return Pool(numbers=(), predictions=np.empty((0, len(y_true))), y=y_true,
                    task=context.task or "regression")
    task = _task(context, trials[0])
    if task == "classification":
        classes = context.classes if context.classes is not None else np.unique(y_true)
        y = np.searchsorted(classes, y_true)

        def convert(trial: Trial) -> np.ndarray:
            return _class_probabilities(trial, classes)
    else:
        classes, y = None, y_true.astype(float)

        def convert(trial: Trial) -> np.ndarray:
            return np.asarray(trial.predictions, dtype=float)

    def checked(position: int) -> np.ndarray:
        predictions = convert(trials[position])
        if predictions.shape[0] != len(y):
            raise MissingPredictionsError(
                f"ensemble strategy {strategy!r}: trials predict {predictions.shape[0]} "
                f"validation examples but the study has {len(y)} validation targets"
            )
        return predictions

    numbers = tuple(t.number for t in trials)
    key = ("predictions", task, None if classes is None else np.asarray(classes).tobytes())
    rows = (cache or TrialCache()).rows(key, y, numbers, checked)
    return Pool(numbers=numbers, predictions=rows, y=y, task=task)


def resolve_loss(spec: Any, context: EnsembleContext, pool_task: str | None = None) -> Any:
    """The loss a strategy uses: its own option, else the study's, else the task default."""
    if spec is None:
        spec = context.loss or DEFAULT_LOSS.get(context.task or pool_task or "", "zero-one")
    return components.build("loss", spec, context.registry)


def require_ensemble_loss(loss: Any, strategy: str) -> EnsembleLoss:
    if not isinstance(loss, EnsembleLoss):
        raise EnsembleLossRequiredError(
            f"ensemble strategy {strategy!r} scores combinations of models, but loss "
            f"{type(loss).__name__} has no contributions()/ensemble_loss() (see "
            "ensembo.plugins.losses.ensemble_loss.EnsembleLoss); built-in losses all do"
        )
    return loss


class RowStack:
    """Per-trial arrays stacked in pool order, in a buffer that grows in place.

    A study's pool usually grows at its end, so the next iteration costs one row per new
    trial and returns a view instead of restacking n rows. A trial inserted earlier in
    the order (finished out of order) rebuilds the buffer, reusing the rows it has.
    """

    def __init__(self) -> None:
        self._order: list[int] = []
        self._buffer: np.ndarray | None = None

    def rows(self, numbers: tuple[int, ...], row) -> np.ndarray:
        """(n, ...) rows for ``numbers``; ``row(position)`` computes a missing one."""
        if not numbers:
            return np.empty((0,))
        known = len(self._order)
        if known > len(numbers) or list(numbers[:known]) != self._order:
            self._rebuild(numbers, row)
        for position in range(len(self._order), len(numbers)):
            self._put(position, np.asarray(row(position)))
            self._order.append(numbers[position])
        return self._buffer[: len(numbers)]

    def _put(self, position: int, value: np.ndarray) -> None:
        if position == 0:
            self._buffer = np.empty((16, *value.shape), dtype=value.dtype)
        elif position == len(self._buffer):
            grown = np.empty((2 * position, *value.shape), dtype=self._buffer.dtype)
            grown[:position] = self._buffer[:position]
            self._buffer = grown
        self._buffer[position] = value

    def _rebuild(self, numbers: tuple[int, ...], row) -> None:
        kept = {n: self._buffer[i] for i, n in enumerate(self._order)}
        self._order, self._buffer = [], None
        for position, number in enumerate(numbers):
            value = kept.get(number)
            self._put(position, np.asarray(row(position)) if value is None else value)
            self._order.append(number)


class TrialCache:
    """Per-trial arrays derived from stored predictions, computed once per trial.

    Stored predictions never change, so a trial's per-example losses or ensemble
    contributions are computed the first time it is seen and reused in every later
    iteration. Entries are keyed by what they depend on besides the trial (the loss and
    the validation targets).
    """

    def __init__(self) -> None:
        self._stacks: dict[tuple[Any, ...], RowStack] = {}

    def rows(self, key: Any, y: np.ndarray, numbers: tuple[int, ...], row) -> np.ndarray:
        """:meth:`RowStack.rows` of the stack for ``key`` and validation targets ``y``."""
        stack = self._stacks.setdefault((key, hash(np.asarray(y).tobytes())), RowStack())
        return stack.rows(numbers, row)

    def stack(self, pool: Pool, key: Any, compute) -> np.ndarray:
        """``compute(predictions)`` for every pool trial, stacked along a first axis (n, ...)."""
        if not pool.numbers:
            return np.empty((0, len(pool.y)))
        return self.rows(key, pool.y, pool.numbers,
                         lambda i: np.asarray(compute(pool.predictions[i]), dtype=float))

    def loss_matrix(self, pool: Pool, loss: Any, spec: Any) -> np.ndarray:
        """Per-example losses (m, n): row i, column h is L(h(x_i), y_i)."""
        return self.stack(pool, ("loss", repr(spec)), lambda p: loss(pool.y, p)).T

    def contributions(self, pool: Pool, loss: EnsembleLoss, spec: Any) -> np.ndarray:
        """Each model's share of an ensemble total under ``loss``, (n, m[, k])."""
        return self.stack(pool, ("contributions", repr(spec)), loss.contributions)

    def candidates(self, pool: Pool, loss: EnsembleLoss, spec: Any):
        """The pool prepared as candidates ("the ensemble plus each one"), for ``loss``.

        Vote losses keep each trial's vote positions; other losses are prepared afresh.
        """
        contributions = self.contributions(pool, loss, spec)
        if not isinstance(loss, VoteLoss) or not pool.numbers:
            return prepare_candidates(loss, contributions)
        index = self.rows(("vote-index", repr(spec)), pool.y, pool.numbers,
                          lambda i: vote_index(contributions[i]))
        return VoteCandidates(loss, contributions, flat_index=index)
