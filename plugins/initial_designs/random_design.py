"""Configurations drawn from the space's prior — the baseline design."""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.spaces import Space


class RandomDesign:
    def configs(self, space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        return space.sample(n, rng)
