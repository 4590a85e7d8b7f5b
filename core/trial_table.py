"""Trials as table rows: the columns a report's ``trials.csv`` and
``Study.trials_dataframe`` share, and that DataFrame.

One column per hyperparameter (empty where it is inactive) and per metric the
objective recorded in ``trial.info``, then how long the trial ran and how often.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ensembo.ensemble import Ensemble
from ensembo.errors import MissingDependencyError
from ensembo.trials import Trial, TrialState

TAIL_COLUMNS = ("duration_s", "attempts", "error")
LEAD_DTYPES = {"loss": "float64", "best_so_far": "float64", "weight": "float64"}
TAIL_DTYPES = {"duration_s": "float64", "attempts": "int64"}


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


def member_weights(ensemble: Ensemble) -> dict[int, float]:
    """Each member trial's total weight: an ensemble is a weighted multiset, and a trial
    listed twice (``members=[b, b]``) holds both its weights, not the last one."""
    weights: dict[int, float] = {}
    for member, weight in zip(ensemble.members, ensemble.weights, strict=True):
        weights[member] = weights.get(member, 0.0) + weight
    return weights


def dataframe(
    trials: Sequence[Trial], hyperparameters: Sequence[str], ensemble: Ensemble | None
) -> Any:
    """A pandas DataFrame indexed by trial number: state, loss, the best loss so far,
    the trial's weight in ``ensemble`` (empty if it is not a member), then the columns
    of a report's ``trials.csv`` (:func:`trial_values`). A hyperparameter or metric named
    like a fixed column (``loss``, ``state``) is a second column of that name."""
    try:
        import pandas
    except ImportError:
        raise MissingDependencyError("Study.trials_dataframe", "pandas", "data") from None
    weights = member_weights(ensemble) if ensemble else {}
    metrics = info_keys(trials)
    rows = [
        [trial.state.value, trial.loss, best, weights.get(trial.number),
         *trial_values(trial, hyperparameters, metrics)]
        for trial, best in zip(trials, best_so_far(trials), strict=True)
    ]
    columns = ["state", "loss", "best_so_far", "weight", *hyperparameters, *metrics,
               *TAIL_COLUMNS]
    # The index is not made from a column: a hyperparameter or metric named "number"
    # would make two of them, and set_index refuse both.
    index = pandas.Index([trial.number for trial in trials], name="number", dtype="int64")
    return _typed(pandas.DataFrame(rows, columns=columns, index=index))


def _typed(table: Any) -> Any:
    """``table`` with the loss, weight and tail columns of one dtype whatever the trials:
    pandas infers dtypes from the values, and with none to infer from (no trials, none
    complete) they were objects holding None. Cast by position (the first of a name
    before the metrics, the last after them), since a metric may share its name."""
    names = list(table.columns)
    positions = {names.index(name): dtype for name, dtype in LEAD_DTYPES.items()}
    for name, dtype in TAIL_DTYPES.items():
        positions[len(names) - 1 - names[::-1].index(name)] = dtype
    for position, dtype in positions.items():
        table.isetitem(position, table.iloc[:, position].astype(dtype))
    return table
