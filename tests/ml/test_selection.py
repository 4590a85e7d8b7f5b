"""Posterior-mean selection on spaces that leave inactive hyperparameters missing."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

from ensembo import Study
from ensembo.ml import select_trial
from ensembo.spaces import Space


def _two_branch_space() -> Space:
    """``kind`` a or b, each with its own child: one child is always inactive."""
    configspace = ConfigurationSpace(seed=0)
    kind, x, y = Categorical("kind", ["a", "b"]), Float("x", (0.0, 1.0)), Float("y", (0.0, 1.0))
    configspace.add([kind, x, y, EqualsCondition(x, kind, "a"), EqualsCondition(y, kind, "b")])
    return Space(configspace)


def _loss(config) -> float:
    """Branch b is better, best at y = 0.7."""
    if config["kind"] == "a":
        return 1.0 + (config["x"] - 0.3) ** 2
    return (config["y"] - 0.7) ** 2


def test_posterior_mean_selects_after_an_rf_search_with_imputation_none(caplog):
    """``rf`` takes imputation ``none``; the selection's hidden ``gp`` refused the NaN
    after the whole search (and before that refusal, its NaN means made ``argmin``
    pick trial 0, whatever its loss)."""
    caplog.set_level(logging.ERROR)
    study = Study(_two_branch_space().with_imputation("none"), surrogate="rf", seed=0)
    study.optimize(_loss, n_trials=15)
    losses = sorted(t.loss for t in study.trials)
    assert study.trials[0].loss > losses[2]  # trial 0 is no good choice here

    chosen = select_trial(study.history, study.space, "posterior-mean")

    assert chosen.loss <= losses[2]
    assert chosen.number != 0


def test_only_the_rules_none_are_replaced_for_the_fit():
    from ensembo.ml.selection import without_missing_values

    space = _two_branch_space().with_imputation("none", ["x"]).with_imputation("upper", ["y"])
    finite = without_missing_values(space)
    assert finite.imputation_rule("x") == "midpoint"
    assert finite.imputation_rule("y") == "upper"
    assert not np.isnan(finite.encode([{"kind": "b", "y": 0.5}]).values).any()
    assert space.imputation_rule("x") == "none"  # the study's space is left as it was


@pytest.mark.parametrize("rule", ["midpoint", "lower"])
def test_a_space_without_rule_none_is_used_as_it_is(rule):
    from ensembo.ml.selection import without_missing_values

    space = _two_branch_space().with_imputation(rule)
    assert without_missing_values(space) is space


def test_a_selection_surrogate_that_takes_missing_values_sees_the_space_as_it_is():
    """Only a Gaussian-process selection surrogate needs the midpoint stand-in; an ``rf``
    asked to select sees the inactive values left missing, as in the search."""
    from ensembo import components
    from ensembo.ml.selection import posterior_means

    space = _two_branch_space().with_imputation("none")
    study = Study(space, surrogate=None, seed=1)
    study.optimize(_loss, n_trials=12)
    trials = study.history.completed()

    direct = components.build("surrogate", "rf")
    batch = space.encode([t.config for t in trials])
    direct.fit(batch, np.array([t.loss for t in trials]), np.random.default_rng([3, 7]))
    expected, _ = direct.predict(batch)

    np.testing.assert_allclose(posterior_means(trials, space, "rf", seed=3), expected)
