"""Local search over every space of the built-in library (``spaces/library/*.yaml``).

Property: whatever the seed and the history, proposals are valid configurations (no
inactive hyperparameter set, every active one set), unseen and distinct, and every
one-exchange neighbour changes exactly one active value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ensembo.spaces
from ensembo.plugins.acquisition_optimizers.local_search import LocalSearchOptimizer
from ensembo.plugins.acquisition_optimizers.neighbourhood import OneExchangeNeighbourhood
from ensembo.spaces import EncodedBatch
from ensembo.trials import History, Trial, TrialState

LIBRARY = sorted((Path(ensembo.spaces.__file__).parent / "library").glob("*.yaml"))


class PeakSurface:
    def __init__(self, target: np.ndarray):
        self.target = target

    def score(self, batch: EncodedBatch) -> np.ndarray:
        values = np.nan_to_num(batch.values, nan=0.5)
        distance = np.where(batch.active[:, : values.shape[1]], (values - self.target) ** 2, 0.0)
        return -distance.sum(axis=1)


QUANTIZED: dict[str, np.ndarray] = {}


@pytest.fixture(scope="module", params=LIBRARY, ids=lambda path: path.stem)
def library_space(request):
    space = ensembo.spaces.load(request.param)
    QUANTIZED[space.name] = np.array(
        [(space.hyperparameter(name).meta or {}).get("q") is not None for name in space.names]
    )
    return space


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 3))
def test_local_search_proposals_are_valid_unseen_and_distinct(library_space, seed, n):
    space = library_space
    sampled = space.sample(7, seed=seed)
    history = History()
    for number, config in enumerate(sampled):
        state = TrialState.COMPLETE if number < 6 else TrialState.RUNNING
        history.put(
            Trial(
                number=number,
                config=config,
                state=state,
                loss=float(number) if number < 6 else None,
            )
        )
    target = np.random.default_rng(seed).random(space.encode(sampled[:1]).values.shape[1])
    optimizer = LocalSearchOptimizer(n_random=40, max_steps=4, random_fraction=0.3)
    configs = optimizer.maximize(
        PeakSurface(target), space, history, n, np.random.default_rng(seed)
    )
    keys = {tuple(sorted(c.items())) for c in configs}
    assert len(configs) == n == len(keys)
    assert all(space.validate(c) == c for c in configs)
    assert not keys & {tuple(sorted(c.items())) for c in sampled}


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16))
def test_neighbours_change_one_active_value_and_keep_activity_consistent(library_space, seed):
    space = library_space
    origins = space.sample_vectors(3, seed)
    neighbours = OneExchangeNeighbourhood(space).neighbours(origins, np.full(3, 0.1))
    for row, origin_index in zip(neighbours.vectors, neighbours.origin, strict=True):
        origin = origins[origin_index]
        both = ~np.isnan(row) & ~np.isnan(origin)
        assert (both & (np.abs(row - origin) > 1e-12)).sum() == 1
        decoded = space.vectors(space.from_vectors(row))[0]
        np.testing.assert_array_equal(np.isnan(decoded), np.isnan(row))
        # Values agree except where a quantized hyperparameter snapped onto its grid.
        exact = ~np.isnan(row) & ~QUANTIZED[space.name]
        # ConfigSpace rounds stored values, which moves tiny log-scaled values (e.g.
        # l2_regularization near 1e-10) by ~1e-7 in the normalized vector.
        np.testing.assert_allclose(decoded[exact], row[exact], rtol=0, atol=1e-6)
