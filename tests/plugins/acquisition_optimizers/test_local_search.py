"""``local-search``: valid, unseen, distinct proposals; one-exchange moves; climbing works."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ensembo
from ensembo.errors import ComponentOptionError
from ensembo.plugins.acquisition_optimizers.local_search import LocalSearchOptimizer
from ensembo.plugins.acquisition_optimizers.neighbourhood import (
    MIN_MOVE,
    OneExchangeNeighbourhood,
)
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer
from ensembo.protocols import AcquisitionOptimizer
from ensembo.registry import registry
from ensembo.spaces import EncodedBatch, Space
from ensembo.trials import History, Trial, TrialState


class PeakSurface:
    """Acquisition peaked at ``target`` over the active encoded values, a bonus per branch."""

    def __init__(self, target: np.ndarray):
        self.target = target
        self.calls = 0

    def score(self, batch: EncodedBatch) -> np.ndarray:
        self.calls += 1
        distance = np.where(batch.active, (batch.values - self.target) ** 2, 0.0).sum(axis=1)
        return -distance + 0.1 * batch.active.sum(axis=1)


def history_of(space: Space, n_complete: int, n_pending: int, seed: int) -> History:
    configs = space.sample(n_complete + n_pending, seed=seed)
    history = History()
    for number, config in enumerate(configs):
        if number < n_complete:
            history.put(
                Trial(number=number, config=config, state=TrialState.COMPLETE, loss=float(number))
            )
        else:
            history.put(Trial(number=number, config=config, state=TrialState.RUNNING))
    return history


def test_registered_and_satisfies_protocol():
    optimizer = registry().create("acquisition_optimizer", "local-search", max_steps=5)
    assert isinstance(optimizer, AcquisitionOptimizer)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_proposals_are_valid_unseen_and_distinct(conditional_spaces, data, n, seed):
    space = data.draw(conditional_spaces)
    history = history_of(space, n_complete=8, n_pending=2, seed=seed)
    target = np.random.default_rng(seed).random(space.dimension)
    optimizer = LocalSearchOptimizer(n_random=50, max_steps=8, random_fraction=0.3)
    configs = optimizer.maximize(
        PeakSurface(target), space, history, n, np.random.default_rng(seed)
    )
    assert len(configs) == n
    for config in configs:
        # Space.validate rejects invalid values, missing active and present inactive ones.
        assert space.validate(config) == config
    keys = [tuple(sorted(c.items())) for c in configs]
    assert len(set(keys)) == n
    seen = {tuple(sorted(space.validate(t.config).items())) for t in history}
    assert not seen & set(keys)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_neighbours_change_exactly_one_active_hyperparameter(conditional_spaces, data, seed):
    space = data.draw(conditional_spaces)
    origins = space.sample_vectors(5, seed)
    neighbours = OneExchangeNeighbourhood(space).neighbours(origins, np.full(5, 0.1))
    assert len(neighbours.vectors) > 0
    for row, origin_index in zip(neighbours.vectors, neighbours.origin, strict=True):
        origin = origins[origin_index]
        both_active = ~np.isnan(row) & ~np.isnan(origin)
        changed = both_active & (row != origin)
        assert changed.sum() == 1
        assert np.abs(row - origin)[changed] > MIN_MOVE
        # A valid configuration whose activity is exactly the neighbour's NaN pattern.
        np.testing.assert_allclose(
            space.vectors(space.from_vectors(row)), row[None, :], rtol=0, atol=1e-6
        )


def test_integer_neighbours_are_other_integers_each_once():
    """A sampled vector lies anywhere in its integer's cell, not at the cell's canonical
    vector: the same integer must not come back as a neighbour, nor one twice."""
    from ConfigSpace import ConfigurationSpace, Integer

    space = Space(ConfigurationSpace(space={"k": Integer("k", (1, 40))}))
    hp = space.configspace["k"]
    origins = np.array([[0.9999], [0.0001], [0.5]])  # 40, 1 and 20, off their canonical vectors
    found = OneExchangeNeighbourhood(space).neighbours(origins, np.full(3, 0.001))
    values = [
        (int(o), int(hp.to_value(row[0])))
        for row, o in zip(found.vectors, found.origin, strict=True)
    ]
    assert sorted(values) == [(0, 39), (1, 2), (2, 19), (2, 21)]


def test_stepped_neighbours_are_other_grid_points_each_once():
    """A stepped value moves on its grid, one step either way and the continuous steps
    snapped: off the grid, a neighbour would be scored at a value it is never run at."""
    space = ensembo.spaces.load({"params": {
        "a": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.25},
        "n": {"type": "int", "low": 0, "high": 100, "q": 10}}})
    origins = space.vectors([{"a": 0.5, "n": 100}])
    found = OneExchangeNeighbourhood(space).neighbours(origins, np.full(1, 0.3))
    moved = sorted(tuple(sorted(config.items())) for config in space.from_vectors(found.vectors))
    # a: 0.5 -/+ 0.3 snaps to 0.25 / 0.75, the one-step moves; n: 100 - 0.3 of the range
    # snaps to 70, one step down is 90, one up is the last grid point again
    assert moved == [(("a", 0.25), ("n", 100)), (("a", 0.5), ("n", 70)),
                     (("a", 0.5), ("n", 90)), (("a", 0.75), ("n", 100))]
    assert np.array_equal(found.vectors, space.vectors(space.from_vectors(found.vectors)))


def test_neighbourhood_of_each_type(tree_space):
    space = Space(tree_space)
    config = {"branch": "b", "shared": 0.1, "only_b": 0.5, "steps": 4}
    origin = space.vectors([config])
    found = space.from_vectors(
        OneExchangeNeighbourhood(space).neighbours(origin, np.array([0.1])).vectors
    )
    assert {
        c["steps"]
        for c in found
        if c["branch"] == "b" and c["only_b"] == 0.5 and c["shared"] == 0.1
    } >= {3, 5}
    assert any(abs(c.get("only_b", -1) - 0.6) < 1e-9 for c in found)
    assert any(abs(c.get("only_b", -1) - 0.4) < 1e-9 for c in found)
    switched = [c for c in found if c["branch"] == "a"]
    assert switched == [{"branch": "a", "shared": 0.1}]  # children of "b" deactivated


def test_switching_a_parent_activates_a_child_under_a_conjunction():
    """``batch`` is active when ``clf == mlp`` and ``dropout == true``, ``dropout`` when
    ``arch == a``, ``arch`` when ``clf == mlp``. ConfigSpace evaluates ``batch``'s
    conjunction before ``dropout``'s condition, so one pass left ``batch`` inactive and
    the only neighbour switching ``clf`` from ``svm`` was no configuration."""
    from ConfigSpace import (
        AndConjunction,
        Categorical,
        ConfigurationSpace,
        EqualsCondition,
        Integer,
    )

    configspace = ConfigurationSpace()
    clf, arch = Categorical("clf", ["mlp", "svm"]), Categorical("arch", ["a", "b"])
    dropout = Categorical("dropout", ["true", "false"])
    batch = Integer("batch", (8, 64), default=32)
    configspace.add([clf, arch, dropout, batch])
    configspace.add(EqualsCondition(arch, clf, "mlp"))
    configspace.add(EqualsCondition(dropout, arch, "a"))
    configspace.add(
        AndConjunction(EqualsCondition(batch, clf, "mlp"), EqualsCondition(batch, dropout, "true"))
    )
    space = Space(configspace)
    found = OneExchangeNeighbourhood(space).neighbours(
        space.vectors([{"clf": "svm"}]), np.array([0.1])
    )
    assert space.from_vectors(found.vectors) == [
        {"clf": "mlp", "arch": "a", "dropout": "true", "batch": 32}
    ]


def test_climbs_to_a_better_value_than_the_random_pool_alone():
    from ConfigSpace import ConfigurationSpace

    space = Space(ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(6)}))
    target = np.full(6, 0.37)
    history = history_of(space, n_complete=5, n_pending=0, seed=1)
    scores = {}
    for name, optimizer in {
        "local": LocalSearchOptimizer(n_random=200, random_fraction=0.0),
        "random": RandomSearchOptimizer(n_samples=200),
    }.items():
        surface = PeakSurface(target)
        best = optimizer.maximize(surface, space, history, 1, np.random.default_rng(0))[0]
        scores[name] = surface.score(space.encode([best]))[0]
    assert scores["local"] > scores["random"]
    assert scores["local"] > 0.6 - 6 * 0.0125**2  # within the minimum step of the peak


class OffsetBowlLCB:
    """LCB of a model whose mean is a bowl at 0.8 lifted by ``offset``; the offset
    moves every score by the same amount and so not the maximizer."""

    def __init__(self, offset: float):
        from ensembo.plugins.acquisitions.lower_confidence_bound import LowerConfidenceBound

        self.offset = offset
        self.acquisition = LowerConfidenceBound(kappa=2.0)

    def score(self, batch: EncodedBatch) -> np.ndarray:
        mean = ((batch.values - 0.8) ** 2).sum(axis=1) + self.offset
        return self.acquisition(mean, np.full(len(mean), 0.01), 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_constant_offset_of_the_scores_does_not_change_the_climb(seed):
    """The plateau tolerance was relative to |score|: under an offset of 1e9 every real
    difference counted as equal and the proposal came from the random pool (0.2 away
    from the maximizer instead of 0.005)."""
    from ConfigSpace import ConfigurationSpace

    space = Space(ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(4)}))
    proposals = []
    for offset in (0.0, 1e9):
        optimizer = LocalSearchOptimizer(n_random=50)  # a small pool: the climbs do the work
        best = optimizer.maximize(
            OffsetBowlLCB(offset), space, History([]), 1, np.random.default_rng(seed)
        )[0]
        proposals.append(np.array([best[f"x{i}"] for i in range(4)]))
    np.testing.assert_allclose(proposals[0], proposals[1], rtol=0, atol=1e-6)
    assert np.linalg.norm(proposals[1] - 0.8) < 0.05


class BowlWithFailedRegion:
    """A bowl at 0.3 whose region ``x0 > 0.6`` scores -1e12 and less, as ``log-ei`` does
    where failed trials pin the surrogate's variance at its floor."""

    def __init__(self, failed_region: bool):
        self.failed_region = failed_region

    def score(self, batch: EncodedBatch) -> np.ndarray:
        bowl = -((batch.values - 0.3) ** 2).sum(axis=1)
        if not self.failed_region:
            return bowl
        failed = batch.values[:, 0] > 0.6
        return np.where(failed, -1e12 * (1.0 + 1e12 * batch.values[:, 1]), bowl)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_few_extremely_low_scores_do_not_stop_the_climbs_near_the_best(seed):
    """The tolerance was 1e-9 of the pool's whole range: scores of -1e12 and below made
    it larger than every difference near the best, every move a plateau, and the
    climbs random walks that ended 0.1-0.2 away from the maximizer."""
    from ConfigSpace import ConfigurationSpace

    space = Space(ConfigurationSpace(space={f"x{i}": (0.0, 1.0) for i in range(4)}))
    proposals = []
    for failed_region in (False, True):
        optimizer = LocalSearchOptimizer(n_random=50)  # a small pool: the climbs do the work
        best = optimizer.maximize(
            BowlWithFailedRegion(failed_region), space, History([]), 1,
            np.random.default_rng(seed),
        )[0]
        proposals.append(np.array([best[f"x{i}"] for i in range(4)]))
    np.testing.assert_allclose(proposals[1], proposals[0], rtol=0, atol=1e-6)
    assert np.linalg.norm(proposals[1] - 0.3) < 0.05


