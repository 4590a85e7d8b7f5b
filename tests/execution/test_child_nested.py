"""An objective that itself evaluates in a child (nested ``evaluate_in_child``) hung
until its own wall-time limit killed it: the evaluation was forked while its parent
held the lock taken around every fork, and the copy of that lock stayed held in the
child, where no thread would ever release it."""

from __future__ import annotations

import os
import time

from ensembo import Study
from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

OUTER_LIMIT = 30.0
"""Seconds the outer evaluation may take; the nested one took all of it and timed out.
Generous, as both evaluations take well under a second but two loaded cores took 6.9 s
for the two tests."""


def doubled_in_a_child(config):
    inner = evaluate_in_child(
        lambda c: (2 * c["x"], os.getpid()), config, TrialLimits(wall_time=OUTER_LIMIT)
    )
    assert inner.kind is OutcomeKind.RETURNED, inner.message
    value, pid = inner.value
    return value, pid, os.getpid()


def test_an_evaluation_in_a_child_can_evaluate_in_a_child_of_its_own():
    started = time.monotonic()
    outcome = evaluate_in_child(doubled_in_a_child, {"x": 1.5}, TrialLimits(wall_time=OUTER_LIMIT))
    assert outcome.kind is OutcomeKind.RETURNED, outcome.message
    value, inner_pid, outer_pid = outcome.value
    assert value == 3.0
    assert len({inner_pid, outer_pid, os.getpid()}) == 3
    assert time.monotonic() - started < OUTER_LIMIT / 2  # well before the hang's end


def test_a_trial_of_a_process_run_can_evaluate_in_a_child():
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    study = Study(space, surrogate=None, seed=0)
    study.optimize(
        lambda config: doubled_in_a_child(config)[0], 1, n_jobs=1, trial_timeout=OUTER_LIMIT
    )
    [trial] = study.trials
    assert trial.state.name == "COMPLETE", trial.error
    assert trial.loss == 2 * trial.config["x"]
