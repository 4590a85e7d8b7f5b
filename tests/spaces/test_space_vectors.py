"""Space's ConfigSpace-vector form agrees with its dict form."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.errors import SpaceError
from ensembo.spaces import Space


@pytest.mark.parametrize("encoding", ["index", "onehot"])
def test_sampled_vectors_round_trip_through_configs(tree_space, encoding):
    space = Space(tree_space, encoding=encoding)
    raw = space.sample_vectors(50, seed=3)
    configs = space.from_vectors(raw)
    assert all(space.is_valid(c) for c in configs)
    np.testing.assert_allclose(space.vectors(configs), raw)
    encoded = space.encode_vectors(raw)
    reference = space.encode(configs)
    np.testing.assert_allclose(encoded.values, reference.values)
    np.testing.assert_array_equal(encoded.active, reference.active)
    np.testing.assert_array_equal(encoded.signature, reference.signature)


def test_values_of_inactive_hyperparameters_are_dropped(tree_space):
    space = Space(tree_space)
    raw = space.vectors([{"branch": "a", "shared": 0.1}])
    raw[0, space.names.index("steps")] = 0.5
    assert space.from_vectors(raw) == [{"branch": "a", "shared": 0.1}]


def test_missing_active_value_is_rejected(tree_space):
    space = Space(tree_space)
    raw = space.vectors([{"branch": "b", "shared": 0.1, "only_b": 0.2, "steps": 3}])
    raw[0, space.names.index("steps")] = np.nan
    with pytest.raises(SpaceError, match="invalid configuration vector"):
        space.from_vectors(raw)
