"""Quantization of numeric hyperparameters (ConfigSpace 1.x dropped its ``q``).

The step is kept in ``meta["q"]``; values snap to ``low + k * q`` inside the bounds.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import Hyperparameter


def step_of(hp: Hyperparameter) -> float | int | None:
    return (hp.meta or {}).get("q")


def snap(value: float, low: float, high: float, q: float | int, integer: bool) -> Any:
    steps = round((value - low) / q)
    snapped = min(max(low + steps * q, low), high)
    return int(round(snapped)) if integer else float(snapped)


def quantize(hp: Hyperparameter, value: Any) -> Any:
    """``value`` snapped to ``hp``'s grid (unchanged when ``hp`` has no step)."""
    q = step_of(hp)
    if q is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value  # nothing to snap; validity is ConfigSpace's call
    integer = isinstance(value, numbers.Integral)
    return snap(value, hp.lower, hp.upper, q, integer)


def quantize_array(hp: Hyperparameter, values: np.ndarray) -> np.ndarray:
    """Values of ``hp`` snapped to its grid, elementwise (unchanged without a step)."""
    q = step_of(hp)
    if q is None:
        return values
    return np.clip(
        hp.lower + np.round((np.asarray(values, dtype=float) - hp.lower) / q) * q,
        hp.lower,
        hp.upper,
    )
