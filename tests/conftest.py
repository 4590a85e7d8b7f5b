"""Shared fixtures for the whole suite."""

from __future__ import annotations

import contextlib
import os
import time
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


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait a while for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.fixture
def process_ends() -> Callable[..., bool]:
    """Whether a process ends (is gone, or a zombie) within ``within`` seconds, read from
    Linux's /proc, for tests that what a trial started ends with it."""

    def ends(pid: int, within: float = 2.0) -> bool:
        end = time.monotonic() + within
        while _running(pid):
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)
        return True

    return ends


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
