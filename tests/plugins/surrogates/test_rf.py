"""The ``rf`` surrogate: SMAC-style forest mean and variance."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensembo.errors import ComponentOptionError
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.protocols import Surrogate
from ensembo.registry import registry
from ensembo.spaces import EncodedBatch, Space


def batch(values: np.ndarray) -> EncodedBatch:
    values = np.atleast_2d(values)
    return EncodedBatch(
        values=values,
        active=np.ones_like(values, dtype=bool),
        signature=np.zeros(len(values), np.int64),
    )


def branin_like(x: np.ndarray) -> np.ndarray:
    return np.sin(6 * x[:, 0]) + (x[:, 1] - 0.3) ** 2 * 4


@pytest.fixture
def observed():
    rng = np.random.default_rng(0)
    x = rng.random((60, 2)) * 0.5  # data only in the lower-left quarter
    return x, branin_like(x)


def test_registered_and_satisfies_protocol():
    surrogate = registry().create("surrogate", "rf", n_trees=5)
    assert isinstance(surrogate, Surrogate)


def test_variance_positive_and_smaller_at_observed_points_than_between_them(observed):
    x, y = observed
    surrogate = RandomForestSurrogate(n_trees=30)
    surrogate.fit(batch(x), y, np.random.default_rng(1))
    _, at_data = surrogate.predict(batch(x))
    between = np.random.default_rng(2).random((200, 2)) * 0.5
    _, unobserved = surrogate.predict(batch(between))
    assert np.all(at_data > 0) and np.all(unobserved > 0)
    assert np.median(at_data) < np.median(unobserved)


def test_variance_shrinks_as_points_are_observed_nearby(observed):
    x, y = observed
    probe = np.array([[0.8, 0.8]])
    rng = np.random.default_rng(3)
    before = RandomForestSurrogate(n_trees=40)
    before.fit(batch(x), y, rng)
    near = probe + rng.normal(0, 0.02, size=(8, 2))
    after = RandomForestSurrogate(n_trees=40)
    after.fit(batch(np.vstack([x, near])), np.concatenate([y, branin_like(near)]), rng)
    assert after.predict(batch(probe))[1][0] < before.predict(batch(probe))[1][0]


def test_mean_tracks_the_function(observed):
    x, y = observed
    surrogate = RandomForestSurrogate(n_trees=20, within_leaf_variance=False)
    surrogate.fit(batch(x), y, np.random.default_rng(4))
    test = np.random.default_rng(5).random((100, 2)) * 0.5
    mean, _ = surrogate.predict(batch(test))
    assert np.corrcoef(mean, branin_like(test))[0, 1] > 0.8


def test_log_targets_predict_on_the_original_scale(observed):
    x, y = observed
    surrogate = RandomForestSurrogate(n_trees=20, log_targets=True)
    surrogate.fit(batch(x), y, np.random.default_rng(6))
    mean, variance = surrogate.predict(batch(x))
    assert np.all(variance > 0)
    assert mean.min() >= y.min() - 1e-9
    assert np.corrcoef(mean, y)[0, 1] > 0.8


def test_same_generator_seed_gives_same_forest(observed):
    x, y = observed
    predictions = []
    for _ in range(2):
        surrogate = RandomForestSurrogate(feature_fraction=0.5)
        surrogate.fit(batch(x), y, np.random.default_rng(7))
        predictions.append(surrogate.predict(batch(x)))
    np.testing.assert_array_equal(predictions[0][0], predictions[1][0])
    np.testing.assert_array_equal(predictions[0][1], predictions[1][1])


def test_fits_a_thousand_conditional_observations(tree_space):
    space = Space(tree_space)
    configs = space.sample(1000, seed=8)
    y = np.array([c["shared"] + c.get("only_b", 0.0) for c in configs])
    surrogate = RandomForestSurrogate()
    surrogate.fit(space.encode(configs), y, np.random.default_rng(9))
    mean, variance = surrogate.predict(space.encode(configs[:50]))
    assert mean.shape == variance.shape == (50,)


@pytest.mark.parametrize("rule", ["midpoint", "none"])
def test_a_full_tree_fits_its_training_points_whatever_the_imputation(rule):
    """With rule ``none`` inactive entries are NaN; the trees skip scikit-learn's input
    checks, whose missing-value handling the splitter needs, and sorted NaN as a number:
    a single full-depth tree on distinct points misfitted them in most data sets."""
    from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

    configspace = ConfigurationSpace()
    kernel, gamma = Categorical("k", ["lin", "rbf"]), Float("g", (0.0, 1.0))
    configspace.add([kernel, gamma])
    configspace.add(EqualsCondition(gamma, kernel, "rbf"))
    space = Space(configspace).with_imputation(rule)
    worst = 0.0
    for data_seed in range(20):
        rng = np.random.default_rng(data_seed)
        configs = [
            {"k": "lin"} if rng.random() < 0.5 else {"k": "rbf", "g": float(rng.random())}
            for _ in range(12)
        ]
        y = np.array([1.0 if c["k"] == "lin" else 10 * (c["g"] - 0.3) ** 2 for c in configs])
        tree = RandomForestSurrogate(n_trees=1, bootstrap=False)
        tree.fit(space.encode(configs), y, np.random.default_rng(0))
        mean, _ = tree.predict(space.encode(configs))
        worst = max(worst, float(np.abs(mean - y).max()))
    assert worst < 1e-6


def test_missing_values_leave_the_batch_unchanged():
    values = np.array([[0.2, np.nan], [0.7, 0.4]], dtype=np.float32)
    surrogate = RandomForestSurrogate(n_trees=2)
    encoded = EncodedBatch(
        values=values, active=~np.isnan(values), signature=np.zeros(2, np.int64)
    )
    surrogate.fit(encoded, np.array([1.0, 2.0]), np.random.default_rng(0))
    surrogate.predict(encoded)
    assert np.isnan(values[0, 1])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("feature_fraction", 0.0, "feature_fraction"), ("n_trees", 0, "n_trees")],
)
def test_invalid_options_name_the_option(option, value, message):
    with pytest.raises(ValueError, match=message):
        RandomForestSurrogate(**{option: value})


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        # out of range: a depth of 0 or -1 grew single leaves, a float leaf size was a
        # fraction of the data and no tree split
        ("max_depth", 0, "an integer >= 1"),
        ("max_depth", -1, "an integer >= 1"),
        ("min_samples_leaf", 1.5, "an integer >= 1"),
        ("min_samples_split", 2.0, "an integer >= 2"),
        # not integers: accepted, then the first model-based ask crashed
        ("n_trees", 2.5, "an integer >= 1"),
        # wrong types: a bare TypeError from a comparison, naming no option
        ("n_trees", "10", "an integer >= 1"),
        ("feature_fraction", "0.5", "a number in (0, 1]"),
        # strings for switches: "false" and "no" counted as true
        ("bootstrap", "false", "true or false"),
        ("log_targets", "no", "true or false"),
        ("within_leaf_variance", 0, "true or false"),
    ],
)
def test_refused_values_name_the_plugin_and_the_option(option, value, expected):
    with pytest.raises(ComponentOptionError, match=rf"rf: {option} must be {re.escape(expected)}"):
        registry().create("surrogate", "rf", **{option: value})


def test_valid_depth_limits_are_kept():
    assert RandomForestSurrogate(max_depth=3).settings.max_depth == 3
    assert RandomForestSurrogate(max_depth=None).settings.max_depth is None


def test_a_feature_fraction_of_int_1_uses_every_feature():
    """sklearn reads an int ``max_features`` as a count: ``feature_fraction: 1`` from a
    YAML file made every split look at one random dimension."""
    rng = np.random.default_rng(1)
    x = rng.random((40, 6))
    surrogate = RandomForestSurrogate(feature_fraction=1, n_trees=2)
    surrogate.fit(batch(x), x.sum(1), rng)
    assert [tree.max_features_ for tree in surrogate._trees] == [6, 6]


def test_predict_before_fit_is_an_error():
    with pytest.raises(RuntimeError, match="before fit"):
        RandomForestSurrogate().predict(batch(np.zeros((1, 2))))


def test_in_a_study_defaults_to_ei_and_local_search(tree_space):
    from ensembo.study import Study

    def objective(config):
        return (np.log10(config["shared"]) + 1.5) ** 2 + config.get("only_b", 0.5)

    study = Study(tree_space, surrogate="rf", seed=0)
    study.optimize(objective, 14)
    components = study.components()
    assert (
        components["acquisition"] == "ei" and components["acquisition_optimizer"] == "local-search"
    )
    configs = [tuple(sorted(t.config.items())) for t in study.trials]
    assert len(set(configs)) == len(configs)
    assert all(study.space.is_valid(t.config) for t in study.trials)
