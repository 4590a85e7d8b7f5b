"""What an acquisition optimizer or proposer plugin hands back is checked, and a bad
answer names the plugin, not the user's space."""

from __future__ import annotations

import logging
import re

import pytest

from ensembo import Study, TrialState


def loss(config):
    return (config["x"] - 1.0) ** 2 + (config["y"] - 2.0) ** 2


class OutOfRange:
    """Proposes a point far outside every range."""

    def maximize(self, surface, space, history, n, rng):
        return [{"x": 1e6, "y": 1e6}] * n


class ProposesNothing:
    def maximize(self, surface, space, history, n, rng):
        return []


def test_an_invalid_configuration_names_the_acquisition_optimizer(flat_space):
    study = Study(flat_space, surrogate="rf", acquisition_optimizer=OutOfRange(), n_initial=3)
    with pytest.raises(Exception) as raised:
        study.optimize(loss, n_trials=5)
    notes = getattr(raised.value, "__notes__", [])
    assert any(re.search(r"while calling maximize\(\) of acquisition optimizer .*OutOfRange; "
                         r"it must return configurations of the space", note) for note in notes)
    assert len(study.history.completed()) == 3  # what was recorded stays


def test_an_optimizer_that_proposes_nothing_is_reported_and_the_search_goes_on(
    flat_space, caplog
):
    study = Study(flat_space, surrogate="rf", acquisition_optimizer=ProposesNothing(),
                  n_initial=3)
    with caplog.at_level(logging.INFO, logger="ensembo.suggestion"):
        study.optimize(loss, n_trials=5)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 5
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(re.fullmatch(r"trial 3: acquisition optimizer .*ProposesNothing returned no "
                            r"configuration", message) for message in warned)
    assert any("nothing was proposed; drew a random one" in r.getMessage()
               for r in caplog.records)
