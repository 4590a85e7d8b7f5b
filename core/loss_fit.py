"""Whether a loss fits a task, checked before any trial is spent on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ensembo.attribution import CALL_NOTE
from ensembo.components import describe, split_spec
from ensembo.errors import ExperimentError, PluginContractError

DEFAULT_LOSS = {"classification": "zero-one", "regression": "mse"}


def check_loss_fits_task(
    loss: Any,
    name: Any,
    task: str,
    targets: np.ndarray,
    n_classes: int,
    *,
    of_ensembles: bool = False,
) -> None:
    """Score a few perfect predictions in the task's format with ``loss`` (and combine
    them as ensembles do, when it can), so a loss for the other task (``mse`` on class
    probabilities, ``zero-one`` on values) is refused before the search instead of
    failing every trial.

    ``targets`` are class indices for classification. Losses declare no task; trying one
    on well-formed input is what tells. With ``of_ensembles`` (a strategy's ensemble
    loss), a loss defined only on whole ensembles (the C-bound, ``per_example = False``)
    is tried on a one-member ensemble instead of per example."""
    sample = targets[:5]
    if task == "classification" and len(sample) == n_classes:  # (m, m) could pass as (m,)
        sample = np.append(sample, sample[:1])
    if task == "classification":
        predictions = np.eye(n_classes)[sample]  # (m, n_classes) class probabilities
        expected = "class probabilities of shape (m, n_classes)"
    else:
        predictions = sample.astype(float)
        expected = "predicted values of shape (m,)"
    try:
        whole_ensembles_only = of_ensembles and not getattr(loss, "per_example", True)
        if not whole_ensembles_only:
            _check_per_example(loss(sample, predictions), loss, name, len(sample))
        contributions = getattr(loss, "contributions", None)
        if contributions is not None:
            totals = contributions(predictions)
            if whole_ensembles_only:
                loss.ensemble_loss(sample, totals, 1)
    except PluginContractError:
        raise  # the loss's bug, not a task it does not fit
    except Exception as error:  # whatever the loss raises, the user must hear which loss
        if not of_ensembles and not getattr(loss, "per_example", True):
            # the C-bound is a classification loss: "does not fit a task" misled
            raise ExperimentError("loss", str(error)) from error
        suggestion = DEFAULT_LOSS[task]
        raise ExperimentError(
            "loss",
            f"loss {name!r} does not fit a {task} task, whose predictions are {expected}: "
            f"tried on {len(sample)} perfect predictions made up for this check, it raised: "
            f"{error} (the {task} default is {suggestion!r})",
        ) from error


def _check_per_example(values: Any, loss: Any, name: Any, examples: int) -> None:
    """A loss gives one finite value per example. A scalar or a column passed here, and
    the study then failed inside a built-in strategy (an IndexError in ``esmbo``), which
    was blamed for it."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        array = np.asarray(values, dtype=object)
    label = loss_label(loss, name)
    if array.shape != (examples,):
        raise _broken(label, f"loss {label} returned values of shape {array.shape} for "
                             f"{examples} examples; a loss returns one value per example, "
                             f"of shape ({examples},)")
    if array.dtype == object or not np.all(np.isfinite(array)):
        raise _broken(label, f"loss {label} returned NaN, infinite or non-numeric values "
                             f"for perfect predictions: {array.tolist()}")


def _broken(label: str, message: str) -> PluginContractError:
    """The loss's bug, noted as found in a call of it: the command line then says it is
    the plugin's (exit 1), not a mistake in the experiment."""
    error = PluginContractError(message)
    error.add_note(f"{CALL_NOTE}__call__() of loss {label}")
    return error


def loss_label(loss: Any, name: Any) -> str:
    """The loss as the user named it: ``'mse'`` by its registry name, else its class."""
    parts = split_spec("loss", name) if isinstance(name, str | Mapping) else None
    return repr(parts[0]) if parts else type(loss).__qualname__


def check_loss_fits_context(
    loss: Any, name: Any, context: Any, *, of_ensembles: bool = False
) -> None:
    """:func:`check_loss_fits_task` on a study's validation targets, when the study
    knows its task and has targets (classification targets become class indices)."""
    y_true, task, classes = context.y_true, context.task, context.classes
    if y_true is None or task is None or not len(y_true):
        return
    if task == "classification":
        targets, n_classes = np.searchsorted(classes, y_true), len(classes)
    else:
        targets, n_classes = np.asarray(y_true, dtype=float), 0
    check_loss_fits_task(loss, name, task, targets, n_classes, of_ensembles=of_ensembles)


def task_the_loss_fits(loss: Any, name: Any, targets: np.ndarray) -> str | None:
    """The one task ``loss`` fits on ``targets``, or ``None`` when it fits both or
    neither: a study given a loss but no task learns it here, instead of guessing from
    each trial's predictions (labels, 1-D, would read as regression values)."""
    if not len(targets):
        return None
    classes, indices = np.unique(targets, return_inverse=True)
    fitting, broken = [], []
    for task in ("classification", "regression"):
        try:
            if task == "classification":
                check_loss_fits_task(loss, name, task, indices, len(classes))
            else:
                check_loss_fits_task(loss, name, task, np.asarray(targets, dtype=float), 0)
        except PluginContractError as error:  # in the other task's format, it may be the misfit
            broken.append(error)
            continue
        except (ExperimentError, ValueError, TypeError):
            continue
        fitting.append(task)
    if broken and not fitting:
        raise broken[0]
    return fitting[0] if len(fitting) == 1 else None


def check_storable_loss(loss: Any) -> None:
    """A study file records the loss by name, which a resume rebuilds; an object it
    cannot record failed with a message that named neither ``loss`` nor the way out."""
    if loss is not None and describe("loss", loss) is None:
        raise ExperimentError(
            "loss", f"a study file cannot keep a loss object ({type(loss).__name__}): give "
            "the loss by registry name or as a mapping with a 'name' key and its options "
            "(e.g. {'name': 'log-loss', 'eps': 1e-6}), or keep the study in memory"
        )
