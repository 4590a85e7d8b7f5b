"""Column layout of encoded configurations: index (one column per hyperparameter) or
one-hot (one column per category of each categorical hyperparameter).

Works on *index values*: each hyperparameter's ConfigSpace vector value scaled to
[0, 1] (categoricals: index / (size - 1)), NaN where inactive. Inactive columns are
filled per imputation rule; with one-hot, a ``default`` or fixed-value rule gives the
one-hot vector of that value and ``midpoint``/``lower``/``upper`` fill 0.5/0/1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import CategoricalHyperparameter, Hyperparameter

from ensembo.spaces import impute as imputation

ENCODINGS = ("index", "onehot")
_FLAT_RULES = {"midpoint": 0.5, "lower": 0.0, "upper": 1.0, "none": np.nan}


class ColumnLayout:
    def __init__(
        self, hyperparameters: list[Hyperparameter], rules: Mapping[str, Any], *, onehot: bool
    ):
        self.hyperparameters = hyperparameters
        self.widths = [
            hp.size if onehot and isinstance(hp, CategoricalHyperparameter) else 1
            for hp in hyperparameters
        ]
        self.starts = np.concatenate([[0], np.cumsum(self.widths)]).astype(int)
        self.width = int(self.starts[-1])
        self.fill = (
            np.concatenate(
                [
                    self._fill(hp, rules[hp.name], w)
                    for hp, w in zip(hyperparameters, self.widths, strict=False)
                ]
            )
            if hyperparameters
            else np.zeros(0)
        )

    @staticmethod
    def _fill(hp: Hyperparameter, rule: Any, width: int) -> np.ndarray:
        if width == 1:
            return np.array([imputation.imputed_value(hp, rule)])
        if isinstance(rule, str) and rule in _FLAT_RULES:
            return np.full(width, _FLAT_RULES[rule])
        value = hp.default_value if rule == "default" else rule["value"]
        onehot = np.zeros(width)
        onehot[int(hp.to_vector(value))] = 1.0
        return onehot

    def column_names(self) -> list[str]:
        names = []
        for hp, width in zip(self.hyperparameters, self.widths, strict=False):
            names.extend([hp.name] if width == 1 else [f"{hp.name}={c}" for c in hp.choices])
        return names

    def expand(self, index_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, active) of shape (n, width) from index values (n, d)."""
        n = index_values.shape[0]
        values = np.empty((n, self.width))
        active = np.empty((n, self.width), dtype=bool)
        for column, width in enumerate(self.widths):
            start = self.starts[column]
            block = slice(start, start + width)
            present = ~np.isnan(index_values[:, column])
            active[:, block] = present[:, None]
            if width == 1:
                values[:, start] = np.where(present, index_values[:, column], self.fill[start])
                continue
            spread = max(width - 1, 1)
            indices = np.rint(np.nan_to_num(index_values[:, column]) * spread).astype(int)
            onehot = np.eye(width)[indices]
            values[:, block] = np.where(present[:, None], onehot, self.fill[block])
        return values, active

    def collapse(self, values: np.ndarray) -> np.ndarray:
        """Index values (n, d) from encoded rows (n, width); one-hot blocks by argmax."""
        if values.shape[1] != self.width:
            raise ValueError(
                f"encoded rows have {values.shape[1]} columns, the layout {self.width}"
            )
        out = np.empty((values.shape[0], len(self.widths)))
        for column, width in enumerate(self.widths):
            start = self.starts[column]
            if width == 1:
                out[:, column] = values[:, start]
            else:
                block = np.nan_to_num(values[:, start : start + width], nan=-np.inf)
                out[:, column] = np.argmax(block, axis=1) / max(width - 1, 1)
        return out
