"""Text and ``category`` columns of a DataFrame as integer codes, for the estimators.

A pandas DataFrame with string or ``category`` columns, the common input of a CASH
search, cannot pass scikit-learn's ``validate_data``. Each such column becomes the index
of its value among the levels seen in ``fit`` (sorted), NaN where the value is missing
(empty or blank, ``?``, None, NaN: :func:`ensembo.datasets.cell_text`) or was not seen,
which the spaces' imputation step fills; the column is then a categorical feature.
``data:`` experiments read tables the same way, by the same rule
(:func:`ensembo.datasets.from_frame`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from typing import Any

import attrs
import numpy as np

from ensembo.datasets import cell_text as _text
from ensembo.datasets import is_missing_value as _missing
from ensembo.errors import ExperimentError


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _is_text(column: Any) -> bool:
    """A ``category`` or string column; an object column when some value is text or no
    number. Numbers stored as objects stay numeric, as ``validate_data`` reads them;
    text that looks like a number ("02139", a zip code) is text, as the guide says, so
    its leading zeros are kept and a new value at predict is unseen, not a crash."""
    if str(column.dtype) == "category" or column.dtype.kind in "US":
        return True
    if column.dtype.kind != "O":
        return False
    return any(
        isinstance(v, str | bytes) or not _is_number(v) for v in column if not _missing(v)
    )


def check_unique_columns(X: Any) -> None:
    """Refuse a DataFrame that repeats a column name: ``X[name]`` is then a DataFrame of
    every column so named, and neither the text columns nor ``feature_names_in_`` can
    tell which one a name means."""
    repeated = [name for name, count in Counter(X.columns).items() if count > 1]
    if repeated:
        raise ExperimentError(
            "X",
            f"column names must be unique, X repeats {', '.join(map(repr, repeated))}: "
            "rename or drop the repeated columns",
        )


@attrs.frozen
class TextColumns:
    """The text columns of a fit and their levels, to encode the same way at predict."""

    levels: Mapping[Hashable, tuple[str, ...]]
    positions: tuple[int, ...]  # of the text columns among the fit's columns

    @classmethod
    def learn(cls, X: Any) -> TextColumns | None:
        """The text columns of ``X``; None when it is no DataFrame or has none."""
        if not hasattr(X, "columns") or not hasattr(X, "dtypes"):
            return None
        check_unique_columns(X)
        positions = [i for i, column in enumerate(X.columns) if _is_text(X[column])]
        if not positions:
            return None
        columns = [X.columns[i] for i in positions]
        levels = {
            column: tuple(sorted({t for t in map(_text, X[column]) if t is not None}))
            for column in columns
        }
        return cls(levels, tuple(positions))

    def encode(self, X: Any) -> Any:
        """``X`` with each known text column replaced by its codes (a column that is
        missing is left for ``validate_data`` to name). Only a DataFrame names them: an
        array is refused, since numpy would fail to read the text as numbers."""
        if not hasattr(X, "columns"):
            names = ", ".join(map(str, self.levels))
            raise ExperimentError(
                "X",
                f"this model was fitted on a DataFrame whose text columns ({names}) it "
                f"encodes; pass a DataFrame with those columns, not {type(X).__name__}",
            )
        check_unique_columns(X)
        encoded = X.copy()
        for column, levels in self.levels.items():
            if column in encoded.columns:
                index = {level: float(i) for i, level in enumerate(levels)}
                encoded[column] = np.array(
                    [_code(index, v) for v in X[column]], dtype=float
                )
        return encoded

    def mask(self, n_features: int) -> np.ndarray:
        """Which of the fit's ``n_features`` columns are text columns."""
        mask = np.zeros(n_features, dtype=bool)
        mask[list(self.positions)] = True
        return mask


def _code(index: Mapping[str, float], value: Any) -> float:
    """``value``'s code among a fit's levels; NaN when missing or unseen. A level the fit
    stored comes first: estimators pickled before ``?`` counted as missing kept it as a
    level, and must encode it as they were fitted."""
    if isinstance(value, str) and value.strip() in index:
        return index[value.strip()]
    text = _text(value)  # a missing cell's None is no level: NaN
    return np.nan if text is None else index.get(text, np.nan)
