"""What ConfigSpace can hold of a numeric range, checked before it is asked to (a space
file), or after it was (a ConfigSpace object).

ConfigSpace rounds float bounds to 13 decimal places (multiplying by 1e13) and encodes
integers as floats; a range it cannot hold came back as "has illegal settings", a NaN
default or an infinite bound, so each case is reported here by bound and reason.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import FloatHyperparameter, IntegerHyperparameter
from ConfigSpace.hyperparameters.hp_components import ROUND_PLACES

from ensembo.spaces.problems import Problems

LARGEST_STORABLE = np.finfo(float).max / 10**ROUND_PLACES
"""ConfigSpace rounds a float bound by multiplying by 1e13: above this it overflows."""


def _as_stored(value: float | int) -> float:
    """A float bound as ConfigSpace stores it: rounded to ``ROUND_PLACES`` (13) decimals
    (an integer bound beyond the float range becomes an infinity)."""
    try:
        value = float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return float(np.round(value, ROUND_PLACES))


def storable_float_bounds(low, high, log: bool, path: str, problems: Problems) -> bool:
    """Whether ConfigSpace can hold the float range [low, high] once it has rounded the
    bounds to 13 decimal places; what the rounding broke (low 1e-15 on a log scale
    becomes 0, 1e300 becomes inf) it refused as "has illegal settings" or a NaN default."""
    stored = {"low": _as_stored(low), "high": _as_stored(high)}
    lost = _overflowing_bounds({"low": low, "high": high}, stored, path, problems)
    if log and stored["low"] <= 0:
        _log_low_rounded_to_zero(low, high, path, problems)
        lost = True
    if not lost and stored["low"] >= stored["high"]:
        problems.add(
            path,
            f"float bounds are rounded to {ROUND_PLACES} decimal places, so [{low!r}, {high!r}] "
            f"becomes [{stored['low']!r}, {stored['high']!r}], an empty range; search a scaled "
            "quantity (the value times a power of ten) or the exponent instead",
        )
        lost = True
    return not lost


def _overflowing_bounds(written: dict, stored: dict, path: str, problems: Problems) -> bool:
    """Report each bound the rounding turns into an infinity; whether there was one."""
    overflowing = [key for key in stored if not math.isfinite(stored[key])]
    for key in overflowing:
        problems.add(
            f"{path}.{key}",
            f"{written[key]!r} is too large in magnitude: ConfigSpace rounds float bounds to "
            f"{ROUND_PLACES} decimal places, which overflows beyond ±{LARGEST_STORABLE:.6g}; "
            "narrow the range, or search the exponent (log10 of the value) instead",
        )
    return bool(overflowing)


def _log_low_rounded_to_zero(low, high, path: str, problems: Problems) -> None:
    problems.add(
        f"{path}.low",
        f"float bounds are rounded to {ROUND_PLACES} decimal places, so low {low!r} becomes "
        f"0, and a log scale needs a low that rounds to at least 1e-{ROUND_PLACES} (above "
        f"5e-14); search the exponent instead: a float in [{math.log10(low):.4g}, "
        f"{math.log10(high):.4g}], used as 10**x",
    )


LARGEST_EXACT_INTEGER = 2**53
"""ConfigSpace holds an integer hyperparameter in float vectors, which hold every integer
only up to 2**53: a bound of 2**53 + 1 was stored as 2**53, and one beyond int64 was
refused with numpy's "Python int too large to convert to C long"."""


def exact_integer_bounds(low: int, high: int, path: str, problems: Problems) -> bool:
    """Whether ConfigSpace can hold the integer range [low, high] exactly: each bound,
    and the range's width (its vectors divide by it: in [-2**53, 2**53] 1 became 0),
    within 2**53. What it cannot hold is reported."""
    advice = "narrow the range, or search a float on a log scale and round it"
    beyond = [(key, value) for key, value in (("low", low), ("high", high))
              if abs(value) > LARGEST_EXACT_INTEGER]
    for key, value in beyond:
        shown = f"{value:.4g}" if abs(value) > 10**18 else repr(value)
        problems.add(
            f"{path}.{key}",
            f"{shown} is beyond ±2**53 ({LARGEST_EXACT_INTEGER}), above which ConfigSpace's "
            f"float encoding cannot hold every integer; {advice}",
        )
    if not beyond and high - low > LARGEST_EXACT_INTEGER:
        problems.add(path, f"the range [{low}, {high}] is wider than 2**53, beyond which "
                     f"ConfigSpace's float encoding cannot hold every integer in it; {advice}")
        return False
    return not beyond


def held_range(hp: Any, problems: Problems) -> None:
    """Report the range of a built ConfigSpace hyperparameter that ConfigSpace does not
    hold as given. A float bound beyond :data:`LARGEST_STORABLE` it holds as an infinity:
    a study ran every trial at inf, then failed on the first encoding, "'scale' is active
    in it but has no value". An integer range beyond 2**53 it holds inexactly (see
    :func:`exact_integer_bounds`). A space file is refused earlier, by bound."""
    if isinstance(hp, IntegerHyperparameter):
        exact_integer_bounds(int(hp.lower), int(hp.upper), hp.name, problems)
    elif isinstance(hp, FloatHyperparameter) and not (
        math.isfinite(hp.lower) and math.isfinite(hp.upper)
    ):
        problems.add(
            hp.name,
            f"a bound is infinite ({hp.lower}, {hp.upper}): ConfigSpace rounds float "
            f"bounds to {ROUND_PLACES} decimal places, which overflows beyond "
            f"±{LARGEST_STORABLE:.6g}; narrow the range, or search the exponent (log10 "
            "of the value) instead",
        )