def test_the_tolerance_ignores_the_bottom_of_the_pool_and_the_scores_offset():
    from ensembo.plugins.acquisition_optimizers.local_search import score_tolerance

    pool = np.linspace(-1.0, 0.0, 100)
    starts = np.array([0.5])
    tolerance = score_tolerance(pool, starts)
    assert 0.0 < tolerance < 1e-9
    with_outliers = np.concatenate([pool, [-1e12, -1e300, -np.inf, np.nan]])
    assert score_tolerance(with_outliers, starts) == pytest.approx(tolerance, rel=0.05)
    assert score_tolerance(pool + 1e9, starts + 1e9) == pytest.approx(tolerance, rel=1e-3)


def test_exhausted_space_still_returns_a_configuration():
    from ConfigSpace import Categorical, ConfigurationSpace

    configspace = ConfigurationSpace()
    configspace.add(Categorical("c", ["x", "y"]))
    space = Space(configspace)
    history = History()
    for number, value in enumerate(["x", "y"]):
        history.put(Trial(number=number, config={"c": value}, state=TrialState.COMPLETE, loss=0.0))
    configs = LocalSearchOptimizer().maximize(
        PeakSurface(np.zeros(1)), space, history, 1, np.random.default_rng(0)
    )
    assert configs == [{"c": "x"}]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"random_fraction": 1.5}, "random_fraction"),
        ({"step": 0.01, "min_step": 0.1}, "min_step"),
        ({"n_observed_starts": 0, "n_random_starts": 0}, "both 0"),
    ],
)
def test_invalid_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        LocalSearchOptimizer(**options)


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        # not integers: accepted, then the first model-based ask crashed
        ("n_observed_starts", 2.5, "an integer >= 0"),
        ("max_steps", 1.5, "an integer >= 1"),
        ("plateau_steps", True, "an integer >= 0"),
        # wrong types: a bare TypeError from a comparison, naming no option
        ("n_random", "100", "an integer >= 1"),
        ("n_random_starts", None, "an integer >= 0"),
        ("step", "0.1", "a finite number > 0"),
        ("random_fraction", "0.2", "a number in [0, 1]"),
        ("random_fraction", float("nan"), "a number in [0, 1]"),
    ],
)
def test_refused_values_name_the_plugin_and_the_option(option, value, expected):
    with pytest.raises(
        ComponentOptionError, match=rf"local-search: {option} must be {re.escape(expected)}"
    ):
        registry().create("acquisition_optimizer", "local-search", **{option: value})


def test_valid_options_are_kept():
    settings = LocalSearchOptimizer(n_random=100, random_fraction=1, step=0.2).settings
    assert (settings.n_random, settings.random_fraction, settings.step) == (100, 1, 0.2)
