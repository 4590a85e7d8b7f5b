"""A run interrupts, when it stops, only the trials it is running: a trial it asked,
re-queued after a crash and then asked by another thread, is that thread's."""

from __future__ import annotations

import threading

from ensembo import Study, TrialState
from ensembo.execution.child import NO_LIMITS
from ensembo.execution.loop import run_trials
from ensembo.execution.outcome import Outcome, OutcomeKind


class CrashThenInterrupt:
    """One slot: the first trial's worker dies; the next wait is a Ctrl-C."""

    slots = 1

    def __init__(self):
        self.submitted = self.waits = 0

    def submit(self, objective, config, limits):
        self.submitted += 1
        return self.submitted

    def wait(self, handles, timeout=None):
        if timeout == 0:
            return []
        self.waits += 1
        if self.waits == 1:
            return list(handles)
        raise KeyboardInterrupt

    def outcome(self, handle):
        return Outcome(kind=OutcomeKind.CRASHED, message="worker died")

    def close(self, *, interrupted=False):
        pass


def test_a_requeued_trial_another_thread_asked_is_not_interrupted_by_this_run(flat_space):
    """The run kept every number it ever asked: the other thread's trial 0 was recorded
    INTERRUPTED when this run stopped, and handed out a third time."""
    study = Study(flat_space, surrogate=None, seed=0)
    taken, go, done = {}, threading.Event(), threading.Event()

    def other_thread():
        go.wait()
        taken["trial"] = study.ask()
        done.set()

    def should_stop():  # before each ask: the other thread takes the re-queued trial 0
        if not go.is_set() and any(t.state is TrialState.INTERRUPTED for t in study.trials):
            go.set()
            done.wait(10)
        return False

    thread = threading.Thread(target=other_thread)
    thread.start()
    try:
        run_trials(study, lambda config: 0.0, CrashThenInterrupt(), n_trials=3,
                   limits=NO_LIMITS, should_stop=should_stop)
    except KeyboardInterrupt:
        pass
    thread.join(10)
    held = taken["trial"]
    assert held.number == 0
    assert study.trials[0].state is TrialState.RUNNING  # still the other thread's
    study.tell(held, 0.5)
    assert study.trials[0].state is TrialState.COMPLETE
