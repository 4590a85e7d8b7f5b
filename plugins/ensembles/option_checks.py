"""Checks of the strategies' options, so that a bad value is refused when the study is
built (naming the strategy and the option), not after trials were spent: a string size
failed in a comparison, ``post: "no"`` read as true, ``n_samples: 0`` gave no ensemble."""

from __future__ import annotations

import math
import numbers
from typing import Any


def whole(strategy: str, option: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{strategy}: {option} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def flag(strategy: str, option: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{strategy}: {option} must be true or false, got {value!r}")
    return value


def _finite(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and math.isfinite(value)
    )


def non_negative(strategy: str, option: str, value: Any) -> float:
    if not _finite(value) or value < 0:
        raise ValueError(f"{strategy}: {option} must be a finite number >= 0, got {value!r}")
    return float(value)


def positive(strategy: str, option: str, value: Any) -> float:
    if not _finite(value) or value <= 0:
        raise ValueError(f"{strategy}: {option} must be a finite number > 0, got {value!r}")
    return float(value)


def share(strategy: str, option: str, value: Any) -> float:
    """A fraction of a whole, more than none and at most all of it."""
    if not _finite(value) or not 0 < value <= 1:
        raise ValueError(f"{strategy}: {option} must be a number in (0, 1], got {value!r}")
    return float(value)
