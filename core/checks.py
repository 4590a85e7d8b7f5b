"""Small argument checks shared by the Python API and experiment files.

The functions raise :class:`ExperimentError` whose path is the argument's name (the same
word as the experiment-file key), so a bad value reads the same from either entry point.
The ``is_*`` validators make the same checks for attrs settings classes, whose builders
name the key.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from ensembo.errors import ExperimentError


def whole_number(name: str, value: Any, minimum: int) -> int:
    """``value`` as an ``int`` of at least ``minimum`` (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ExperimentError(name, f"must be an integer >= {minimum}, got {value!r}")
    return int(value)


MAX_LEARNER_SEED = 2**32 - 1
"""scikit-learn's ``random_state`` is below 2**32; a seed that becomes one must be too."""


def learner_seed(name: str, value: Any, where: str) -> int:
    """A seed that becomes scikit-learn's ``random_state``: a larger one failed every
    trial, or escaped as scikit-learn's own error naming ``random_state``."""
    seed = whole_number(name, value, 0)
    if seed > MAX_LEARNER_SEED:
        raise ExperimentError(
            name, f"must be at most {MAX_LEARNER_SEED} (2**32 - 1) {where}, where it seeds "
            f"scikit-learn's random_state; got {seed}"
        )
    return seed


def positive_seconds(name: str, value: Any) -> float:
    """``value`` as a positive, finite number of seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ExperimentError(
            name, f"must be a finite positive number of seconds, got {value!r}"
        )
    return float(value)


def exception_classes(name: str, value: Any) -> tuple[type[BaseException], ...]:
    """``value`` (an exception class, or a tuple, list or other iterable of them) as the
    tuple ``isinstance`` takes. A list (Optuna's style) passed unchecked, and the run
    crashed at the objective's first error with ``isinstance``'s own TypeError."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return (value,)
    if value is None or isinstance(value, str | bytes | type) or not isinstance(value, Iterable):
        raise ExperimentError(
            name, f"must be an exception class or a tuple of them (() catches nothing), "
            f"got {value!r}"
        )
    classes = tuple(value)
    wrong = [c for c in classes if not (isinstance(c, type) and issubclass(c, BaseException))]
    if wrong:
        raise ExperimentError(
            name, f"must hold exception classes only; {', '.join(map(repr, wrong))} "
            f"{'is' if len(wrong) == 1 else 'are'} not one"
        )
    return classes


def mapping(name: str, value: Any) -> dict[str, Any]:
    """``value`` (``None`` passes, as empty) as a new dict; a list said only
    "cannot convert dictionary update sequence element #0", naming no argument."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ExperimentError(
            name, f"must be a mapping (a dict of names to values), got {type(value).__name__}: "
            f"{value!r}"
        )
    return dict(value)


def one_of(name: str, value: Any, valid: Iterable[Any]) -> Any:
    valid = tuple(valid)
    if value not in valid:
        listing = ", ".join(str(v) for v in valid)
        raise ExperimentError(name, f"unknown value {value!r}; valid: {listing}")
    return value


def one_per_example(name: str, value: Any) -> np.ndarray | None:
    """``value`` (``None`` passes) as a non-empty 1-D array, one entry per example.

    A column (m, 1) (``df[["y"]]``, ``y.reshape(-1, 1)``) was accepted as validation
    targets, then every trial was stored and every tell failed with a broadcast error.
    """
    if value is None:
        return None
    array = np.asarray(value)
    if array.ndim != 1:
        raise ExperimentError(
            name,
            f"must be 1-D, one entry per example, of shape (m,), got shape {array.shape}; "
            "pass a 1-D array (y.ravel(), or the column df['y'] rather than df[['y']])",
        )
    if not len(array):
        raise ExperimentError(name, "holds no examples; pass one entry per example")
    return array


# --- the same checks as attrs validators, for settings classes ----------------------


def is_bool(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """A switch given as text (``reshuffle: 'no'``) would be truthy: refuse it."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"true or false, got {value!r}")


def is_whole_number(minimum: int) -> Any:
    """``folds: three`` or ``folds: 2.5`` said "'>=' not supported ..." or split oddly."""

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, numbers.Integral) or isinstance(value, bool | np.bool_):
            raise TypeError(f"a whole number >= {minimum}, got {value!r}")
        if value < minimum:
            raise ValueError(f"a whole number >= {minimum}, got {value!r}")

    return check


def is_fraction(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """A number strictly between 0 and 1 (``True`` is no fraction, though Python
    counts it as 1)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool | np.bool_):
        raise TypeError(f"a fraction between 0 and 1 (exclusive), got {value!r}")
    if not 0.0 < value < 1.0:
        raise ValueError(f"a fraction between 0 and 1 (exclusive), got {value!r}")
