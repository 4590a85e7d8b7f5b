"""An observer that raises while a parallel run stops (often the error that stopped
it) must neither leave trials running for ever nor replace the run's own error."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from ensembo import Study, TrialState
from ensembo.execution.child import NO_LIMITS
from ensembo.execution.loop import run_trials


class ObserverDown(Exception):
    pass


def raising_observer(study, trial):
    raise ObserverDown(f"observer down at trial {trial.number} ({trial.state.value})")


def test_an_observer_raising_on_a_result_interrupts_every_other_running_trial(flat_space):
    study = Study(flat_space, surrogate=None, seed=0, callbacks=[raising_observer])

    def objective(config):
        time.sleep(0.05)
        return config["x"] ** 2

    with ThreadPoolExecutor(3) as pool, pytest.raises(ObserverDown) as raised:
        study.optimize(objective, n_trials=6, executor=pool)
    # the original error: the observer on the first finished trial, not an interrupted one
    assert "(complete)" in str(raised.value)
    states = [t.state for t in study.trials]
    assert TrialState.RUNNING not in states
    interrupted = [t.number for t in study.trials if t.state is TrialState.INTERRUPTED]
    assert interrupted  # three slots: others were running when the first result came
    notes = "\n".join(raised.value.__notes__)
    for number in interrupted:
        assert f"trial {number} was interrupted" in notes


class StalledBackend:
    """Three slots whose evaluations never end; waiting for them is Ctrl-C'd."""

    slots = 3

    def __init__(self):
        self.submitted = 0

    def submit(self, objective, config, limits):
        self.submitted += 1
        return self.submitted

    def wait(self, handles, timeout=None):
        if timeout == 0:
            return []
        raise KeyboardInterrupt

    def outcome(self, handle):
        raise AssertionError("no evaluation ends")

    def close(self, *, interrupted=False):
        pass


def test_ctrl_c_with_a_raising_observer_interrupts_all_and_stays_a_ctrl_c(flat_space):
    study = Study(flat_space, surrogate=None, seed=0, callbacks=[raising_observer])
    with pytest.raises(KeyboardInterrupt) as raised:
        run_trials(study, lambda config: 0.0, StalledBackend(), n_trials=6, limits=NO_LIMITS)
    assert [t.state for t in study.trials] == [TrialState.INTERRUPTED] * 3
    assert all(t.error == "KeyboardInterrupt" for t in study.trials)
    assert len(raised.value.__notes__) == 3
