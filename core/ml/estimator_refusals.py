"""What the estimators refuse before the search, in their parameters' words: a wrong
answer there would only show after the whole budget was spent."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ensembo import components
from ensembo.errors import ExperimentError
from ensembo.ml.selection import SELECTIONS


def single_class_error(classes: np.ndarray) -> ExperimentError:
    """Nothing to learn from one class: every trial would fail (as scikit-learn's
    estimator checks expect, the ValueError says "class")."""
    return ExperimentError(
        "y",
        f"classification needs at least 2 classes, y has only 1 class: {classes.tolist()[0]!r}",
    )


def check_fixed_validation(ensemble: Any, validation_targets: np.ndarray | None) -> None:
    """Refuse up front, in the estimators' words, an ensemble strategy that scores the
    trials' predictions when ``cv`` (a reshuffled holdout) gives no fixed validation set
    (the study's own error advises ``validation_targets=``, which ``fit`` sets)."""
    if validation_targets is not None:
        return
    if getattr(components.build("ensemble_strategy", ensemble), "needs_predictions", False):
        raise ExperimentError(
            "ensemble",
            f"ensemble {ensemble!r} is built from the trials' predictions on one validation "
            "set, but a reshuffled holdout (cv with reshuffle: true) draws new validation "
            "rows for every trial, so there is no fixed validation set: use reshuffle: false "
            "in cv, or ensemble='best'",
        )


def check_selection(selection: Any, selection_split: Any) -> None:
    """An unknown ``selection`` or a selection split without its rows would only fail
    after the whole search."""
    if not isinstance(selection, str) or selection not in SELECTIONS:
        raise ExperimentError(
            "selection", f"unknown selection {selection!r}; valid: {', '.join(SELECTIONS)}"
        )
    if selection_split is not None and (
        isinstance(selection_split, bool)
        or not isinstance(selection_split, numbers.Real)
        or not 0 < selection_split < 1
    ):
        raise ExperimentError(
            "selection_split",
            f"must be None or the fraction of rows to hold out, between 0 and 1 (exclusive), "
            f"got {selection_split!r}",
        )
    if selection == "selection-split" and selection_split is None:
        raise ExperimentError(
            "selection",
            "'selection-split' chooses by the loss on rows held out from the search: give "
            "selection_split=, the fraction of rows to hold out (e.g. 0.2)",
        )
