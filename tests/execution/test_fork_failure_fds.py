"""A fork that fails (EAGAIN under a pids.max or ``ulimit -u``) leaves no pipe open
(leak audit, finding 5: both pipe ends leaked on every failed fork)."""

from __future__ import annotations

import os

import pytest

from ensembo.execution import TrialLimits, child, evaluate_in_child


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc")
@pytest.mark.parametrize("error", [BlockingIOError(11, "Resource temporarily unavailable"),
                                   KeyboardInterrupt()])
def test_a_failed_fork_closes_both_pipe_ends(monkeypatch, error):
    def failing_fork():
        raise error

    monkeypatch.setattr(child.os, "fork", failing_fork)
    before = _open_fds()
    for _ in range(5):
        with pytest.raises(type(error)):
            evaluate_in_child(lambda c: 0.0, {}, TrialLimits(wall_time=5.0))
    assert _open_fds() == before
