"""A whole float given for an integer hyperparameter is the int it stands for.

``enqueue({"n": 2.0})`` (JSON and arithmetic give floats) reached the objective as 2.0,
and its ``range(n)`` failed; 4.0000000001 was accepted and passed on as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import ensembo
from ensembo.errors import SpaceError
from ensembo.spaces import load

SPEC = {
    "params": {
        "n": {"type": "int", "low": 1, "high": 5},
        "x": {"type": "float", "low": 0.0, "high": 1.0},
        "s": {"type": "int", "low": 0, "high": 20, "q": 4},
    }
}
WHOLE = [2.0, np.float64(2.0), np.float32(2.0)]
FRACTIONS = [2.5, 4.0000000001, float("nan")]


@pytest.fixture
def space():
    return load(SPEC)


@pytest.mark.parametrize("value", WHOLE, ids=repr)
def test_a_whole_float_becomes_an_int(space, value):
    for config in (
        space.complete({"n": value}),
        space.validate({"n": value, "x": 0.5, "s": 4}),
        space.validate({"n": value, "x": 0.5, "s": 4}, snap=False),
    ):
        assert config["n"] == 2 and type(config["n"]) is int


def test_a_whole_float_on_a_grid_becomes_an_int(space):
    assert type(space.complete({"s": 8.0})["s"]) is int
    snapped = space.validate({"n": 1, "x": 0.5, "s": 8.5})  # proposals snap to the grid
    assert snapped["s"] == 8 and type(snapped["s"]) is int


def test_a_float_hyperparameter_keeps_its_float(space):
    assert type(space.complete({"x": 1.0})["x"]) is float


@pytest.mark.parametrize("value", FRACTIONS, ids=repr)
def test_a_fraction_is_refused_naming_the_hyperparameter(space, value):
    expected = f"n: {value!r} is not a whole number in \\[1, 5\\]"
    with pytest.raises(SpaceError, match=expected):
        space.complete({"n": value})
    with pytest.raises(SpaceError, match=expected):
        space.validate({"n": value, "x": 0.5, "s": 4})
    assert not space.is_valid({"n": value, "x": 0.5, "s": 4})


def test_an_enqueued_whole_float_reaches_the_objective_as_an_int():
    study = ensembo.Study(SPEC, surrogate=None, seed=0)
    study.enqueue({"n": 2.0})
    seen = []
    study.optimize(lambda config: seen.append(config["n"]) or len(range(config["n"])), n_trials=1)
    assert seen == [2] and type(seen[0]) is int
    assert study.trials[0].state.value == "complete"
    assert study.enqueue({"n": 2}, skip_if_known=True).number == 0


def test_an_added_whole_float_is_stored_as_an_int():
    study = ensembo.Study(SPEC, surrogate=None, seed=0)
    trial = study.add({"n": 3.0, "s": 8.0}, 0.5)
    assert trial.config["n"] == 3 and type(trial.config["n"]) is int
    assert type(trial.config["s"]) is int
    with pytest.raises(SpaceError, match="n: 2.5 is not a whole number"):
        study.add({"n": 2.5}, 0.5)
