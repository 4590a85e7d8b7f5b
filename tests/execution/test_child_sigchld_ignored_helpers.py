"""With SIGCHLD ignored by the program the system reaps the child, and its process group
was left alone (its id might have been reused), so the helpers an objective forked
outlived every trial. A group still under that id has had members all along, so the id
was not free to be reused: the group is ended as usual."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

pytestmark = pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")



@pytest.fixture
def sigchld_ignored():
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGCHLD, before)


@pytest.fixture
def pid_pipe(process_ends):
    """A pipe the objective writes its helper's pid to; the helper is killed at the end
    whatever the outcome."""
    read_end, write_end = os.pipe()
    helpers: list[int] = []
    yield read_end, write_end, helpers
    os.close(read_end)
    os.close(write_end)
    for pid in helpers:
        if not process_ends(pid, within=0):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.usefixtures("sigchld_ignored")
@pytest.mark.parametrize("end", ["exit", "sigkill", "return"])
def test_the_helper_of_a_trial_the_system_reaped_ends_with_it(pid_pipe, end, process_ends):
    read_end, write_end, helpers = pid_pipe

    def objective(config):
        helper = os.fork()
        if helper == 0:
            time.sleep(20)
            os._exit(0)
        os.write(write_end, f"{helper}\n".encode())
        if end == "exit":
            os._exit(1)
        if end == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        return 1.0

    outcome = evaluate_in_child(objective, {}, TrialLimits(wall_time=10))
    helpers.append(int(os.read(read_end, 100).split()[0]))
    assert outcome.kind is (OutcomeKind.RETURNED if end == "return" else OutcomeKind.CRASHED)
    assert process_ends(helpers[0], within=3.0)
