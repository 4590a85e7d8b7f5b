"""Data no trial can learn from, refused before the budget is spent, and the Task's
errors said in the experiment file's terms (``data.validation``, ``data.task``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from ensembo.datasets import Dataset
from ensembo.errors import ExperimentError

if TYPE_CHECKING:
    from ensembo.ml.data_run import DataSettings

logger = logging.getLogger(__name__)

_TASK_KEYS = ("validation", "selection_split", "threads")  # Task's names of data: keys


def in_data_terms(
    error: ExperimentError, dataset: Dataset, settings: DataSettings
) -> ExperimentError:
    """The Task's error as the experiment file says it: its ``validation.folds`` is the
    file's ``data.validation``; a space that builds the other kind of model, when the
    task was inferred, says so (a target of two float values reads as regression)."""
    path, message = error.path, error.message
    if path.split(".")[0] in _TASK_KEYS:
        path = f"data.{path}"
    elif path == "space" and settings.task is None and "not a model for" in message:
        column = f"data.target {settings.target!r}" if settings.target else "the dataset"
        message += (
            f" (the task was inferred as {dataset.task} from {column}; if that is wrong, set "
            f"data.task: {'regression' if dataset.task == 'classification' else 'classification'})"
        )
    else:
        return error
    named = ExperimentError(path, message)
    for note in getattr(error, "__notes__", ()):
        named.add_note(note)
    return named


def check_features(dataset: Dataset, settings: DataSettings) -> None:
    """Infinite feature values, refused before the budget is spent: every trial failed
    with "Input X contains infinity" and named neither column nor row."""
    X = np.asarray(dataset.X, dtype=float)
    infinite = np.isinf(X)
    if not infinite.any():
        return
    columns = np.flatnonzero(infinite.any(axis=0))
    names = [dataset.feature_names[c] if c < len(dataset.feature_names) else str(c)
             for c in columns]
    first = int(columns[0])
    row = int(np.argmax(infinite[:, first]))
    shown = ", ".join(map(repr, names[:5])) + (", ..." if len(names) > 5 else "")
    raise ExperimentError(
        "data.dataset",
        f"{dataset.name}: {int(infinite.sum())} feature value(s) are infinite, in column(s) "
        f"{shown} (e.g. {X[row, first]} in column {names[0]!r}, row {row}); no model can "
        "learn from them: replace them or mark them missing (empty)",
    )


def _target_key(settings: DataSettings) -> str:
    """The key to fix a target problem: the column of a table, else the dataset."""
    return "data.dataset" if settings.target is None else "data.target"


def check_targets(dataset: Dataset, settings: DataSettings) -> None:
    """Targets no trial can learn from, refused before the budget is spent: every
    trial failed on an infinite regression target, and a single class scored 0.0."""
    if dataset.task == "regression":
        bad = ~np.isfinite(np.asarray(dataset.y, dtype=float))
        if bad.any():
            raise ExperimentError(
                _target_key(settings),
                f"{dataset.name}: {int(bad.sum())} of {bad.size} rows have a target that is "
                f"not a finite number (e.g. {float(dataset.y[bad][0])} in row "
                f"{int(np.argmax(bad))}); remove them or mark them missing",
            )
        return
    classes = np.unique(dataset.y)
    if classes.size < 2:
        raise ExperimentError(
            _target_key(settings),
            f"one class only ({classes.tolist()[0]!r} in all {len(dataset.y)} rows): a "
            "classifier has nothing to learn",
        )


def check_test_labels_seen(y_train: np.ndarray, y_test: np.ndarray) -> None:
    """A test label no model was trained on cannot be predicted or scored; it failed
    after every trial had run. Labels seen once are typical of a regression target."""
    unseen = np.setdiff1d(np.unique(y_test), np.unique(y_train))
    if unseen.size == 0:
        return
    shown = ", ".join(map(repr, unseen[:5].tolist())) + (", ..." if unseen.size > 5 else "")
    numeric = np.asarray(y_test).dtype.kind in "iuf"
    hint = (
        "is this a regression target? set data.task: regression"
        if numeric
        else "classes this rare cannot be both trained on and tested: remove or merge them"
    )
    raise ExperimentError(
        "data.task" if numeric else "data.test",
        f"{unseen.size} class label(s) of the test rows never occur in the training rows "
        f"({shown}); {hint}",
    )


_MANY_CLASSES = 50


def warn_if_classes_look_like_numbers(y: np.ndarray) -> None:
    """Many classes, most of one or two rows: likely a numeric target read as labels."""
    _, counts = np.unique(y, return_counts=True)
    if counts.size > _MANY_CLASSES and np.mean(counts <= 2) > 0.5:
        logger.warning(
            "classification with %d classes, %d of them of at most 2 rows: is this a "
            "regression target? set data.task: regression",
            counts.size, int(np.sum(counts <= 2)),
        )
