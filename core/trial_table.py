"""Trials as table rows: the columns a report's ``trials.csv`` and
``Study.trials_dataframe`` share.

One column per hyperparameter (empty where it is inactive) and per metric the
objective recorded in ``trial.info``, then how long the trial ran and how often.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ensembo.trials import Trial, TrialState

TAIL_COLUMNS = ("duration_s", "attempts", "error")


def info_keys(trials: Iterable[Trial]) -> list[str]:
    """Metrics recorded in ``trial.info`` (validation/test errors...), sorted."""
    return sorted({key for trial in trials for key in trial.info})


def trial_values(trial: Trial, hyperparameters: Sequence[str], metrics: Sequence[str]) -> list[Any]:
    """``trial``'s hyperparameters, metrics and :data:`TAIL_COLUMNS`, in that order."""
    return [
        *(trial.config.get(name) for name in hyperparameters),
        *(trial.info.get(key) for key in metrics),
        trial.duration,
        trial.attempts,
        trial.error,
    ]


def best_so_far(trials: Iterable[Trial]) -> list[float | None]:
    """The lowest loss of the complete trials up to each trial, in the given order."""
    best: float | None = None
    running = []
    for trial in trials:
        if trial.state is TrialState.COMPLETE:
            best = trial.loss if best is None else min(best, trial.loss)
        running.append(best)
    return running
