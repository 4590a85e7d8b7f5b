"""``sobol`` and ``lhs`` initial designs."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.plugins.initial_designs.lhs_design import LatinHypercubeDesign
from ensembo.plugins.initial_designs.sobol_design import SobolDesign
from ensembo.registry import registry
from ensembo.spaces import Space

DESIGNS = {"sobol": SobolDesign(), "lhs": LatinHypercubeDesign()}


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_valid_reproducible_and_of_the_asked_size(name, tree_space):
    space = Space(tree_space)
    first = DESIGNS[name].configs(space, 11, np.random.default_rng(0))
    again = DESIGNS[name].configs(space, 11, np.random.default_rng(0))
    assert len(first) == 11 and first == again
    assert all(space.is_valid(c) for c in first)
    assert {c["branch"] for c in first} == {"a", "b"}
    assert all(isinstance(c["steps"], int) for c in first if "steps" in c)
    assert DESIGNS[name].configs(space, 0, np.random.default_rng(0)) == []


def test_latin_hypercube_uses_every_stratum_once():
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 10.0)}))
    configs = LatinHypercubeDesign().configs(space, 8, np.random.default_rng(1))
    for name, high in (("x", 1.0), ("y", 10.0)):
        strata = sorted(int(c[name] / high * 8) for c in configs)
        assert strata == list(range(8))


def test_sobol_covers_the_square_more_evenly_than_random():
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))

    def empty_cells(configs):
        cells = {(int(c["x"] * 4), int(c["y"] * 4)) for c in configs}
        return 16 - len(cells)

    sobol = [
        empty_cells(SobolDesign().configs(space, 16, np.random.default_rng(s))) for s in range(10)
    ]
    random = [empty_cells(space.sample(16, np.random.default_rng(s))) for s in range(10)]
    assert max(sobol) == 0 and np.mean(random) > 2


@pytest.mark.parametrize("name", ["sobol", "lhs", "random", "default"])
def test_registered(name):
    assert registry().create("initial_design", name) is not None
