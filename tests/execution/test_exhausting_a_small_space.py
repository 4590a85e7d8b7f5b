"""A small finite space is covered before any configuration repeats, and a repeat is
called "exhausted" only when the listed space shows it."""

from __future__ import annotations

import logging

import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Integer
from ConfigSpace.hyperparameters import OrdinalHyperparameter

import ensembo.spaces
from ensembo import Study, suggestion
from ensembo.spaces import Space
from ensembo.spaces.enumeration import every_config

FORTY_CONFIGS = {
    "params": {
        "a": {"type": "categorical", "choices": [f"c{i}" for i in range(8)]},
        "b": {"type": "int", "low": 1, "high": 5},
    }
}
TWO_CONFIGS = {"params": {"a": {"type": "categorical", "choices": ["p", "q"]}}}


def distinct_configs(study: Study) -> int:
    return len({tuple(sorted(t.config.items())) for t in study.trials})


@pytest.mark.parametrize("surrogate", [None, "tpe"])
def test_forty_trials_of_a_forty_configuration_space_evaluate_each_once(surrogate, caplog):
    """20 prior draws missed the last ones: trials 38 and 39 repeated, logged as exhausted."""
    study = Study(FORTY_CONFIGS, surrogate=surrogate, seed=2)
    with caplog.at_level(logging.WARNING, logger="ensembo.suggestion"):
        study.optimize(lambda c: int(c["a"][1:]) * 0.3 + (c["b"] - 3) ** 2, 40)
    assert distinct_configs(study) == 40
    assert "exhausted" not in caplog.text


def test_a_repeat_once_a_listed_space_is_covered_is_logged_as_exhausted(caplog):
    study = Study(TWO_CONFIGS, surrogate=None, initial_design="sobol", n_initial=3, seed=0)
    with caplog.at_level(logging.WARNING, logger="ensembo.suggestion"):
        study.ask_batch(3)
    assert distinct_configs(study) == 2
    assert "trial 2 repeats a known configuration; the space is exhausted" in caplog.text


@pytest.mark.parametrize("surrogate", [None, "rf"])
def test_only_the_first_repeat_is_a_warning(surrogate, caplog):
    """30 trials of a two-configuration space logged 28 identical warnings."""
    study = Study(TWO_CONFIGS, surrogate=surrogate, seed=0)
    with caplog.at_level(logging.DEBUG, logger="ensembo.suggestion"):
        study.optimize(lambda c: float(c["a"] == "p"), 30)
    repeats = [r for r in caplog.records if "repeats a known configuration" in r.getMessage()]
    assert len(repeats) == 28
    assert [r.levelno for r in repeats] == [logging.WARNING] + [logging.DEBUG] * 27
    assert repeats[0].getMessage().endswith("(later repeats are logged at DEBUG level)")


def test_a_space_too_large_to_list_is_never_called_exhausted(caplog, monkeypatch):
    """Only the listing knows; failed prior draws are reported as what they are."""
    monkeypatch.setattr(suggestion, "_LISTING_LIMIT", 1)
    study = Study(TWO_CONFIGS, surrogate=None, initial_design="sobol", n_initial=3, seed=0)
    with caplog.at_level(logging.WARNING, logger="ensembo.suggestion"):
        study.ask_batch(3)
    assert "exhausted" not in caplog.text
    assert "trial 2 repeats a known configuration: 20 prior draws found no new one" in caplog.text


def test_the_listing_leaves_out_inactive_values_and_forbidden_configurations():
    configspace = ConfigurationSpace()
    branch, n = Categorical("branch", ["p", "q", "r"]), Integer("n", (1, 4))
    kind = OrdinalHyperparameter("kind", ["lo", "hi"])
    configspace.add([branch, n, kind, EqualsCondition(n, branch, "q")])
    configspace.add(EqualsCondition(kind, branch, "r"))
    assert len(every_config(Space(configspace), 100)) == 1 + 4 + 2
    triangle = ensembo.spaces.load({
        "params": {"a": {"type": "int", "low": 0, "high": 20},
                   "b": {"type": "int", "low": 0, "high": 20}},
        "forbidden": [{"relation": "a > b"}],
    })
    assert len(every_config(triangle, 1000)) == 21 * 22 // 2


def test_stepped_values_are_listed_on_their_grid():
    space = ensembo.spaces.load({
        "params": {"x": {"type": "float", "low": 0.0, "high": 1.0, "q": 0.25},
                   "k": {"type": "int", "low": 0, "high": 20, "q": 5}},
    })
    listing = every_config(space, 1000)
    assert sorted({c["x"] for c in listing}) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert sorted({c["k"] for c in listing}) == [0, 5, 10, 15, 20]
    assert len(listing) == 25


def test_continuous_or_too_large_spaces_are_not_listed():
    assert every_config(Space(ConfigurationSpace(space={"x": (0.0, 1.0)})), 10**6) is None
    assert every_config(ensembo.spaces.load(FORTY_CONFIGS), 39) is None
