"""Initial-design trials do not repeat known configurations when the space has others."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from ensembo import Study, TrialState
from ensembo.modelled_history import FailuresAsWorst
from ensembo.trials import History, Trial

SIX_CONFIGS = {
    "params": {
        "a": {"type": "categorical", "choices": ["p", "q"]},
        "b": {"type": "int", "low": 0, "high": 2},
    }
}


def keys(trials) -> list[tuple]:
    return [tuple(sorted(t.config.items())) for t in trials]


@pytest.mark.parametrize("design", ["sobol", "lhs", "random", "default"])
@pytest.mark.parametrize("seed", range(3))
def test_the_initial_design_of_a_small_space_has_no_repeats(design, seed):
    study = Study(SIX_CONFIGS, surrogate=None, initial_design=design, n_initial=5, seed=seed)
    configs = keys(study.ask_batch(5))
    assert len(set(configs)) == 5


def test_redraws_keep_the_sequence_fixed_by_seed_whatever_the_batching():
    serial = Study(SIX_CONFIGS, surrogate=None, initial_design="random", n_initial=5, seed=0)
    serial_configs = keys(serial.ask() for _ in range(5))
    batched = Study(SIX_CONFIGS, surrogate=None, initial_design="random", n_initial=5, seed=0)
    assert keys(batched.ask_batch(2) + batched.ask_batch(3)) == serial_configs


def test_an_exhausted_space_repeats_with_a_warning(caplog):
    two = {"params": {"a": {"type": "categorical", "choices": ["p", "q"]}}}
    study = Study(two, surrogate=None, initial_design="sobol", n_initial=3, seed=0)
    with caplog.at_level(logging.WARNING, logger="ensembo.suggestion"):
        configs = keys(study.ask_batch(3))
    assert len(set(configs)) == 2
    assert "the space is exhausted" in caplog.text


class EchoProposer:
    """Proposes the configuration it is told to repeat first, then fresh ones; records
    how many trials were pending at each call."""

    def __init__(self, repeat):
        self.repeat = repeat
        self.pending_seen = []

    def propose(self, space, history, targets, n, rng):
        self.pending_seen.append(len(history.pending()))
        return [self.repeat, *space.sample(n, rng)][:n] if n > 1 else [self.repeat]


def test_model_based_members_of_a_batch_count_its_initial_design_members_as_pending():
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    study = Study(space, surrogate=None, n_initial=3, seed=0)
    for trial in study.ask_batch(2):
        study.tell(trial, trial.config["x"])
    last_initial = study.suggest(2)
    proposer = EchoProposer(last_initial)
    study.suggester.proposer = proposer
    batch = study.ask_batch(3)  # trial 2 from the design, 3 and 4 from the proposer
    assert batch[0].config == last_initial
    assert len(set(keys(study.trials))) == 5  # the proposer's repeat of trial 2 was refused
    assert proposer.pending_seen[0] == 1


def test_failed_trials_are_modelled_with_the_worst_loss_not_the_worst_target():
    """The modelled loss is what loss-ranking code (lbfgs' incumbents) sees; the worst
    *target* can be smaller than every loss when a strategy relabels targets."""
    config = {"x": 0.0}
    history = History(
        [
            Trial(number=0, config=config, state=TrialState.COMPLETE, loss=10.0),
            Trial(number=1, config=config, state=TrialState.COMPLETE, loss=20.0),
            Trial(number=2, config=config, state=TrialState.FAILED, error="boom"),
        ]
    )
    modelled, targets = FailuresAsWorst()(history, np.array([0.2, 0.1]))
    assert targets.tolist() == [0.2, 0.1, 0.2]
    assert [t.loss for t in modelled.completed()] == [10.0, 20.0, 20.0]
