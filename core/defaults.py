"""Which plugins a study uses when the user does not say.

Kept in one place so the choice is easy to read and to change: GP for small
continuous spaces, the conditional GP for tree spaces, gradient-based acquisition
optimization for differentiable surrogates and local search otherwise.
"""

from __future__ import annotations

from typing import Any

from ensembo.protocols import DifferentiableSurrogate
from ensembo.spaces import Space

AUTO = "auto"


def default_surrogate(space: Space) -> str:
    return "gp-cond" if space.is_conditional else "gp"


def default_acquisition_optimizer(surrogate: Any) -> str:
    return "lbfgs" if isinstance(surrogate, DifferentiableSurrogate) else "local-search"


def default_initial_design() -> str:
    """Sobol: the first evaluations cover the space evenly instead of clumping."""
    return "sobol"


def default_n_initial(space: Space) -> int:
    """Enough points to fit a first model: one per dimension plus one, within [5, 20]."""
    return min(max(space.dimension + 1, 5), 20)
