"""``trial_timeout`` holds after the result arrived: a child that sent its result and
then hung while exiting (its final flush of stdout into a full pipe, the driver's output
piped to a stalled reader) kept the driver waiting past the deadline for as long as it
hung (review: 8.7 s under a limit of 2 s)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

HANG = 6.0


class _StalledStream:
    """stdout whose flush blocks, as a write into a pipe nobody reads."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        time.sleep(HANG)


def _returns_then_hangs_on_exit(config):
    sys.stdout = _StalledStream()  # in the child only: it was forked
    return 0.25


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")
def test_a_child_hanging_after_its_result_is_killed_at_the_deadline_and_its_result_kept():
    started: list[int] = []
    began = time.monotonic()
    outcome = evaluate_in_child(
        _returns_then_hangs_on_exit, {}, TrialLimits(wall_time=1.0), on_start=started.append
    )
    assert time.monotonic() - began < HANG - 2
    assert outcome.kind is OutcomeKind.RETURNED and outcome.value == 0.25
    with pytest.raises(ChildProcessError):  # killed and reaped, not left behind
        os.waitpid(started[0], os.WNOHANG)
