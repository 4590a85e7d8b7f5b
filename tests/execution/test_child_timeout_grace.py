"""A trial that hits its deadline has its process group ended as an ended trial's is:
SIGTERM, then SIGKILL after a short grace. SIGKILL at once also killed the child's
``multiprocessing`` resource tracker, so every timed-out trial that held shared memory
left its segment in /dev/shm (5 of 5 in the reproducer, 0 of 5 now)."""

from __future__ import annotations

import os
import signal
import time
from multiprocessing import resource_tracker, shared_memory

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child, process_group

needs_waitid = pytest.mark.skipif(not hasattr(os, "waitid"), reason="POSIX waitid")


def _ignores_sigterm(pid: int) -> bool:
    """Whether ``pid`` ignores SIGTERM, as a resource tracker does from the start of its
    ``main()`` on (Linux ``/proc``)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@needs_waitid
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux /proc")
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_a_timed_out_trials_resource_tracker_unlinks_the_shared_memory_it_left(monkeypatch):
    # The grace is wall time: a long one, so that a loaded machine cannot decide the test
    # (the group ends as soon as the tracker has cleaned up and exited).
    monkeypatch.setattr(process_group, "_GROUP_GRACE", 10.0)
    read_end, write_end = os.pipe()

    def objective(config):
        # A tracker of the child's own, as in a driver that has not used multiprocessing
        # (a tracker this test process started would be shared, and outlive the trial).
        # The module's register() is bound to the tracker made at import: rebound too.
        tracker = resource_tracker._resource_tracker = resource_tracker.ResourceTracker()
        resource_tracker.register = tracker.register
        resource_tracker.unregister = tracker.unregister
        # Up before the deadline: a new interpreter, it can take seconds on a loaded
        # machine, and the grace (wall time) would not cover its start-up too.
        tracker.ensure_running()
        while not _ignores_sigterm(tracker._pid):  # its main() has begun
            time.sleep(0.01)
        segment = shared_memory.SharedMemory(create=True, size=1 << 16)
        os.write(write_end, segment.name.encode() + b"\n")
        time.sleep(60)  # past the deadline: the segment is left to the tracker

    try:
        outcome = evaluate_in_child(objective, {}, TrialLimits(wall_time=5.0))
        os.close(write_end)
        names = os.read(read_end, 4096).split()
    finally:
        os.close(read_end)
    left = [name for name in names if os.path.exists(b"/dev/shm/" + name)]
    for name in left:
        os.unlink(b"/dev/shm/" + name)
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert len(names) == 1, "the tracker was not up within the trial's 5 s"
    assert left == []  # SIGKILL at the deadline killed the tracker: the segment stayed


def _ignores_sigterm_and_hangs(config):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(30)


@needs_waitid
def test_a_timed_out_child_that_ignores_sigterm_is_killed_after_the_grace():
    started: list[int] = []
    began = time.monotonic()
    outcome = evaluate_in_child(
        _ignores_sigterm_and_hangs, {}, TrialLimits(wall_time=0.3), on_start=started.append
    )
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert time.monotonic() - began < 10  # the deadline and one grace, not the 30 s sleep
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(started[0], os.WNOHANG)
