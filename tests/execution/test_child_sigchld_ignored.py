"""A program that ignores SIGCHLD has its children reaped by the system, so the wait
status of a crashed evaluation is lost: it was read as 0 and a child killed by SIGKILL
(the OOM killer) was reported as "exited with code 0" (review)."""

from __future__ import annotations

import os
import signal

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child


def _killed(config):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture
def sigchld_ignored():
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGCHLD, before)


@pytest.mark.usefixtures("sigchld_ignored")
def test_a_crash_whose_status_the_system_took_is_not_called_an_exit_with_code_0():
    outcome = evaluate_in_child(_killed, {}, TrialLimits())
    assert outcome.kind is OutcomeKind.CRASHED
    assert "code 0" not in outcome.message
    assert "SIGCHLD is ignored" in outcome.message


def test_with_sigchld_at_its_default_the_signal_is_named():
    outcome = evaluate_in_child(_killed, {}, TrialLimits())
    assert outcome.kind is OutcomeKind.CRASHED and "SIGKILL" in outcome.message
