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


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")
def test_workers_that_never_stop_hold_the_result_back_only_for_the_shutdown_time(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(inherited_executors, "SHUTDOWN_SECONDS", 0.3)
    monkeypatch.setattr(child, "SHUTDOWN_SECONDS", 0.3)
    started: list[int] = []
    began = time.monotonic()
    outcome = evaluate_in_child(
        _leaves_an_executor, {"marker": str(tmp_path / "stopped"), "seconds": 60.0},
        TrialLimits(wall_time=LIMIT), on_start=started.append,
    )
    assert outcome.kind is OutcomeKind.RETURNED and outcome.value == 0.5
    assert time.monotonic() - began < 0.3 + child._STOPPING_GRACE + 1.0
    with pytest.raises(ChildProcessError):  # exited and reaped, not left behind
        os.waitpid(started[0], os.WNOHANG)
