"""Vector <-> integer for many ``UniformIntegerHyperparameter`` columns in one call.

ConfigSpace converts one hyperparameter at a time; on a handful of rows a call is
almost all overhead, and the integer moves of a local search make three of them per
integer column per step. :class:`IntegerScale` does the same arithmetic as ConfigSpace
1.x's ``UnitScaler`` (the operations in the same order, so the floats are the same bit
for bit) with one bound per column. ``tests/plugins/acquisition_optimizers/
test_one_exchange_moves.py`` holds it to ConfigSpace's own results.
"""

from __future__ import annotations

import numpy as np
from ConfigSpace.hyperparameters import UniformIntegerHyperparameter
from ConfigSpace.hyperparameters.hp_components import UnitScaler


def scalable(hp) -> bool:
    """Whether ``hp`` converts through a plain ``UnitScaler`` (uniform integers do)."""
    return isinstance(hp, UniformIntegerHyperparameter) and type(hp._transformer) is UnitScaler


class IntegerScale:
    """One (lower, upper, log) per column; arrays are (columns, ...)."""

    def __init__(self, hyperparameters: list):
        lower = np.array([np.float64(hp.lower) for hp in hyperparameters])
        upper = np.array([np.float64(hp.upper) for hp in hyperparameters])
        self.log = np.array([hp.log for hp in hyperparameters], dtype=bool)
        # UnitScaler scales a log range between np.log of its float bounds.
        self.low, self.high = lower, upper
        self.low[self.log], self.high[self.log] = np.log(lower[self.log]), np.log(upper[self.log])
        self.any_log = bool(self.log.any())

    def to_value(self, vector: np.ndarray) -> np.ndarray:
        """The integers (as floats) of ``vector`` (columns, n), rounded half to even."""
        shape = (-1,) + (1,) * (vector.ndim - 1)
        low, high = self.low.reshape(shape), self.high.reshape(shape)
        scaled = vector * (high - low) + low
        if self.any_log:
            scaled[self.log] = np.exp(scaled[self.log])
        return scaled.round().astype(np.int64).astype(float)

    def to_vector(self, values: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The vectors of integer ``values`` (flat), each of the column ``columns`` says."""
        low, high = self.low[columns], self.high[columns]
        if self.any_log:
            log = self.log[columns]
            values = values.copy()
            values[log] = np.log(values[log])
        return (values - low) / (high - low)
