"""Quantization of numeric hyperparameters (ConfigSpace 1.x dropped its ``q``).

The step is kept in ``meta["q"]``; values snap to ``low + k * q`` inside the bounds.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import Hyperparameter, IntegerHyperparameter
from ConfigSpace.hyperparameters.hp_components import ROUND_PLACES


def step_of(hp: Hyperparameter) -> float | int | None:
    return (hp.meta or {}).get("q")


def last_point(low: float, high: float, q: float | int) -> float:
    """The highest grid point ``low + k * q`` not above ``high`` (``high`` itself is one
    only when it lies on the grid: sampling never draws it otherwise)."""
    return min(low + math.floor((high - low) / q + 1e-9) * q, high)


def snap(value: float, low: float, high: float, q: float | int, integer: bool) -> Any:
    steps = round((value - low) / q)
    snapped = min(max(low + steps * q, low), last_point(low, high, q))
    return int(round(snapped)) if integer else float(snapped)


def quantize(hp: Hyperparameter, value: Any) -> Any:
    """``value`` snapped to ``hp``'s grid (unchanged when ``hp`` has no step)."""
    q = step_of(hp)
    if q is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value  # nothing to snap; validity is ConfigSpace's call
    integer = isinstance(value, numbers.Integral)
    return snap(value, hp.lower, hp.upper, q, integer)


def grid_draw(hp: Hyperparameter, rng: np.random.Generator) -> Any:
    """A value of ``hp`` drawn uniformly from its grid ``low + k * q``, or ``None`` when
    it has no step or a log scale (a log-uniform draw snapped to the grid is its prior).

    Snapping a uniform draw instead would give the two end points half the weight of
    the others, and integers more: rounding halves to even sent 2 of 13 integers in
    [0, 12] to 0 and 5 to 8 with ``q: 4``.
    """
    q = step_of(hp)
    if q is None or getattr(hp, "log", False):
        return None
    points = int(np.floor((hp.upper - hp.lower) / q + 1e-9)) + 1
    value = hp.lower + int(rng.integers(points)) * q
    return int(round(value)) if isinstance(hp, IntegerHyperparameter) else float(
        as_stored(hp, value))


def grid_draws(hp: Hyperparameter, rng: np.random.Generator, size: int) -> np.ndarray | None:
    """``size`` values of :func:`grid_draw` at once (``None`` where it gives ``None``)."""
    q = step_of(hp)
    if q is None or getattr(hp, "log", False):
        return None
    points = int(np.floor((hp.upper - hp.lower) / q + 1e-9)) + 1
    return as_stored(hp, hp.lower + rng.integers(points, size=size) * q)


def quantize_array(hp: Hyperparameter, values: np.ndarray) -> np.ndarray:
    """Values of ``hp`` snapped to its grid, elementwise (unchanged without a step)."""
    q = step_of(hp)
    if q is None:
        return values
    return as_stored(hp, np.clip(
        hp.lower + np.round((np.asarray(values, dtype=float) - hp.lower) / q) * q,
        hp.lower,
        last_point(hp.lower, hp.upper, q),
    ))


def as_stored(hp: Hyperparameter, values: Any) -> np.ndarray:
    """Float values rounded as a ``Configuration`` stores them. Grid values go through
    it too: ``0 + 3 * 0.2`` is 0.6000000000000001, whose vector a forbidden clause on 0.6
    did not match, and the configuration then stored 0.6 (169 forbidden draws in 4,000)."""
    if isinstance(hp, IntegerHyperparameter):
        return values
    return np.round(np.asarray(values, dtype=float), ROUND_PLACES)


def snap_vectors(hyperparameters: list[Hyperparameter], vectors: np.ndarray) -> np.ndarray:
    """Copy of ConfigSpace ``vectors`` (n, d) with stepped values on their grids (NaN,
    an inactive value, stays NaN): conditions must read the value that will be run."""
    snapped = np.array(vectors, dtype=float, ndmin=2)
    for column, hp in enumerate(hyperparameters):
        present = ~np.isnan(snapped[:, column])
        if step_of(hp) is not None and present.any():
            values = quantize_array(hp, hp.to_value(snapped[present, column]))
            snapped[present, column] = hp.to_vector(values)
    return snapped


def off_grid(hp: Hyperparameter, value: Any) -> str | None:
    """Why ``value`` is not on ``hp``'s grid, naming the nearest grid values; ``None``
    when it is (or ``hp`` has no step, or ``value`` is no number: ConfigSpace's call).

    Values a person gives are refused rather than snapped: a result measured at an
    off-grid value would be recorded against another one.
    """
    q = step_of(hp)
    if q is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if not hp.lower <= value <= hp.upper:
        return None  # out of range: the range check says so
    if math.isclose(quantize(hp, value), value, rel_tol=1e-9, abs_tol=1e-12):
        return None
    below, above = _grid_neighbours(hp, value, q)
    nearest = (
        f"the nearest grid value is {below:.12g}"
        if above is None
        else f"the nearest grid values are {below:.12g} and {above:.12g}"
    )
    return f"{value!r} is not on the grid {hp.lower} + k * {q}; {nearest}"


def _grid_neighbours(hp: Hyperparameter, value: float, q: float | int) -> tuple[Any, Any]:
    """The grid points either side of ``value``; ``None`` above the last one (``high`` is
    not a grid point unless ``low + k * q`` reaches it: neither snapping nor sampling
    gives it)."""
    last = last_point(hp.lower, hp.upper, q)
    steps = (value - hp.lower) / q
    below = min(hp.lower + math.floor(steps) * q, last)
    above = hp.lower + math.ceil(steps) * q
    return below, (above if above <= last else None)
