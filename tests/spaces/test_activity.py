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


# ``batch`` reads ``dropout``, which a nested choice may deactivate: ConfigSpace orders the
# conjunction before dropout's own condition and left ``batch`` active without its branch.
CONDITION_ON_A_NESTED_CHOICE = {
    "params": {
        "clf": {
            "type": "choice",
            "options": {
                "other": {},
                "mlp": {
                    "layers": {
                        "type": "choice",
                        "options": {"one": {}, "two": {"dropout": {"type": "bool"}}},
                    },
                    "batch": {"type": "int", "low": 16, "high": 256, "when": {"dropout": True}},
                },
            },
        }
    }
}


def test_a_condition_on_a_nested_choice_deactivates_in_every_path():
    space = spaces.load(CONDITION_ON_A_NESTED_CHOICE)
    sampled = space.sample(400, seed=0)
    assert all(space.is_valid(config) for config in sampled)
    assert any("clf:mlp:batch" in config for config in sampled)  # not deactivated always
    decoded = space.from_vectors(space.sample_vectors(400, seed=1))
    assert all(space.is_valid(config) for config in decoded)


@pytest.mark.parametrize("surrogate", [None, "tpe"])
def test_a_study_hands_out_only_active_hyperparameters(surrogate):
    import ensembo

    space = spaces.load(CONDITION_ON_A_NESTED_CHOICE)
    study = ensembo.Study(space, surrogate=surrogate, n_initial=4, seed=0)
    study.optimize(lambda config: config.get("clf:mlp:batch", 100) / 100, n_trials=16)
    assert all(space.is_valid(trial.config) for trial in study.trials)
