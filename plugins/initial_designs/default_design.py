"""The space's default configuration first, then random ones.

Defaults usually encode a practitioner's prior (e.g. sklearn's defaults), so spending
the first evaluation on them is cheap insurance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensembo.spaces import Space


class DefaultDesign:
    def configs(self, space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        if n <= 0:
            return []
        return [space.default(), *space.sample(n - 1, rng)]
