"""Prior sampling of spaces with stepped (``q``) hyperparameters.

Each candidate is drawn whole (inactive values included), its stepped values put on
their grids, and only then are conditions and forbidden clauses applied. Drawing first
and snapping afterwards left children that the snapped value activates without a value,
and they fell back to their default (a point mass at the default). Spaces without a
step never come here: their draws stay ConfigSpace's, draw for draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import Configuration

from ensembo.spaces.activity import deactivate
from ensembo.spaces.quantize import grid_draws, quantize_array, step_of
from ensembo.spaces.sampling import CANDIDATES_PER_CONFIG, MAX_CANDIDATES, _candidates

if TYPE_CHECKING:
    from ensembo.spaces.space import Space


def sample_on_grid(space: Space, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """``n`` allowed configurations of ``space`` with stepped values on their grids.

    Gives up, as unstepped sampling does, after ``MAX_CANDIDATES`` plus
    ``CANDIDATES_PER_CONFIG`` per configuration asked, naming the forbidden clauses.
    """
    budget = MAX_CANDIDATES + CANDIDATES_PER_CONFIG * n
    accepted: list[np.ndarray] = []
    found = drawn = 0
    while found < n:
        if drawn >= budget:
            raise space._forbidden_everywhere(n)
        size = min(max(n - found, drawn), budget - drawn)  # double while clauses reject
        drawn += size
        rows = allowed_rows(space, grid_candidates(space, size, rng))
        accepted.append(rows)
        found += len(rows)
    return [configuration_of(space, row) for row in np.concatenate(accepted)[:n]]


def grid_candidates(space: Space, size: int, rng: np.random.Generator) -> np.ndarray:
    """(size, d) prior vectors, every value drawn, stepped ones on their grids."""
    matrix = _candidates(space.configspace, size)
    for row, hp in enumerate(space.configspace.values()):
        if step_of(hp) is None:
            continue
        values = grid_draws(hp, rng, size)
        if values is None:  # a log scale: the snapped log-uniform draw is its prior
            values = quantize_array(hp, hp.to_value(matrix[row]))
        matrix[row] = hp.to_vector(values)
    return matrix.T


def allowed_rows(space: Space, vectors: np.ndarray) -> np.ndarray:
    """``vectors`` with inactive values as NaN, without those a forbidden clause rejects."""
    raw = deactivate(space.configspace, vectors)
    return raw[~space._forbidden_rows(raw)]


def configuration_of(space: Space, vector: np.ndarray) -> dict[str, Any]:
    """The configuration of an allowed ``vector``, stepped values stored as validating
    stores them (so ``space.validate(config) == config``)."""
    config = space._to_dict(Configuration(space.configspace, vector=vector))
    return space._stored_on_grid(config, only_given=True)
