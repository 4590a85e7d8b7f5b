"""tell() refuses what it used to drop or misrecord: error= with a complete result
(the error was silently lost) and a queued trial never asked (it became complete with
no attempt and no start time)."""

from __future__ import annotations

import pytest

from ensembo import Study, TrialState
from ensembo.errors import TrialError


def test_error_with_a_complete_result_is_refused_and_the_trial_stays_running(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    with pytest.raises(TrialError, match="error= .* kept only for a failed or interrupted"):
        study.tell(trial, 0.1, error="text")
    assert study.trials[trial.number].state is TrialState.RUNNING
    study.tell(trial, 0.1)
    assert study.trials[trial.number].state is TrialState.COMPLETE


def test_an_exception_told_without_state_suggests_state_failed(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    with pytest.raises(TrialError, match='did you mean state="failed"'):
        study.tell(trial, error=ValueError("diverged"))
    told = study.tell(trial, state="failed", error=ValueError("diverged"))
    assert told.state is TrialState.FAILED and "diverged" in told.error


def test_a_queued_trial_never_asked_is_refused(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    queued = study.enqueue({"x": 1.0, "y": 2.0})
    with pytest.raises(TrialError, match=r"trial 0 is queued .*ask\(\).*add\("):
        study.tell(queued.number, 0.5)
    assert study.trials[0].state is TrialState.PENDING
    asked = study.ask()
    assert asked.number == 0
    told = study.tell(asked, 0.5)
    assert told.attempts == 1 and told.started_at is not None


def test_add_still_completes_a_queued_trial_with_its_configuration(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    study.enqueue({"x": 1.0, "y": 2.0})
    added = study.add({"x": 1.0, "y": 2.0}, 0.5, skip_if_known=True)
    assert added.number == 0 and added.state is TrialState.COMPLETE
