"""Where there is no ``os.pidfd_open`` (macOS, kernels before 5.3, a seccomp profile
that blocks it), a child that dies before its result is whole was noticed only at EOF,
that is, once a helper it forked and that holds the pipe's write end had ended (for
ever if it never does), and under ``trial_timeout`` it was reported as a TIMEOUT. Now
the child's exit is polled (review, finding 2)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

HELPER_SECONDS = 3


def dying(how: str):
    def objective(config):
        if os.fork() == 0:  # holds the pipe's write end
            time.sleep(HELPER_SECONDS)
            os._exit(0)
        if how == "exit0":
            os._exit(0)
        os.kill(os.getpid(), signal.SIGKILL)

    return objective


@pytest.fixture(autouse=True)
def no_pidfd(monkeypatch):
    monkeypatch.delattr(os, "pidfd_open", raising=False)


@pytest.mark.parametrize(
    ("how", "limits"),
    [
        ("exit0", TrialLimits(memory=1 << 30)),
        ("kill", TrialLimits(memory=1 << 30)),
        ("exit0", TrialLimits(wall_time=2)),
    ],
)
def test_a_child_that_dies_without_a_result_is_crashed_at_once(how, limits):
    start = time.monotonic()
    outcome = evaluate_in_child(dying(how), {}, limits)
    elapsed = time.monotonic() - start
    assert outcome.kind is OutcomeKind.CRASHED, outcome.message
    assert elapsed < 1.5


def test_a_result_still_arrives_whole():
    outcome = evaluate_in_child(lambda config: b"x" * (1 << 20), {}, TrialLimits(wall_time=5))
    assert outcome.kind is OutcomeKind.RETURNED
    assert outcome.value == b"x" * (1 << 20)


def test_the_deadline_still_holds():
    start = time.monotonic()
    outcome = evaluate_in_child(lambda config: time.sleep(5), {}, TrialLimits(wall_time=0.5))
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert time.monotonic() - start < 2.0
