"""Float bounds ConfigSpace cannot hold once it has rounded them to 13 decimal places
(edge audit): they were refused as "Hyperparameter 'tol' has illegal settings", or as a
NaN default, or loaded with infinite bounds that sample NaN."""

from __future__ import annotations

import warnings

import ConfigSpace as CS
import numpy as np
import pytest

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces.compile import compile_spec
from ensembo.spaces.load import problems_in
from ensembo.spaces.problems import Problems
from ensembo.spaces.spec import Param, SpaceSpec


def _problems(**bounds):
    return [str(p) for p in problems_in({"params": {"tol": {"type": "float", **bounds}}})]


def test_a_log_low_that_rounds_to_zero_names_the_rounding_and_the_exponent_to_search():
    (message,) = _problems(low=1e-15, high=1e-3, log=True)
    assert message.startswith("params.tol.low: float bounds are rounded to 13 decimal places")
    assert "low 1e-15 becomes 0" in message
    assert "a log scale needs a low that rounds to at least 1e-13 (above 5e-14)" in message
    assert "a float in [-15, -3], used as 10**x" in message


@pytest.mark.parametrize("low", [1e-12, 1e-13, 6e-14, 5e-14, 4e-14, 1e-14, 1e-30, 1e-300])
def test_the_log_limit_is_configspaces_own(low):
    """ensembo refuses exactly the log ranges ConfigSpace cannot build."""
    try:
        CS.UniformFloatHyperparameter("tol", low, 1.0, log=True)
        configspace_builds = True
    except ValueError:
        configspace_builds = False
    assert (not _problems(low=low, high=1.0, log=True)) == configspace_builds


def test_a_range_that_rounds_to_one_point_says_what_it_becomes():
    (message,) = _problems(low=1e-15, high=1e-14)
    assert message.startswith("params.tol: float bounds are rounded to 13 decimal places")
    assert "[1e-15, 1e-14] becomes [0.0, 0.0], an empty range" in message
    assert _problems(low=0.0, high=1e-13) == []


@pytest.mark.parametrize("default", [None, 0.0])
def test_bounds_beyond_the_rounding_range_are_refused_each_by_name(default):
    bounds = {"low": -1e300, "high": 1e300} | ({} if default is None else {"default": default})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning no longer escapes
        messages = _problems(**bounds)
    assert [m.split(":")[0] for m in messages] == ["params.tol.low", "params.tol.high"]
    assert all("too large in magnitude" in m and "overflows beyond ±1.79769e+295" in m
               for m in messages)


def test_a_huge_high_no_longer_loads_as_an_infinite_range():
    assert any(m.startswith("params.tol.high: 1e+300 is too large") for m in
               _problems(low=0.0, high=1e300))
    space = spaces.load({"params": {"x": {"type": "float", "low": -1.79e295, "high": 1.79e295}}})
    assert np.isfinite(space.sample(3, seed=0)[0]["x"])


def test_a_configspace_refusal_keeps_its_reason():
    """What reaches ConfigSpace unchecked is reported with the cause it wraps."""
    param = Param(name="tol", local="tol", scope="", kind="float", path="params.tol",
                  low=1e-15, high=1e-3, log=True)
    problems = Problems()
    compile_spec(SpaceSpec(name="s", params=(param,)), problems)
    (problem,) = problems.items
    assert "has illegal settings: Negative lower bound 0.000000 for log-scale" in str(problem)


@pytest.mark.parametrize("high", [2**53 + 1, 2**63, 10**20])
def test_integer_bounds_beyond_two_to_the_53_are_refused_by_name(high):
    """2**53 + 1 was stored as 2**53; beyond int64 numpy's "Python int too large to
    convert to C long" or "no callable rint method" was all the error said."""
    document = {"params": {"n": {"type": "int", "low": 0, "high": high}}}
    (problem,) = [str(p) for p in problems_in(document)]
    assert problem.startswith("params.n.high: ") and "beyond ±2**53" in problem


def test_integer_ranges_up_to_two_to_the_53_wide_are_kept_exactly():
    space = spaces.load({"params": {"n": {"type": "int", "low": 0, "high": 2**53}}})
    hyperparameter = space.configspace["n"]
    assert (hyperparameter.lower, hyperparameter.upper) == (0, 2**53)
    wider = {"params": {"n": {"type": "int", "low": -(2**53), "high": 2**53}}}
    (problem,) = [str(p) for p in problems_in(wider)]
    assert problem.startswith("params.n: the range [-9007199254740992, 9007199254740992] is "
                              "wider than 2**53")


def test_a_serialized_configspace_refusal_keeps_configspace_s_reason():
    """A serialized ConfigSpace with a log low of 1e-15 gave only "has illegal settings"."""
    configspace = CS.ConfigurationSpace()
    configspace.add(CS.UniformFloatHyperparameter("tol", 1e-3, 1e-1, log=True))
    definition = configspace.to_serialized_dict()
    definition["hyperparameters"][0]["lower"] = 1e-15
    with pytest.raises(SpaceError, match="illegal settings: .*for log-scale is not possible"):
        spaces.load(definition)
