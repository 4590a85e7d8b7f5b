"""The frame an evaluation child sends its result in, and the parent's read of it.

The child writes one frame to a pipe: a header (the payload's length, and whether it
still stops joblib workers of its own after sending it) and the pickled outcome. The
parent reads it against the trial's deadline and stops as soon as it is whole, without
waiting for EOF: a process the objective forked and left running holds the pipe's write
end too, and EOF would come only when that process ends. A child that exits before its
frame is whole crashed; its exit is seen on a pidfd or, where there is none, by polling.
"""

from __future__ import annotations

import os
import select
import struct
import time

import attrs

from ensembo.execution.process_group import has_exited

_CHUNK = 1 << 16
HEADER = struct.Struct("<Q?")
"""Written before the payload: its length in bytes, and whether the child still stops
joblib workers of its own after sending it (``child._exit_deadline``)."""
_EXIT_POLL = 0.05
"""Seconds between checks that the child exited, where there is no pidfd."""


@attrs.frozen
class Frame:
    """What the child sent: its pickled outcome (empty if it crashed first), and whether
    it then stops joblib workers of its own before exiting."""

    payload: bytes | bytearray
    workers_stopping: bool = False


def send_frame(fd: int, data: bytes, workers_stopping: bool = False) -> None:
    """Write ``data`` to ``fd`` behind its header (:func:`read_frame`), and close it."""
    for part in (HEADER.pack(len(data), workers_stopping), data):
        view = memoryview(part)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    os.close(fd)


def exit_watch(pid: int) -> int | None:
    """A descriptor that becomes readable when the child ``pid`` exits (a pidfd, Linux
    5.3+), without reaping it; ``None`` where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd_open here, or an old kernel (ENOSYS)
        return None


def read_frame(
    fd: int, deadline: float | None, exited: int | None = None, pid: int = 0
) -> Frame | None:
    """The frame :func:`send_frame` sent on ``fd``, as soon as it is whole.

    Its payload is empty if the pipe reaches EOF, or the child exits with nothing more in
    the pipe, before the payload is whole: the child crashed. The exit is seen on ``exited``
    (:func:`exit_watch`) becoming readable or, where there is no pidfd, by polling the
    child ``pid`` every ``_EXIT_POLL`` s (:func:`.process_group.has_exited`). ``None`` if
    the deadline passes first. Not waiting for EOF matters: a process the objective forked and left
    running holds the write end too, and EOF would come only when it ends.
    """
    data = bytearray()
    size: int | None = None
    watched = [fd] if exited is None else [fd, exited]
    polled = exited is None and pid > 0 and hasattr(os, "waitid")
    gone = False  # the child has exited: all it wrote is in the pipe already
    while True:
        if gone:
            wait: float | None = 0.0
        else:
            wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if polled:
                wait = _EXIT_POLL if wait is None else min(wait, _EXIT_POLL)
        ready, _, _ = select.select(watched, [], [], wait)
        if fd not in ready:
            if gone:
                return Frame(b"")
            if ready or (polled and has_exited(pid)):
                gone, watched = True, [fd]
                continue
            if deadline is not None and time.monotonic() >= deadline:
                return None
            continue
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return Frame(b"")
        data += chunk
        if size is None and len(data) >= HEADER.size:
            size, workers_stopping = HEADER.unpack_from(data)
            del data[: HEADER.size]
        if size is not None and len(data) >= size:
            del data[size:]
            return Frame(data, workers_stopping)
