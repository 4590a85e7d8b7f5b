"""Default initial design size: by dimension, and per branch in conditional spaces."""

from __future__ import annotations

from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

from ensembo import defaults
from ensembo.spaces import Space


def test_flat_spaces_get_one_per_dimension_plus_one_within_bounds():
    assert defaults.default_n_initial(Space(ConfigurationSpace(space={"x": (0.0, 1.0)}))) == 5
    wide = ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(9)})
    assert defaults.default_n_initial(Space(wide)) == 10
    huge = ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(40)})
    assert defaults.default_n_initial(Space(huge)) == 20


def test_conditional_spaces_get_points_for_every_branch():
    space = ConfigurationSpace()
    choice = Categorical("choice", ["a", "b", "c", "d"])
    space.add(choice)
    for option in ("a", "b", "c"):  # d has no child: four signatures
        child = Float(f"{option}_x", (0.0, 1.0))
        space.add([child, EqualsCondition(child, choice, option)])
    n = defaults.default_n_initial(Space(space))
    assert n == 4 * defaults.POINTS_PER_BRANCH
    assert defaults.default_initial_design() == "sobol"
