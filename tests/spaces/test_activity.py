"""The vectorized activity computation agrees with ConfigSpace's own deactivation."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo import spaces
from ensembo.spaces.activity import deactivate

RANGE_AND_OR = {
    "params": {
        "n": {"type": "int", "low": 1, "high": 10},
        "mode": {"type": "categorical", "choices": ["a", "b", "c"]},
        "big": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 5}}},
        "both": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 2}, "mode": "a"}},
        "either": {
            "type": "float",
            "low": 0,
            "high": 1,
            "when": {"any": [{"n": {"lt": 3}}, {"mode": ["b", "c"]}]},
        },
        "deep": {"type": "float", "low": 0, "high": 1, "when": {"big": {"gt": 0.5}}},
        "window": {"type": "int", "low": 0, "high": 3, "when": {"n": {"ge": 4, "le": 7}}},
    }
}


@pytest.mark.parametrize(
    "source", ["cash-classification", "svm-kernels", "mlp-regressor", RANGE_AND_OR]
)
def test_vectorized_deactivation_matches_configspace(source):
    space = spaces.load(source)
    rng = np.random.default_rng(0)
    vectors = rng.random((200, space.dimension))
    for column, hp in enumerate(space.to_configspace().values()):
        if hasattr(hp, "size") and hp.size is not None and not hasattr(hp, "lower"):
            vectors[:, column] = rng.integers(0, hp.size, 200)
        else:  # land on the value grid (integers)
            vectors[:, column] = hp.to_vector(hp.to_value(vectors[:, column]))
    fast = deactivate(space.to_configspace(), vectors)
    for row, fast_row in zip(vectors, fast, strict=False):
        reference = deactivate_inactive_hyperparameters(
            None, space.to_configspace(), vector=row
        ).get_array()
        np.testing.assert_array_equal(np.isnan(fast_row), np.isnan(reference))
