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

GRID_TOLERANCE = 1e-9
"""How far short of a whole number of steps ``(high - low) / q`` may fall and still
count as one: ``0.3 - 0.1`` is 0.19999999999999998, one step of 0.2."""


def step_of(hp: Hyperparameter) -> float | int | None:
    """``hp``'s step, a whole float on an integer as the int it stands for (ConfigSpace
    takes ``2.0`` for an integer's bounds; ``meta["q"]`` it does not read)."""
    q = (hp.meta or {}).get("q")
    return whole_step(q) if isinstance(hp, IntegerHyperparameter) else q


def whole_step(q: Any) -> Any:
    """A whole float (``2.0``) as the int it stands for; any other ``q`` as it is."""
    if isinstance(q, float | np.floating) and math.isfinite(q) and float(q).is_integer():
        return int(q)
    return q


def steps_in(low: float, high: float, q: float | int) -> int:
    """How many steps ``q`` from ``low`` stay within ``high`` (up to float rounding)."""
    return math.floor((high - low) / q + GRID_TOLERANCE)


def step_problem(q: Any, low: float, high: float, integer: bool) -> str | None:
    """Why ``q`` is no step of ``[low, high]``, for a space file's ``q`` and a
    ConfigSpace ``meta["q"]`` alike; ``None`` when it is one. A step fits when one step
    from ``low`` stays within ``high`` as the grid counts it (:func:`steps_in`: 0.2 on
    [0.1, 0.3] does); an integer's is a whole number (``2.0`` counts as 2)."""
    kind = "an integer" if integer else "a number"
    width = high - low
    shown = width if integer else float(f"{width:.12g}")  # 0.2, not 0.19999999999999998
    problem = f"a step is {kind} in (0, {shown}], got {q!r}"
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not math.isfinite(q):
        return problem
    if integer and not float(q).is_integer():
        return problem
    if not q > 0:
        return problem
    if q <= width:
        return None
    # a float within rounding (an integer's exactly: within the tolerance a step one past
    # a range wider than 1e9 would fit, and be drawn beyond high)
    return None if not integer and steps_in(low, high, q) >= 1 else problem


def last_point(low: float, high: float, q: float | int) -> float:
    """The highest grid point ``low + k * q`` not above ``high`` (``high`` itself is one
    only when it lies on the grid: sampling never draws it otherwise)."""
    return min(low + steps_in(low, high, q) * q, high)


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
    return grid_point(hp, int(rng.integers(steps_in(hp.lower, hp.upper, q) + 1)), q)


def grid_point(hp: Hyperparameter, k: int, q: float | int) -> Any:
    """The ``k``-th point of the grid ``low + k * q``, as a configuration holds it. The
    last point may pass ``high`` by the rounding :func:`steps_in` allows: it is ``high``
    (``0 + 3 * 0.1`` is 0.30000000000000004, which ``high: 0.3`` refuses)."""
    value = min(hp.lower + k * q, hp.upper)
    return int(round(value)) if isinstance(hp, IntegerHyperparameter) else float(
        as_stored(hp, value))


def grid_draws(hp: Hyperparameter, rng: np.random.Generator, size: int) -> np.ndarray | None:
    """``size`` values of :func:`grid_draw` at once (``None`` where it gives ``None``)."""
    q = step_of(hp)
    if q is None or getattr(hp, "log", False):
        return None
    points = steps_in(hp.lower, hp.upper, q) + 1
    return as_stored(hp, np.minimum(hp.lower + rng.integers(points, size=size) * q, hp.upper))


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
    return grid_problem(value, hp.lower, hp.upper, q)


def grid_problem(value: float, low: float, high: float, q: float | int) -> str | None:
    """Why ``value`` in ``[low, high]`` is not on the grid ``low + k * q`` (naming the
    nearest grid values), or ``None`` when it is, up to float rounding: the one test of
    a space file's default, a ConfigSpace default and a value a person gives."""
    if math.isclose(snap(value, low, high, q, False), value, rel_tol=1e-9, abs_tol=1e-12):
        return None
    below, above = _grid_neighbours(low, high, value, q)
    nearest = (
        f"the nearest grid value is {below:.12g}"
        if above is None
        else f"the nearest grid values are {below:.12g} and {above:.12g}"
    )
    return f"{value!r} is not on the grid {low} + k * {q}; {nearest}"


def _grid_neighbours(low: float, high: float, value: float, q: float | int) -> tuple[Any, Any]:
    """The grid points either side of ``value``; ``None`` above the last one (``high`` is
    not a grid point unless ``low + k * q`` reaches it: neither snapping nor sampling
    gives it)."""
    last = last_point(low, high, q)
    steps = (value - low) / q
    below = min(low + math.floor(steps) * q, last)
    above = low + math.ceil(steps) * q
    return below, (above if above <= last else None)
