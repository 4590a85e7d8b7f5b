"""Ending an evaluation child and the processes it started (its process group), and
reading how it ended.

The child leads a process group of its own (:mod:`ensembo.execution.child`), so
signalling the group reaches what the objective started too. A group is signalled only
while its id cannot belong to anyone else: while the child is alive or an unreaped
zombie, or while the group has members.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

_GROUP_GRACE = 0.5
"""Seconds the rest of an ended trial's process group has between SIGTERM and SIGKILL."""

UNKNOWN_STATUS = -1
"""The wait status of a child the system reaped itself (SIGCHLD ignored in this process)."""


def kill_group(pid: int) -> None:
    """SIGKILL the evaluation ``pid`` and the processes it started (its process group)."""
    try:
        os.killpg(pid, signal.SIGKILL)
        return
    except (ProcessLookupError, PermissionError):  # no group of its own: the pid alone
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_and_reap(pid: int) -> int:
    kill_group(pid)
    return reap(pid)


def reap(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return UNKNOWN_STATUS


def has_exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited, without reaping it."""
    try:
        return _exited_now(pid)
    except ChildProcessError:  # reaped already (SIGCHLD ignored)
        return True


def _exited_now(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def exit_description(status: int) -> str:
    if status == UNKNOWN_STATUS:  # read as a status, it said "exited with code 0"
        return ("ended before returning a result (how is unknown: SIGCHLD is ignored in "
                "this process, so the system reaped it)")
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"was killed by signal {signal.Signals(number).name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)} before returning a result"


def reap_ending_group(pid: int, deadline: float | None = None) -> int:
    """Wait for the child ``pid`` to exit, end what is left in its process group (a
    helper the objective forked and did not end: the trial's processes end with the
    trial), reap the child and return its wait status.

    The group gets SIGTERM while the child is alive or an unreaped zombie: until it is
    reaped its pid, the group's id, cannot be given to another process. Then the child is
    reaped, and what is still alive in the group after ``_GROUP_GRACE`` s gets SIGKILL.
    SIGTERM first matters: a ``multiprocessing`` resource tracker the objective started
    is in the group, ignores SIGTERM and, once the child and its helpers are gone,
    unlinks the shared memory the objective left; SIGKILL at once left it in /dev/shm.
    A reaped child's group is signalled only while it has members: while one is alive
    its id is not reused (and pids are handed out cyclically). So a child the system
    reaped (SIGCHLD ignored in this process) has its group ended too (left alone, its
    helpers outlived the trial). A child that does not lead a group of its own (both
    ``setpgid`` calls failed) is in the driver's group: only it is killed, if still
    running. Without ``os.waitid`` the child is only reaped. A Ctrl-C meanwhile SIGKILLs
    the group.

    The wait for the exit ends at the trial's ``deadline``: a child still running then
    (it timed out, or sent its result and hung on its last flush of stdout into a full
    pipe) is ended the same way; if it ignores SIGTERM, it and its group get SIGKILL
    after the grace.
    """
    try:
        if not hasattr(os, "waitid"):
            return reap(pid)
        exited = _exited_by(pid, deadline)
        if not _leads_own_group(pid):
            return reap(pid) if exited else kill_and_reap(pid)
        _signal_group(pid, signal.SIGTERM)
        end = time.monotonic() + _GROUP_GRACE
        if not (exited or _wait_until(lambda: has_exited(pid), end)):
            return kill_and_reap(pid)  # it ignores SIGTERM; unreaped, its id is safe
    except ChildProcessError:  # reaped by the system (SIGCHLD ignored) before any signal
        if _signal_group(pid, signal.SIGTERM):
            _end_reaped_group(pid, time.monotonic() + _GROUP_GRACE)
        return UNKNOWN_STATUS
    except BaseException:
        kill_and_reap(pid)
        raise
    status = reap(pid)
    _end_reaped_group(pid, end)
    return status


def end_timed_out(pid: int) -> None:
    """End the child ``pid``, past its deadline, and its group as an ended trial's
    (:func:`reap_ending_group`), so that the group's resource tracker still unlinks the
    shared memory the objective left."""
    if hasattr(os, "waitid"):
        reap_ending_group(pid, time.monotonic())
    else:
        kill_and_reap(pid)


def _leads_own_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid != os.getpgrp()
    except OSError:
        return False


def _exited_by(pid: int, deadline: float | None) -> bool:
    """Wait, without reaping it, for the child ``pid`` to exit; ``False`` if ``deadline``
    passes first. ``ChildProcessError`` if it was reaped already (SIGCHLD ignored)."""
    if deadline is None:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        return True
    return _wait_until(lambda: _exited_now(pid), deadline)


def _wait_until(done: Callable[[], bool], end: float) -> bool:
    """Poll ``done`` with growing pauses (from half a millisecond, at most 20 ms) until
    it is true or the monotonic time ``end`` passes; whether it came true."""
    pause = 0.0005
    while not done():
        left = end - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(2 * pause, 0.02)
    return True


def _group_empty(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return True
    return False


def _has_live_member(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is alive, not a zombie (Linux ``/proc``;
    ``True`` where that cannot be told). A helper's zombie stays in the group until its
    new parent reaps it, and an init that reaps late (a container's) would hold up every
    such trial for the whole grace."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    found = False
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            if int(fields[2]) != pgid:
                continue
        except (OSError, ValueError, IndexError):
            continue
        found = True
        if fields[0] not in (b"Z", b"X"):
            return True
    return not found  # no member seen at all: this /proc may not show the group


def _end_reaped_group(pid: int, end: float) -> None:
    """Wait until ``end`` for the group whose leader ``pid`` is reaped to end after its
    SIGTERM, and SIGKILL what is left (never the pid alone: it may be reused)."""
    try:
        _wait_until(lambda: _group_empty(pid) or not _has_live_member(pid), end)
    finally:  # members alive after the grace (or a Ctrl-C during it), or zombies only
        _signal_group(pid, signal.SIGKILL)


def _signal_group(pid: int, number: int) -> bool:
    """Send signal ``number`` to the group ``pid``; whether there was one to signal."""
    try:
        os.killpg(pid, number)
    except (ProcessLookupError, PermissionError):
        return False
    return True
