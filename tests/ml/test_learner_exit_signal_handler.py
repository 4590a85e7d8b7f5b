"""A program's own signal handler that calls ``sys.exit`` (a service's graceful stop on
SIGTERM) runs inside whatever learner is fitting: its SystemExit must stop the program,
as it did before learner exits failed trials; it was taken for the learner's exit, the
trial failed "the learner ... called sys.exit(0)" and the search went on."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from ensembo.ml.learner_exit import LearnerExit, exit_fails_the_trial

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")


class Learner:
    def get_params(self):
        return {}

    def fit(self, signalled: bool):
        if signalled:
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(5)  # the handler's SystemExit comes first
        sys.exit(2)


@pytest.fixture
def exiting_handler():
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: sys.exit(0))
    yield
    signal.signal(signal.SIGUSR1, previous)


def test_a_signal_handlers_exit_stops_the_program(exiting_handler):
    with pytest.raises(SystemExit) as stopped, exit_fails_the_trial(Learner(), "fit"):
        Learner().fit(signalled=True)
    assert not isinstance(stopped.value, LearnerExit) and stopped.value.code == 0


def test_the_learners_own_exit_still_fails_its_trial(exiting_handler):
    with pytest.raises(LearnerExit, match=r"the learner Learner called sys.exit\(2\)"), \
            exit_fails_the_trial(Learner(), "fit"):
        Learner().fit(signalled=False)


def test_a_signal_handlers_exit_in_an_objective_stops_optimize(exiting_handler):
    """The same for an objective run in the driver's process."""
    from ensembo import Study

    def objective(config):
        return Learner().fit(signalled=True)

    study = Study({"params": {"x": {"type": "float", "low": 0, "high": 1}}}, surrogate=None)
    with pytest.raises(SystemExit) as stopped:
        study.optimize(objective, n_trials=3)
    assert stopped.value.code == 0 and len(study.trials) == 1
