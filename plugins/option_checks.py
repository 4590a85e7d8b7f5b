"""Checks of the built-in plugins' options, so that a bad value is refused when the
study is built (naming the plugin and the option), not after trials were spent: a
string size failed in a comparison, ``post: "no"`` read as true, ``n_samples: 0`` gave
no ensemble.

Each check takes the plugin's name, the option's name and the value, and returns the
value as the type it stands for. :func:`attrs_validator` turns one into a validator of
an attrs settings class, naming the field.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np


def whole(plugin: str, option: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{plugin}: {option} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def sobol_size(plugin: str, option: str, value: Any) -> int:
    """0 or a power of two: a Sobol set of another size loses its balance, and SciPy
    warned so at every ask."""
    value = whole(plugin, option, value, 0)
    if value & (value - 1):
        below = 1 << (value.bit_length() - 1)
        raise ValueError(f"{plugin}: {option} must be 0 or a power of two (a Sobol set of "
                         f"another size is unbalanced), got {value}; {below} or {2 * below} "
                         "would do")
    return value


def flag(plugin: str, option: str, value: Any) -> bool:
    """``True`` or ``False``, NumPy's included (``"false"`` would read as true)."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{plugin}: {option} must be true or false, got {value!r}")
    return bool(value)


def _finite(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and math.isfinite(value)
    )


def non_negative(plugin: str, option: str, value: Any) -> float:
    if not _finite(value) or value < 0:
        raise ValueError(f"{plugin}: {option} must be a finite number >= 0, got {value!r}")
    return float(value)


def positive(plugin: str, option: str, value: Any) -> float:
    if not _finite(value) or value <= 0:
        raise ValueError(f"{plugin}: {option} must be a finite number > 0, got {value!r}")
    return float(value)


def share(plugin: str, option: str, value: Any) -> float:
    """A fraction of a whole, more than none and at most all of it."""
    if not _finite(value) or not 0 < value <= 1:
        raise ValueError(f"{plugin}: {option} must be a number in (0, 1], got {value!r}")
    return float(value)


def fraction(plugin: str, option: str, value: Any) -> float:
    """A share strictly between none and all: a number in (0, 1)."""
    if not _finite(value) or not 0 < value < 1:
        raise ValueError(f"{plugin}: {option} must be a number in (0, 1), got {value!r}")
    return float(value)


def probability(plugin: str, option: str, value: Any) -> float:
    """A share that may also be none: a number in [0, 1] (a probability)."""
    if not _finite(value) or not 0 <= value <= 1:
        raise ValueError(f"{plugin}: {option} must be a number in [0, 1], got {value!r}")
    return float(value)


def attrs_validator(plugin: str, check: Callable[..., Any], *args: Any) -> Any:
    """``check`` (one of the above) as an attrs validator of ``plugin``'s settings:
    ``attrs.field(validator=attrs_validator("rf", whole, 1))``."""

    def validate(instance: Any, attribute: Any, value: Any) -> None:
        check(plugin, attribute.name, value, *args)

    return validate
