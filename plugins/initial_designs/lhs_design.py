"""A Latin hypercube: every hyperparameter's range is cut into ``n`` strata and each
stratum is used exactly once, so every one-dimensional margin is evenly covered."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import qmc

from ensembo.plugins.initial_designs.unit_cube import configs_from_unit_points
from ensembo.spaces import Space


class LatinHypercubeDesign:
    def configs(self, space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        if n <= 0:
            return []
        points = qmc.LatinHypercube(space.dimension, seed=rng).random(n)
        return configs_from_unit_points(space, points, rng)
