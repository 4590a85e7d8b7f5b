"""Huge but finite losses do not break the model-based search.

One ``tell(t, 1e308)`` made the targets' standard deviation overflow; the scale fell
back to 1, the surrogate predicted infinities, and every later ask of the study (also
after a resume) raised ``PluginContractError``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

import ensembo
from ensembo.plugins.surrogates.scaling import standardize

HUGE = [1e308, -1e308, np.finfo(float).max, 1e200]
SURROGATES = ["gp", "rf", {"name": "rf", "log_targets": True}]


def space() -> ConfigurationSpace:
    return ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)})


def ordinary_loss(config) -> float:
    return (config["x"] - 1.0) ** 2 + math.sin(config["y"])


def tell_one_huge_loss(study: ensembo.Study, huge: float, n: int = 8) -> None:
    """``n`` trials, the second of which is told ``huge``; the rest ordinary."""
    for index in range(n):
        trial = study.ask()
        study.tell(trial, huge if index == 1 else ordinary_loss(trial.config))


def assert_proposes_valid_configurations(study: ensembo.Study, n: int = 3) -> None:
    for _ in range(n):
        trial = study.ask()
        assert -5.0 <= trial.config["x"] <= 10.0
        assert 0.0 <= trial.config["y"] <= 15.0
        study.tell(trial, ordinary_loss(trial.config))


@pytest.mark.parametrize("huge", HUGE)
def test_huge_targets_standardize_to_finite_values(huge):
    y = np.array([0.3, huge, 1.2, 0.7])
    standardized, location, scale = standardize(y)
    assert np.all(np.isfinite(standardized))
    assert np.isfinite(location) and np.isfinite(scale) and scale > 0
    assert np.isfinite(scale**2), "variances in target units must stay floats"


def test_the_sum_of_several_huge_targets_does_not_overflow():
    standardized, location, _ = standardize(np.array([1e308, 1e308, 1e308, 0.5]))
    assert np.all(np.isfinite(standardized)) and np.isfinite(location)
    assert standardized[0] > standardized[3]


def test_ordinary_targets_are_standardized_as_before():
    y = np.random.default_rng(0).normal(3.0, 1e6, size=9)
    standardized, location, scale = standardize(y)
    assert location == float(np.mean(y)) and scale == float(np.std(y))
    np.testing.assert_array_equal(standardized, (y - np.mean(y)) / np.std(y))


def test_huge_targets_count_as_equally_bad():
    """Beyond the representable variances, a larger loss is no worse."""
    standardized, _, _ = standardize(np.array([0.0, 1e300, -1e300]))
    reference, _, _ = standardize(np.array([0.0, 1e308, -1e308]))
    np.testing.assert_array_equal(standardized, reference)


@pytest.mark.parametrize("surrogate", SURROGATES, ids=["gp", "rf", "rf-log"])
@pytest.mark.parametrize("huge", HUGE)
def test_a_study_told_a_huge_loss_keeps_proposing(surrogate, huge):
    study = ensembo.Study(space(), surrogate=surrogate, seed=0, n_initial=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tell_one_huge_loss(study, huge)
        assert_proposes_valid_configurations(study)


@pytest.mark.parametrize("surrogate", ["gp", "rf"])
def test_a_resumed_study_told_a_huge_loss_keeps_proposing(surrogate, tmp_path):
    path = tmp_path / "huge.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ensembo.Study(space(), surrogate=surrogate, seed=0, n_initial=3, storage=path) as s:
            tell_one_huge_loss(s, 1e308, n=5)
        with ensembo.Study.load(path) as resumed:
            assert_proposes_valid_configurations(resumed)
