"""Batched asks: one suggestion after the other, earlier ones counted as pending."""

from __future__ import annotations

import pytest

from ensembo import Study, TrialState
from ensembo.execution import DistinctConfigs
from ensembo.spaces import load


class CountingProposer:
    """Proposes distinct points along a line; records how many trials were pending."""

    def __init__(self):
        self.calls = []

    def propose(self, space, history, targets, n, rng):
        self.calls.append(len(history.pending()))
        start = len(history)
        return [{"x": -5.0 + start + i, "y": 1.0} for i in range(n)]


def test_a_batch_ask_counts_earlier_members_as_pending(flat_space):
    proposer = CountingProposer()
    study = Study(flat_space, surrogate=proposer, n_initial=2, seed=0)
    for trial in study.ask_batch(2):  # the initial design, no proposer
        study.tell(trial, 1.0)
    batch = study.ask_batch(4)
    assert proposer.calls == [0, 1, 2, 3]
    assert [t.number for t in batch] == [2, 3, 4, 5]
    assert all(t.state is TrialState.RUNNING for t in batch)
    assert len({tuple(sorted(t.config.items())) for t in study.trials}) == 6


def test_interrupted_trials_come_first_in_a_batch(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    first, second = study.ask_batch(2)
    study.tell(second, state="interrupted", error="worker lost")
    batch = study.ask_batch(2)
    assert batch[0].number == second.number and batch[0].attempts == 2
    assert batch[1].number == 2


def test_suggestions_near_a_pending_trial_are_refused_near_a_finished_one_allowed(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    done, pending = study.ask_batch(2)
    study.tell(done, 1.0)
    distinct = DistinctConfigs(load(flat_space), study.history)
    near = {"x": pending.config["x"] + 1e-3, "y": pending.config["y"]}
    assert not distinct.admit(dict(pending.config))  # exact repeat
    assert not distinct.admit(near)  # within 1e-4 of the range of a running trial
    apart = {"x": pending.config["x"] + 0.03, "y": pending.config["y"]}
    assert distinct.admit(apart)  # 2e-3 of the range: a refinement step, allowed
    refining = {"x": done.config["x"] + 1e-3, "y": done.config["y"]}
    assert distinct.admit(refining)  # refining around a finished trial is fine
    assert not distinct.admit({"x": refining["x"] + 1e-4, "y": refining["y"]})  # same batch


class CrowdingProposer:
    """Its best is always the first pending trial (when there is one); records ``n``."""

    def __init__(self):
        self.counts = []

    def propose(self, space, history, targets, n, rng):
        self.counts.append(n)
        pending = [dict(t.config) for t in history.pending()]
        fresh = [{"x": -5.0 + len(history) + i, "y": 2.0} for i in range(n)]
        return (pending[:1] + fresh)[:n]


def test_with_trials_pending_the_runners_up_come_with_the_first_call(flat_space):
    proposer = CrowdingProposer()
    study = Study(flat_space, surrogate=proposer, n_initial=2, seed=0)
    for trial in study.ask_batch(2):
        study.tell(trial, 1.0)
    running = study.ask()  # nothing pending: the proposer's best alone
    assert proposer.counts == [1]
    refined = study.ask()  # its best repeats the running trial: a runner-up, same call
    assert proposer.counts == [1, 4]
    assert refined.config != running.config and refined.config["y"] == 2.0


@pytest.mark.parametrize("n", [0, -1, 1.5])
def test_a_batch_needs_a_positive_whole_size(n):
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}, surrogate=None)
    with pytest.raises(ValueError, match=r"n: must be an integer >= 1"):
        study.ask_batch(n)
    assert len(study.history) == 0


@pytest.mark.parametrize(
    "ensemble", [{"name": "esmbo", "n_bootstraps": 4}, {"name": "eo", "size": 4}]
)
def test_a_batch_proposes_each_trial_with_its_own_round_robin_targets(flat_space, ensemble):
    """ESMBO's bootstrap and EO's slot follow the trial number: a batch of four must
    model four bootstraps (slots), as four asks do, not the first trial's four times."""
    import numpy as np

    from ensembo.trials import Evaluation

    labels = np.array([0, 1] * 15)

    def evaluation(config):
        p = np.clip(0.5 + 0.1 * config["x"] * np.sin(np.arange(30) + config["y"]), 0, 1)
        probabilities = np.column_stack([1 - p, p])
        return Evaluation(loss=float(np.mean(probabilities.argmax(1) != labels)),
                          predictions=probabilities)

    seen_lengths = []

    def study():
        made = Study(flat_space, surrogate="rf", ensemble=ensemble, n_initial=2, seed=0,
                     validation_targets=labels, task="classification", loss="zero-one")
        strategy = made.strategy
        targets = strategy.targets

        def recording(history, context):
            seen_lengths.append(len(history))
            return targets(history, context)

        strategy.targets = recording
        for trial in made.ask_batch(2):
            made.tell(trial, evaluation(trial.config))
        seen_lengths.clear()
        return made

    batched = study().ask_batch(4)
    batched_lengths = list(seen_lengths)
    one_by_one = study()
    asked = [one_by_one.ask() for _ in range(4)]
    assert batched_lengths == seen_lengths == [2, 3, 4, 5]
    assert [t.config for t in batched] == [t.config for t in asked]
