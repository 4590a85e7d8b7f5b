"""Small argument checks shared by the Python API and experiment files.

Each raises :class:`ExperimentError` whose path is the argument's name (the same word as
the experiment-file key), so a bad value reads the same from either entry point.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

from ensembo.errors import ExperimentError


def whole_number(name: str, value: Any, minimum: int) -> int:
    """``value`` as an ``int`` of at least ``minimum`` (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ExperimentError(name, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


def positive_seconds(name: str, value: Any) -> float:
    """``value`` as a positive, finite number of seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ExperimentError(name, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def one_of(name: str, value: Any, valid: Iterable[Any]) -> Any:
    valid = tuple(valid)
    if value not in valid:
        listing = ", ".join(str(v) for v in valid)
        raise ExperimentError(name, f"unknown value {value!r}; valid: {listing}")
    return value
