"""A hyperparameter's values as users give them and as a study keeps them.

ConfigSpace accepts values ensembo must not (a boolean for a number, 4.0000000001 for an
integer) and returns numpy scalars and enum members where a study file needs plain
Python values; these functions sit between the two so :class:`~ensembo.spaces.space.Space`
can say, in words, what is wrong with a configuration.
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from ConfigSpace.exceptions import ActiveHyperparameterNotSetError, InactiveHyperparameterSetError
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    FloatHyperparameter,
    IntegerHyperparameter,
    NumericalHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.errors import SpaceError
from ensembo.spaces.quantize import as_stored, quantize


def plain(value: Any) -> Any:
    """Numpy scalars -> Python scalars, and the member of an ``IntEnum`` or ``StrEnum``
    (any enum that is also a number or a string) -> the plain int or str, so configs
    serialize and compare cleanly: a sampled configuration held the plain value, the
    default one (the ``default`` design's first trial) the member."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, enum.Enum):
        for kind in (int, float, str):
            if isinstance(value, kind):
                return kind.__str__(value) if kind is str else kind(value)
    return value


def plain_data(data: Any) -> Any:
    """``data`` with every numpy scalar a Python one, as a study file keeps it: choices
    made with ``np.arange`` were stored as numbers, and reopening the study put the
    definition through ``json``, which refused numpy's int64."""
    if isinstance(data, Mapping):
        return {key: plain_data(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [plain_data(value) for value in data]
    return plain(data)


def configuration_error(space: str, config: Mapping[str, Any], error: Exception) -> SpaceError:
    """ConfigSpace's complaint about ``config`` in one line, naming the hyperparameter."""
    if isinstance(error, ActiveHyperparameterNotSetError):
        problem = "is active in this configuration but has no value"
    elif isinstance(error, InactiveHyperparameterSetError):
        value = config.get(error.hyperparameter.name, error.value)  # as given, not round-tripped
        problem = f"has a value ({value!r}) but is not active in this configuration"
    else:
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        return SpaceError(space, f"invalid configuration {dict(config)}: {first_line}")
    return SpaceError(space, f"invalid configuration {dict(config)}: "
                             f"{error.hyperparameter.name!r} {problem}")


def stored_value(hp: Any, value: Any) -> Any:
    """``value`` on ``hp``'s grid, as a ``Configuration`` holds it (floats rounded)."""
    value = quantize(hp, value)
    if isinstance(hp, FloatHyperparameter) and not isinstance(value, bool):
        return float(as_stored(hp, value))
    return value


def whole(hp: Any, value: Any) -> Any:
    """A whole float given for an integer hyperparameter as the int it stands for (JSON
    and arithmetic give 2.0, and the objective's ``range(2.0)`` failed); any other value
    unchanged, for the legality checks to judge."""
    if (
        isinstance(hp, IntegerHyperparameter)
        and isinstance(value, numbers.Real)
        and not isinstance(value, bool | numbers.Integral)
        and math.isfinite(value)
        and float(value).is_integer()
    ):
        return int(value)
    return value


def wrong_kind_of_number(hp: Any, value: Any) -> str | None:
    """Why ``value`` is the wrong kind of number for ``hp``, which ConfigSpace accepts:
    a boolean as 0 or 1, or a fraction (4.0000000001) for an integer."""
    if isinstance(value, bool) and isinstance(hp, NumericalHyperparameter):
        return f"{value!r} is a boolean, not a number in [{hp.lower}, {hp.upper}]"
    if (
        isinstance(hp, IntegerHyperparameter)
        and isinstance(value, numbers.Real)
        and not isinstance(value, numbers.Integral)
    ):
        return f"{value!r} is not a whole number in [{hp.lower}, {hp.upper}]"
    return None


def illegal_value(hp: Any, value: Any) -> str | None:
    """Why ``value`` is not one ``hp`` takes, in words; ``None`` when it is legal."""
    problem = wrong_kind_of_number(hp, whole(hp, value))
    if problem:
        return problem
    try:
        if hp.legal_value(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(hp, CategoricalHyperparameter):
        return f"{value!r} is not one of {list(hp.choices)}"
    if isinstance(hp, OrdinalHyperparameter):
        return f"{value!r} is not one of {list(hp.sequence)}"
    if isinstance(hp, Constant):
        return f"{value!r} is not the constant {hp.value!r}"
    return f"{value!r} is not a number in [{hp.lower}, {hp.upper}]"
