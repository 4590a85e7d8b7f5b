"""Whether a loss fits a task, checked before any trial is spent on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.errors import ExperimentError

DEFAULT_LOSS = {"classification": "zero-one", "regression": "mse"}


def check_loss_fits_task(
    loss: Any, name: Any, task: str, targets: np.ndarray, n_classes: int
) -> None:
    """Score a few perfect predictions in the task's format with ``loss`` (and combine
    them as ensembles do, when it can), so a loss for the other task (``mse`` on class
    probabilities, ``zero-one`` on values) is refused before the search instead of
    failing every trial.

    ``targets`` are class indices for classification. Losses declare no task; trying one
    on well-formed input is what tells."""
    sample = targets[:5]
    if task == "classification":
        predictions = np.eye(n_classes)[sample]  # (m, n_classes) class probabilities
        expected = "class probabilities of shape (m, n_classes)"
    else:
        predictions = sample.astype(float)
        expected = "predicted values of shape (m,)"
    try:
        loss(sample, predictions)
        contributions = getattr(loss, "contributions", None)
        if contributions is not None:
            contributions(predictions)
    except Exception as error:  # whatever the loss raises, the user must hear which loss
        suggestion = DEFAULT_LOSS[task]
        raise ExperimentError(
            "loss",
            f"loss {name!r} does not fit a {task} task, whose predictions are {expected}: "
            f"{error} (the {task} default is {suggestion!r})",
        ) from error
