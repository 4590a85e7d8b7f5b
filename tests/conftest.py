"""Shared fixtures for the whole suite."""

from __future__ import annotations

import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float, Integer


@pytest.fixture
def flat_space() -> ConfigurationSpace:
    return ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)})


@pytest.fixture
def tree_space() -> ConfigurationSpace:
    """A choice with branches of different dimension and an integer leaf."""
    space = ConfigurationSpace()
    branch = Categorical("branch", ["a", "b"])
    shared = Float("shared", (1e-3, 1.0), log=True)
    only_b = Float("only_b", (0.0, 1.0))
    steps = Integer("steps", (1, 10))
    space.add([branch, shared, only_b, steps])
    space.add([EqualsCondition(only_b, branch, "b"), EqualsCondition(steps, branch, "b")])
    return space
