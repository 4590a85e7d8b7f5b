"""A scrambled Sobol sequence: low discrepancy, so the first points cover the space
evenly instead of clumping as random draws do (the Spearmint/BoTorch default)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import qmc

from ensembo.plugins.initial_designs.unit_cube import configs_from_unit_points
from ensembo.spaces import Space


class SobolDesign:
    def configs(self, space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        if n <= 0:
            return []
        exponent = int(np.ceil(np.log2(n)))  # draw a power of two: Sobol's balance holds there
        points = qmc.Sobol(space.dimension, scramble=True, seed=rng).random_base2(exponent)[:n]
        return configs_from_unit_points(space, points, rng)
