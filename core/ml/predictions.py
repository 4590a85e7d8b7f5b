"""Per-example predictions in the one format trials store and ensembles combine.

Classification: class probabilities of shape (n, n_classes), columns in the order of
the task's ``classes`` (``np.unique`` of the training labels). A model without
``predict_proba`` contributes the one-hot encoding of its labels. Regression: values of
shape (n,). Anything else — NaN, infinities, wrong shapes, labels the task has never
seen — is garbage and raises :class:`InvalidPredictionError`, which fails the trial.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.errors import EnsemboError


class InvalidPredictionError(EnsemboError, ValueError):
    """A fitted model predicted something unusable (NaN, wrong shape, unknown labels)."""


def _finite(values: np.ndarray, model: Any) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        bad = int(np.sum(~np.isfinite(values)))
        raise InvalidPredictionError(f"{type(model).__name__} predicted {bad} non-finite values")
    return values


def one_hot(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Indicator matrix (n, n_classes); every label must be one of ``classes``."""
    labels = np.asarray(labels)
    matches = labels[:, None] == classes[None, :]
    unknown = ~matches.any(axis=1)
    if unknown.any():
        raise InvalidPredictionError(
            f"predicted labels {sorted(set(labels[unknown].tolist()))[:5]} are not among "
            f"the training classes {classes.tolist()}"
        )
    return matches.astype(float)


def class_probabilities(model: Any, X: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Probabilities (n, len(classes)) of ``model`` on ``X``, aligned to ``classes``."""
    n = len(X)
    if not hasattr(model, "predict_proba"):
        labels = np.asarray(model.predict(X))
        if labels.shape != (n,):
            raise InvalidPredictionError(
                f"{type(model).__name__}.predict returned shape {labels.shape}, expected ({n},)"
            )
        return one_hot(labels, classes)
    raw = _finite(np.asarray(model.predict_proba(X), dtype=float), model)
    model_classes = np.asarray(getattr(model, "classes_", classes))
    if raw.shape != (n, len(model_classes)):
        raise InvalidPredictionError(
            f"{type(model).__name__}.predict_proba returned shape {raw.shape}, "
            f"expected ({n}, {len(model_classes)})"
        )
    if len(model_classes) == len(classes) and np.array_equal(model_classes, classes):
        return raw
    # A fold's training part may miss a rare class: map the model's columns onto ours.
    positions = np.searchsorted(classes, model_classes)
    if np.any(positions >= len(classes)) or not np.array_equal(
        classes[np.minimum(positions, len(classes) - 1)], model_classes
    ):
        raise InvalidPredictionError(
            f"{type(model).__name__} knows classes {model_classes.tolist()}, "
            f"not a subset of the training classes {classes.tolist()}"
        )
    aligned = np.zeros((n, len(classes)))
    aligned[:, positions] = raw
    return aligned


def regression_values(model: Any, X: np.ndarray) -> np.ndarray:
    """Predictions (n,) of a regressor on ``X``."""
    values = np.asarray(model.predict(X), dtype=float)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.shape != (len(X),):
        raise InvalidPredictionError(
            f"{type(model).__name__}.predict returned shape {values.shape}, expected ({len(X)},)"
        )
    return _finite(values, model)


def predict_examples(model: Any, X: np.ndarray, classes: np.ndarray | None) -> np.ndarray:
    """Probabilities when ``classes`` is given (classification), else values."""
    if classes is None:
        return regression_values(model, X)
    return class_probabilities(model, X, classes)
