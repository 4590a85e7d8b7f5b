"""Shared fixtures for the whole suite."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

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


@pytest.fixture
def open_files_under() -> Callable[[object], list[str]]:
    """The names of the files under a folder that this process holds open (read from
    Linux's /proc/self/fd), for tests that a study lets go of its files."""

    def names(folder: object) -> list[str]:
        found = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own fd is gone already
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith(str(folder)):
                    found.append(os.path.basename(target))
        return sorted(found)

    return names
