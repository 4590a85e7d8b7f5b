"""Space-filling designs give every integer and grid value its share of the unit cube."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ensembo.plugins.initial_designs.lhs_design import LatinHypercubeDesign
from ensembo.plugins.initial_designs.sobol_design import SobolDesign
from ensembo.plugins.initial_designs.unit_cube import configs_from_unit_points
from ensembo.spaces import load

GRIDS = {
    "integer": ({"type": "int", "low": 0, "high": 2}, [0, 1, 2]),
    "stepped float": (
        {"type": "float", "low": 0.0, "high": 1.0, "q": 0.25},
        [0.0, 0.25, 0.5, 0.75, 1.0],
    ),
    "stepped integer": ({"type": "int", "low": 0, "high": 12, "q": 4}, [0, 4, 8, 12]),
}


def one_parameter_space(param: dict):
    return load({"params": {"v": param}})


def counts(configs) -> list[int]:
    tally = Counter(c["v"] for c in configs)
    return [tally[value] for value in sorted(tally)]


@pytest.mark.parametrize("kind", sorted(GRIDS))
def test_sobol_gives_every_grid_value_an_equal_share(kind):
    param, values = GRIDS[kind]
    configs = SobolDesign().configs(one_parameter_space(param), 1024, np.random.default_rng(0))
    assert sorted({c["v"] for c in configs}) == values
    share = 1024 / len(values)
    # one point per 1/1024 of [0, 1]: a share is off by at most the two edge intervals
    assert all(abs(count - share) <= 2 for count in counts(configs))  # rounding: [256, 512, 256]


@pytest.mark.parametrize("kind", sorted(GRIDS))
def test_latin_hypercube_strata_split_evenly_over_the_grid_values(kind):
    param, values = GRIDS[kind]
    n = 3 * 4 * 5  # every stratum lies inside one value's slice
    space = one_parameter_space(param)
    configs = LatinHypercubeDesign().configs(space, n, np.random.default_rng(0))
    assert counts(configs) == [n // len(values)] * len(values)


def frequencies(configs, values) -> np.ndarray:
    tally = Counter(c["v"] for c in configs)
    return np.array([tally[value] for value in values]) / len(configs)


@pytest.mark.parametrize(
    "param",
    [
        {"type": "int", "low": 1, "high": 100, "log": True},
        {"type": "int", "low": 1, "high": 64, "log": True, "q": 2},
    ],
)
def test_log_integers_follow_the_space_prior(param):
    """The design of a log-scaled integer matches how the space samples it (the old
    rounding gave 1 a share of 0.09 where the prior gives 0.15)."""
    space = one_parameter_space(param)
    design = SobolDesign().configs(space, 4096, np.random.default_rng(0))
    prior = space.sample(20_000, np.random.default_rng(1))
    values = sorted({c["v"] for c in prior} | {c["v"] for c in design})
    gap = np.abs(frequencies(design, values) - frequencies(prior, values))
    assert gap.max() < 0.012


@pytest.mark.parametrize("param", [
    {"type": "float", "low": 0.0, "high": 0.3, "q": 0.1},  # 0 + 3 * 0.1 > 0.3
    {"type": "float", "low": 0.1, "high": 0.3, "q": 0.2},  # the docs' example
])
def test_a_top_grid_point_past_high_by_rounding_keeps_its_share(param):
    """``low + k * q`` for the last point was 0.30000000000000004, which the space refuses:
    every design point there was replaced by a prior draw, silently ({0.1: 288, 0.3: 112}
    of 400 for the docs' example, and 12 of 16 Sobol points of five such floats)."""
    space = one_parameter_space(param)
    unit_points = ((np.arange(400) + 0.5) / 400)[:, None]
    configs = configs_from_unit_points(space, unit_points, np.random.default_rng(0))
    shares = Counter(c["v"] for c in configs)
    assert max(shares) == param["high"]
    assert set(shares.values()) == {400 // len(shares)}


def test_a_design_of_several_such_floats_is_not_replaced_by_prior_draws(monkeypatch):
    space = load({"params": {f"x{i}": {"type": "float", "low": 0, "high": 0.3, "q": 0.1}
                             for i in range(5)}})
    drawn = []
    sample = type(space).sample
    monkeypatch.setattr(type(space), "sample",
                        lambda self, n, seed=None: drawn.append(n) or sample(self, n, seed))
    for design in (SobolDesign(), LatinHypercubeDesign()):
        design.configs(space, 16, np.random.default_rng(0))
    assert drawn == []
