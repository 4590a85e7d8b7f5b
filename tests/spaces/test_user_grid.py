"""Values a person gives must lie on a stepped hyperparameter's grid; ensembo's own
proposals are still moved onto it."""

from __future__ import annotations

import warnings

import pytest

import ensembo
from ensembo import spaces
from ensembo.errors import SpaceError

STEPPED = {
    "name": "stepped",
    "params": {
        "b": {"type": "int", "low": 1, "high": 10, "q": 4},
        "a": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.3},
        "c": {"type": "float", "low": 0.1, "high": 100.0, "q": 0.5, "log": True},
    },
}


def study() -> ensembo.Study:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ensembo.Study(STEPPED, surrogate="rf", seed=0)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"a": 0.6, "b": 2}, r"stepped: b: 2 is not on the grid 1 \+ k \* 4; .* are 1 and 5"),
        ({"a": 0.5, "b": 1}, r"stepped: a: 0.5 is not on the grid .* are 0.3 and 0.6"),
        ({"a": 0.95}, r"a: 0.95 is not on the grid .* is 0.9$"),  # high 1 is off the grid
    ],
)
def test_add_and_enqueue_refuse_an_off_grid_value_recording_nothing(config, message):
    target = study()
    with pytest.raises(SpaceError, match=message):
        target.add(config, 0.123)
    with pytest.raises(SpaceError, match=message):
        target.enqueue(config)
    with pytest.raises(SpaceError, match=message):
        target.space.validate(config | {"c": 0.6} if "b" in config else config, snap=False)
    assert len(target.trials) == 0


def test_values_on_the_grid_are_taken_as_given_up_to_float_noise():
    target = study()
    added = target.add({"a": 0.9, "b": 5, "c": 99.6}, 0.1)  # 3 * 0.3 is 0.8999999999999999
    assert added.config["b"] == 5 and added.config["c"] == 99.6  # high 100 is off the grid
    assert added.config["a"] == pytest.approx(0.9)
    assert target.enqueue({"a": 0.0, "b": 9}).config["b"] == 9


def test_sampled_configurations_can_be_given_back():
    space = spaces.load(STEPPED)
    for config in space.sample(50, seed=3):
        assert space.validate(config, snap=False) == config
        assert space.complete(config) == config


def test_proposals_are_still_moved_onto_the_grid():
    space = spaces.load(STEPPED)
    assert space.validate({"a": 0.5, "b": 2, "c": 3.3}) == {"a": 0.6, "b": 1, "c": 3.1}
    target = study()
    target.optimize(lambda config: config["a"] + config["b"], n_trials=8)
    for trial in target.trials:
        assert (trial.config["b"] - 1) % 4 == 0
        assert space.validate(trial.config, snap=False) == trial.config
