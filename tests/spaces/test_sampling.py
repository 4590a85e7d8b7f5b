"""Prior sampling: ConfigSpace's random stream, a bound instead of a hang, and `q` grids."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import spaces
from ensembo.errors import SpaceError

ORDINARY = {
    "name": "ordinary",
    "params": {
        "kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]},
        "C": {"type": "float", "low": 1e-3, "high": 1e3, "log": True},
        "degree": {"type": "int", "low": 2, "high": 5, "when": {"kernel": "poly"}},
        "gamma": {"type": "float", "low": 0.0, "high": 1.0, "when": {"kernel": ["rbf", "poly"]}},
    },
    "forbidden": [{"kernel": "linear", "C": 1e-3}, {"relation": "C < gamma"}],
}

ALMOST_ALL_FORBIDDEN = {
    "name": "almost-nothing",
    "params": {
        "a": {"type": "float", "low": 0.0, "high": 1.0},
        "b": {"type": "float", "low": 0.0, "high": 1.0},
    },
    "forbidden": [{"relation": "a < b"}, {"relation": "a > b"}],
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [1, 2, 40])
def test_sampling_draws_what_configspace_draws(seed, n):
    space = spaces.load(ORDINARY)
    configspace = space.to_configspace()
    configspace.seed(int(np.random.default_rng(seed).integers(2**31 - 1)))
    expected = configspace.sample_configuration() if n == 1 else configspace.sample_configuration(n)
    expected = [expected] if n == 1 else expected
    assert space.sample(n, seed=seed) == [_plain_dict(c) for c in expected]
    assert np.array_equal(
        space.sample_vectors(n, seed=seed),
        np.array([c.get_array() for c in expected]),
        equal_nan=True,
    )


def _plain_dict(configuration) -> dict:
    return {k: v.item() if isinstance(v, np.generic) else v for k, v in dict(configuration).items()}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("draw", ["sample", "sample_vectors"])
@pytest.mark.parametrize("n", [1, 2, 50])
def test_forbidden_clauses_allowing_almost_nothing_give_up_naming_them(draw, n):
    space = spaces.load(ALMOST_ALL_FORBIDDEN)
    with pytest.raises(SpaceError, match=r"almost-nothing.*gave up.*a < b.*a > b"):
        getattr(space, draw)(n, seed=0)


STEPPED = {
    "name": "stepped",
    "params": {
        "kernel": {"type": "categorical", "choices": ["rbf", "poly"]},
        "degree": {"type": "int", "low": 1, "high": 10, "q": 3, "when": {"kernel": "poly"}},
        "rate": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.3},
        "C": {"type": "float", "low": 0.1, "high": 100.0, "q": 0.5, "log": True},
    },
    "forbidden": [{"kernel": "poly", "degree": 4}],
}


def _one_by_one(space, config):
    """The former per-configuration path: snap, recompute activity, validate."""
    from ConfigSpace.util import deactivate_inactive_hyperparameters

    from ensembo.spaces.quantize import quantize

    full = {hp.name: quantize(hp, config.get(hp.name, hp.default_value))
            for hp in space.configspace.values()}
    try:
        active = deactivate_inactive_hyperparameters(full, space.configspace)
        return space.validate(_plain_dict(active))
    except Exception:
        return None


@pytest.mark.parametrize("seed", range(5))
def test_stepped_configurations_are_snapped_as_one_at_a_time(seed):
    space = spaces.load(STEPPED)
    drawn = [_plain_dict(c) for c in space._draw(60)]
    drawn.append({"kernel": "poly", "degree": 5, "rate": 0.31, "C": 3.3})  # forbidden once snapped
    assert space._snapped_all(drawn) == [_one_by_one(space, config) for config in drawn]
    assert space._snapped_all(drawn)[-1] is None


@pytest.mark.parametrize("seed", range(3))
def test_sampled_stepped_configurations_are_what_validating_gives(seed):
    """Sampled values are stored as ``validate`` stores them, bit for bit."""
    space = spaces.load(STEPPED)
    configs = space.sample(100, seed=seed)
    assert [space.validate(config) for config in configs] == configs
    assert all(not space._forbidden_rows(space.vectors([c]))[0] for c in configs)


def test_stepped_sampling_does_not_rebuild_each_configuration(monkeypatch):
    import ConfigSpace.util

    def too_slow(*args, **kwargs):
        raise AssertionError("one Configuration per sampled configuration")

    monkeypatch.setattr("ensembo.spaces.space.deactivate_inactive_hyperparameters", too_slow)
    monkeypatch.setattr(ConfigSpace.util, "deactivate_inactive_hyperparameters", too_slow)
    configs = spaces.load(STEPPED).sample(200, seed=0)
    assert len(configs) == 200 and all((c.get("degree", 1) - 1) % 3 == 0 for c in configs)
