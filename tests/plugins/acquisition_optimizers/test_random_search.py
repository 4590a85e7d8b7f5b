"""``random``: scores prior samples, returns the best unseen ones."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.errors import ComponentOptionError
from ensembo.plugins.acquisition_optimizers.random_search import (
    RandomSearchOptimizer,
    default_samples,
)
from ensembo.registry import registry
from ensembo.spaces import EncodedBatch, Space
from ensembo.trials import History, Trial, TrialState


class CountingSurface:
    """Higher is better towards x = 1; remembers how many points it scored."""

    def __init__(self):
        self.scored = 0

    def score(self, batch: EncodedBatch) -> np.ndarray:
        self.scored += len(batch)
        return batch.values[:, 0]


def test_returns_the_best_of_n_samples_best_first():
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    surface = CountingSurface()
    configs = RandomSearchOptimizer(n_samples=300).maximize(
        surface, space, History(), 3, np.random.default_rng(0)
    )
    assert surface.scored == 300
    xs = [c["x"] for c in configs]
    assert xs == sorted(xs, reverse=True) and xs[0] > 0.98


def test_skips_configurations_already_in_the_history(tree_space):
    space = Space(tree_space)
    surface = CountingSurface()
    first = RandomSearchOptimizer(n_samples=100).maximize(
        surface, space, History(), 1, np.random.default_rng(1)
    )[0]
    history = History([Trial(number=0, config=first, state=TrialState.RUNNING)])
    again = RandomSearchOptimizer(n_samples=100).maximize(
        surface, space, history, 1, np.random.default_rng(1)
    )[0]
    assert again != first and space.is_valid(again)


def test_default_size_grows_with_dimension_within_bounds():
    small = Space(ConfigurationSpace(space={"x": (0.0, 1.0)}))
    large = Space(ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(30)}))
    assert default_samples(small) == 1000 and default_samples(large) == 6000


def test_registered_with_options():
    optimizer = registry().create("acquisition_optimizer", "random", n_samples=10)
    assert optimizer.n_samples == 10


def test_rejects_non_positive_sample_count():
    with pytest.raises(ValueError, match="n_samples"):
        RandomSearchOptimizer(n_samples=0)


@pytest.mark.parametrize("value", [2.5, "100", True])
def test_refuses_a_sample_count_that_is_no_integer(value):
    """2.5 was accepted and failed at the first model-based ask; "100" failed in a
    comparison with a bare TypeError."""
    with pytest.raises(
        ComponentOptionError, match="random: n_samples must be an integer >= 1"
    ):
        registry().create("acquisition_optimizer", "random", n_samples=value)


def test_trial_vectors_follow_a_changed_configuration(tree_space):
    from ensembo.trial_vectors import TrialVectors

    space = Space(tree_space)
    vectors = TrialVectors()
    first = Trial(number=0, config={"branch": "a", "shared": 0.5})
    np.testing.assert_allclose(vectors(space, [first]), space.vectors([first.config]))
    replaced = Trial(number=0, config={"branch": "a", "shared": 0.25})
    np.testing.assert_allclose(vectors(space, [replaced]), space.vectors([replaced.config]))
    assert vectors(space, []).shape == (0, space.dimension)
