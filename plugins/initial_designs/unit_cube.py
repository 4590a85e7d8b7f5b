"""Configurations from points of the unit cube, one coordinate per hyperparameter.

Space-filling designs (Sobol, Latin hypercube) are built in [0, 1]^d. A coordinate
becomes a value so that a uniform coordinate gives the space's own prior:

- a continuous float goes through ConfigSpace's vector scale (log-aware);
- a categorical or ordinal value, an integer and a point of a step grid
  (``low + k * q``) each own an equal slice of [0, 1], as ``grid_draw`` samples them;
  rounding ConfigSpace's scale instead gives the two end values half a slice (an
  integer in 0..2 got 256, 512 and 256 of 1024 Sobol points);
- a log-scaled integer is drawn as ConfigSpace samples it: log-uniform over
  ``[low, high]``, then cut into one equal linear bin per integer;
- a log-scaled stepped value is the log-scaled draw snapped onto its grid, as the
  space snaps its samples.

Hyperparameters whose conditions fail are then dropped; a point hitting a forbidden
clause is replaced by a draw from the prior (any other refusal too, with a warning: a
silent fallback once turned most of a design on ``q: 0.1`` grids into prior draws).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from ConfigSpace.exceptions import ForbiddenValueError
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    OrdinalHyperparameter,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo.spaces import Space
from ensembo.spaces.quantize import grid_point, quantize, step_of, steps_in

logger = logging.getLogger(__name__)


def _slice(coordinate: float, count: int) -> int:
    """Which of ``count`` equal slices of [0, 1] holds ``coordinate``."""
    return min(int(coordinate * count), count - 1)


def _on_grid(hp, coordinate: float) -> Any:
    """A point of the linear grid ``low + k * q`` (integers: ``q = 1``), each equally likely."""
    step = step_of(hp) or 1
    return grid_point(hp, _slice(coordinate, steps_in(hp.lower, hp.upper, step) + 1), step)


def _log_integer(hp, coordinate: float) -> int:
    """ConfigSpace's prior of a log-scaled integer: log-uniform over [low, high], then
    one equal linear bin per integer (``ConfigSpace.functional.quantize_log``)."""
    low, high = hp.lower, hp.upper
    if high == low:
        return int(low)
    value = math.exp(math.log(low) + coordinate * (math.log(high) - math.log(low)))
    count = high - low + 1
    return int(low + _slice((value - low) / (high - low), count))


def _numeric(hp, coordinate: float) -> Any:
    if not hp.log:
        return _on_grid(hp, coordinate)
    if isinstance(hp, UniformIntegerHyperparameter):
        return quantize(hp, _log_integer(hp, coordinate))
    return quantize(hp, float(hp.to_value(np.float64(coordinate))))


def _value(hp, coordinate: float) -> Any:
    if isinstance(hp, Constant):
        return hp.value
    if isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
        return hp.to_value(np.float64(_slice(coordinate, hp.size)))
    stepped = step_of(hp) is not None
    if isinstance(hp, UniformIntegerHyperparameter) or (
        isinstance(hp, UniformFloatHyperparameter) and stepped
    ):
        return _numeric(hp, coordinate)
    return hp.to_value(np.float64(coordinate))  # continuous floats, other distributions


def configs_from_unit_points(
    space: Space, points: np.ndarray, rng: np.random.Generator
) -> list[dict[str, Any]]:
    hyperparameters = [space.configspace[name] for name in space.names]
    configs = []
    for point in np.atleast_2d(points):
        assignment = {
            hp.name: _value(hp, float(u)) for hp, u in zip(hyperparameters, point, strict=True)
        }
        try:
            configuration = deactivate_inactive_hyperparameters(assignment, space.configspace)
            configuration.check_valid_configuration()
            configs.append(space.validate(dict(configuration)))
        except ForbiddenValueError:  # a forbidden combination: fall back on the prior
            configs.extend(space.sample(1, rng))
        except Exception as error:  # a design point the space refuses: a bug here, said
            logger.warning("initial design: point %s gave a configuration the space refuses "
                           "(%s); a prior draw replaces it", assignment, error)
            configs.extend(space.sample(1, rng))
    return configs
