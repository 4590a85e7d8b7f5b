"""Configurations from points of the unit cube, one coordinate per hyperparameter.

Space-filling designs (Sobol, Latin hypercube) are built in [0, 1]^d. A coordinate
becomes a value through ConfigSpace's own vector scale (log-aware for numeric
hyperparameters) and, for categorical and ordinal ones, by cutting [0, 1] into equal
bins, one per value. Hyperparameters whose conditions fail are then dropped; a point
hitting a forbidden clause is replaced by a draw from the prior.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import CategoricalHyperparameter, Constant, OrdinalHyperparameter
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo.spaces import Space


def _value(hp, coordinate: float) -> Any:
    if isinstance(hp, Constant):
        return hp.value
    if isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
        index = min(int(coordinate * hp.size), hp.size - 1)
        return hp.to_value(np.float64(index))
    return hp.to_value(np.float64(coordinate))


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
        except Exception:  # a forbidden combination: fall back on the prior
            configs.extend(space.sample(1, rng))
    return configs
