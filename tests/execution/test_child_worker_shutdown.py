"""Stopping the joblib workers an evaluation started is not charged to its wall time:
the child stopped them (up to ``SHUTDOWN_SECONDS``) before sending its result, so a
trial whose objective finished in time could fail ``timeout``. The executor here is a
stand-in in loky's module global, slow or unable to stop, so no workers are started."""

from __future__ import annotations

import os
import pathlib
import time

import pytest

from ensembo.execution import (
    OutcomeKind,
    TrialLimits,
    child,
    evaluate_in_child,
    inherited_executors,
)

LIMIT = 1.0
STOPPING = 2.0
"""Seconds the stand-in takes to stop: more than the objective's limit."""


class _SlowToStop:
    def __init__(self, marker: str, seconds: float):
        self.marker = marker
        self.seconds = seconds

    def terminate(self, kill_workers: bool) -> None:
        time.sleep(self.seconds)
        pathlib.Path(self.marker).write_text(f"stopped, kill_workers={kill_workers}")


def _leaves_an_executor(config):
    from joblib.externals.loky import reusable_executor

    reusable_executor._executor = _SlowToStop(config["marker"], config["seconds"])
    return 0.5


def test_workers_stopping_after_the_objective_finished_do_not_time_it_out(tmp_path):
    marker = tmp_path / "stopped"
    config = {"marker": str(marker), "seconds": STOPPING}
    outcome = evaluate_in_child(_leaves_an_executor, config, TrialLimits(wall_time=LIMIT))
    assert outcome.kind is OutcomeKind.RETURNED, outcome.message
    assert outcome.value == 0.5
    # the shutdown ran to its end: the child was not ended at the deadline mid-way
    assert marker.read_text() == "stopped, kill_workers=True"


HANG = 30.0
"""Seconds a child that sent its result hangs in its shutdown below: far beyond a bound."""
MARGIN = 5.0
"""Seconds allowed beyond a bound for the fork, importing loky in the child, and load."""


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")
def test_workers_that_never_stop_hold_the_result_back_only_for_the_shutdown_time(
    tmp_path, monkeypatch
):
    """The child's own bound: it leaves after ``SHUTDOWN_SECONDS`` though its workers do
    not stop. The driver's grace is made long here, so that it does not end the child
    first (which would hide a child that waits for ever)."""
    monkeypatch.setattr(inherited_executors, "SHUTDOWN_SECONDS", 0.3)
    monkeypatch.setattr(child, "SHUTDOWN_SECONDS", 0.3)
    monkeypatch.setattr(child, "_STOPPING_GRACE", HANG)
    started: list[int] = []
    began = time.monotonic()
    outcome = evaluate_in_child(
        _leaves_an_executor, {"marker": str(tmp_path / "stopped"), "seconds": 2 * HANG},
        TrialLimits(wall_time=LIMIT), on_start=started.append,
    )
    assert outcome.kind is OutcomeKind.RETURNED and outcome.value == 0.5
    assert time.monotonic() - began < 0.3 + MARGIN
    with pytest.raises(ChildProcessError):  # exited and reaped, not left behind
        os.waitpid(started[0], os.WNOHANG)


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")
def test_a_child_that_hangs_after_sending_its_result_is_ended_by_the_driver(monkeypatch):
    """The driver's bound: a child that sent its result and then never exits (its own
    bound bypassed: the whole shutdown hangs) is ended ``SHUTDOWN_SECONDS`` plus the
    grace after its result came, and the result is kept; without that bound the driver
    waited for the exit."""
    monkeypatch.setattr(child, "SHUTDOWN_SECONDS", 0.3)
    monkeypatch.setattr(child, "shut_down", lambda executors: time.sleep(HANG))
    started: list[int] = []
    began = time.monotonic()
    outcome = evaluate_in_child(
        _leaves_an_executor, {"marker": "unused", "seconds": 0.0},
        TrialLimits(wall_time=LIMIT), on_start=started.append,
    )
    took = time.monotonic() - began
    assert outcome.kind is OutcomeKind.RETURNED and outcome.value == 0.5
    assert took < 0.3 + child._STOPPING_GRACE + MARGIN < HANG
    with pytest.raises(ChildProcessError):  # ended and reaped, not left behind
        os.waitpid(started[0], os.WNOHANG)
