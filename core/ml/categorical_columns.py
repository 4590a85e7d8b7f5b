"""Which columns the estimators treat as categorical, from what a user may write.

``categorical_features`` may be a boolean mask, column indices or the column names of
the DataFrame given to ``fit``; anything else is refused with an error naming the
parameter, since a float index would otherwise be truncated to another column.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ensembo.errors import ExperimentError


def categorical_mask(
    categorical_features: Any, n_features: int, feature_names: np.ndarray | None = None
) -> np.ndarray | None:
    """A boolean mask from a mask, column indices, or column names (``feature_names``,
    the DataFrame's columns). Anything else is refused: a float index would otherwise
    be truncated to another column."""
    if categorical_features is None:
        return None
    given = np.asarray(categorical_features, dtype=object)
    if given.ndim > 1:
        raise ExperimentError(
            "categorical_features", f"expected a list or a mask, got shape {given.shape}"
        )
    items = given.ravel().tolist()
    if items and all(isinstance(item, bool | np.bool_) for item in items):
        if len(items) != n_features:
            raise ExperimentError(
                "categorical_features", f"mask of length {len(items)} for {n_features} features"
            )
        return np.array(items, dtype=bool)
    mask = np.zeros(n_features, dtype=bool)
    mask[[_column_index(item, n_features, feature_names) for item in items]] = True
    return mask


def _column_index(item: Any, n_features: int, feature_names: np.ndarray | None) -> int:
    """The position of one categorical column, given by index or by name."""
    if isinstance(item, str):
        return _named_column(item, feature_names)
    if not isinstance(item, numbers.Integral) or isinstance(item, bool | np.bool_):
        raise ExperimentError(
            "categorical_features",
            f"expected integer column indices, column names or a boolean mask, got {item!r}",
        )
    if not 0 <= item < n_features:
        raise ExperimentError(
            "categorical_features", f"column index {item} outside 0..{n_features - 1}"
        )
    return int(item)


def _named_column(name: str, feature_names: np.ndarray | None) -> int:
    if feature_names is None:
        raise ExperimentError(
            "categorical_features",
            f"column name {name!r} needs X with column names (a DataFrame); this X has "
            "none: give column indices",
        )
    matches = np.flatnonzero(np.asarray(feature_names) == name)
    if not matches.size:
        columns = [str(column) for column in feature_names]
        shown = ", ".join(columns[:10]) + (", ..." if len(columns) > 10 else "")
        raise ExperimentError(
            "categorical_features", f"unknown column {name!r}; X's columns: {shown}"
        )
    return int(matches[0])
