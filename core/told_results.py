"""What :meth:`ensembo.study.Study.tell` and ``add`` are given, checked before anything
is recorded: the state a trial is told as, its result as an :class:`Evaluation` that
fits the validation targets, the refusal that leaves the trial running, the finish time
it gets, and the defaults ``add`` filled in for hyperparameters it was not given."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np
from ConfigSpace import Constant

from ensembo import spaces
from ensembo.ensemble_keeper import EnsembleKeeper
from ensembo.errors import TrialError
from ensembo.objective import InvalidResultError, to_evaluation, without_object_predictions
from ensembo.trials import Evaluation, Trial, TrialState

# add()'s warning keeps the study's logger, by which users filter the study's warnings.
logger = logging.getLogger("ensembo.study")

OUTCOMES = (TrialState.COMPLETE, TrialState.FAILED, TrialState.INTERRUPTED)


def told_state(
    state: TrialState | str, result: Any, predictions: np.ndarray | None, error: Any = None
) -> TrialState:
    """``state`` as a TrialState a trial can be told as; only a complete trial has a
    result or predictions, and only a failed or interrupted one an error (a complete
    trial's was dropped without a word)."""
    state = TrialState.parse(state)
    if state not in OUTCOMES:
        raise TrialError(f"a trial is told as one of {[s.value for s in OUTCOMES]}, "
                         f"not {state.value!r}")
    if (result is not None or predictions is not None) and state is not TrialState.COMPLETE:
        raise TrialError(f"a {state.value} trial has no result; tell it without one and "
                         "without predictions= (the reason goes in error=)")
    if error is not None and state is TrialState.COMPLETE:
        raise TrialError(
            f"tell(): error= ({error!r}) is kept only for a failed or interrupted trial, "
            'not with a complete result; nothing was recorded: did you mean state="failed" '
            "(with error= and no result)?"
        )
    return state


def refuse_queued(trial: Trial) -> Trial:
    """tell() finishes a trial someone evaluated: a queued one was never handed out, and
    telling it made it complete with no attempt and no start time."""
    if trial.state is TrialState.PENDING:
        raise TrialError(
            f"tell(): trial {trial.number} is queued (enqueue()) and was never asked; ask() "
            "hands it out to be evaluated and told, and add(config, result) records a "
            "result evaluated elsewhere"
        )
    return trial


def unusable(trial: Trial, problem: Exception | str,
             verb: str = "is not usable") -> InvalidResultError:
    """tell()'s refusal of a result: the trial stays running, so a corrected result (or
    ``state="failed"``) can still be told."""
    return InvalidResultError(
        f"tell(): the result of trial {trial.number} {verb}: {problem}; nothing was "
        "recorded and the trial is still running: tell it again with a usable result, or "
        'with state="failed"'
    )


def checked_evaluation(
    result: Any, predictions: np.ndarray | None, keeper: EnsembleKeeper
) -> Evaluation:
    """``result`` as an :class:`Evaluation`, with ``predictions`` checked against the
    validation targets; raises ``ValueError``/``TypeError`` if it is not usable."""
    evaluation = to_evaluation(result)
    if predictions is not None:
        evaluation = attrs.evolve(evaluation, predictions=predictions)
    evaluation = without_object_predictions(evaluation)
    keeper.check_predictions(evaluation)
    return evaluation


class FinishClock:
    """The finish time of each told trial: now, but never before the last trial's
    finish. A resumed study replays trials in finish order, and a clock set back during
    the run (an NTP step, a resumed VM) put them out of the order they were told, which
    changed ``eo``'s ensemble."""

    def __init__(self, finished: Iterable[Trial]):
        self._last_finish = max((t.finished_at or 0.0 for t in finished), default=0.0)

    def now(self) -> float:
        self._last_finish = max(time.time(), self._last_finish + 1e-6)
        return self._last_finish


def say_defaults_filled_in(space: spaces.Space, given: Mapping[str, Any], trial: Trial) -> None:
    """Warn that ``add`` recorded a result against default values it was not given: a
    warm start from a table that lacks a column records results for values that were
    perhaps never run. A hyperparameter with one value (a constant, a one-choice
    categorical) is not the caller's to choose, so leaving it out is no guess."""
    filled = sorted(
        name for name in trial.config
        if name not in given and not _single_valued(space.hyperparameter(name))
    )
    if filled:
        logger.warning(
            "add(): the configuration leaves out active hyperparameters %s; trial %d "
            "records the result with their defaults (%s)", ", ".join(filled), trial.number,
            ", ".join(f"{name}={trial.config[name]!r}" for name in filled),
        )


def _single_valued(hyperparameter: Any) -> bool:
    if isinstance(hyperparameter, Constant):
        return True
    values = getattr(hyperparameter, "choices", getattr(hyperparameter, "sequence", None))
    return values is not None and len(values) == 1
