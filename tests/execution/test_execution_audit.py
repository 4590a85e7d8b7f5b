"""Fixes from the audit of parallel execution: objectives a process pool cannot pickle
are refused before any trial is asked, and a run stopped by an error always stops its
running evaluations, even when recording them as interrupted fails."""

from __future__ import annotations

import concurrent.futures
import time

import pytest

from ensembo import Study, TrialState
from ensembo.errors import ExecutionError
from ensembo.execution import OutcomeKind, ProcessBackend
from ensembo.execution.child import NO_LIMITS
from ensembo.execution.loop import run_trials


def test_a_process_pool_refuses_an_unpicklable_objective_before_asking(flat_space):
    offset = 1.0
    study = Study(flat_space, surrogate=None, seed=0)
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        with pytest.raises(ExecutionError, match="cannot be sent to the ProcessPoolExecutor"):
            study.optimize(lambda config: config["x"] + offset, n_trials=3, executor=pool)
        assert len(study.trials) == 0  # nothing asked, so nothing left interrupted
    # forked processes need no pickling: the same closure runs with n_jobs
    study.optimize(lambda config: config["x"] + offset, n_trials=2, n_jobs=2)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2


class HangingBackend:
    """Two slots whose evaluations never end; Ctrl-C arrives while the loop waits."""

    slots = 2

    def __init__(self):
        self.closed_interrupted = False
        self._next = 0

    def submit(self, objective, config, limits):
        self._next += 1
        return self._next

    def wait(self, handles, timeout=None):
        if timeout == 0:
            return []
        raise KeyboardInterrupt

    def outcome(self, handle):
        raise AssertionError("nothing ends")

    def close(self, *, interrupted=False):
        self.closed_interrupted = self.closed_interrupted or interrupted


def test_running_evaluations_are_stopped_even_if_recording_the_interrupt_fails(
    flat_space, monkeypatch
):
    study = Study(flat_space, surrogate=None, seed=0)
    backend = HangingBackend()
    original_record = study._record

    def failing_record(*trials):
        if any(t.state is TrialState.INTERRUPTED for t in trials):
            raise OSError("disk full")
        return original_record(*trials)

    monkeypatch.setattr(study, "_record", failing_record)
    with pytest.raises(OSError, match="disk full"):
        run_trials(study, lambda config: 0.0, backend, n_trials=4, limits=NO_LIMITS)
    assert backend.closed_interrupted


def test_an_evaluation_forked_while_an_interrupt_closes_the_backend_is_killed():
    """A supervising thread may fork just after close(interrupted=True) took the list
    of children to kill; that child must not run to its end (a 30 s hang here)."""
    backend = ProcessBackend(1)
    backend.close(interrupted=True)
    started = time.monotonic()
    outcome = backend._children.evaluate(lambda config: time.sleep(30), {}, NO_LIMITS)
    assert outcome.kind is OutcomeKind.CRASHED and "SIGKILL" in outcome.message
    assert time.monotonic() - started < 10


def _dies(config):
    import os

    os._exit(1)


def test_a_broken_process_pool_stops_the_run_with_a_way_out(flat_space):
    study = Study(flat_space, surrogate=None)
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        with pytest.raises(ExecutionError, match="ProcessPoolExecutor is broken .* new pool"):
            study.optimize(_dies, n_trials=3, executor=pool)
    assert not study.history.in_state(TrialState.RUNNING)
    assert study.history.in_state(TrialState.INTERRUPTED)  # re-run by the next optimize
