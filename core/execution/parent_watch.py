"""End an evaluation child's process group when the process that forked it dies.

``PR_SET_PDEATHSIG`` kills the child alone: the programs its objective started, in the
child's process group, were reparented to init and ran on. A Dask worker SIGKILLed by
its nanny on Ctrl-C left every running trial's ``subprocess`` behind, as did a driver
killed with SIGKILL. The child therefore watches its parent on a pidfd, in a daemon
thread, and SIGKILLs its whole group when the parent has exited. A signal sent at the
parent's death cannot do it: ``PR_SET_PDEATHSIG`` with SIGKILL kills the child before
anything of it runs, and a Python handler for another signal runs only in the main
thread between two bytecodes, not while the objective waits in native code.

The watching thread needs the GIL, though. An objective that holds it in native code (a
C extension that does not release it, a ``ctypes.PyDLL`` call, a catastrophic ``re``
match) is not ended when its parent dies, as ``PR_SET_PDEATHSIG`` ended it at once, but
only when it lets go of the GIL and Python code runs again: a GIL-holding sleep of 8 s
outlived its parent's SIGKILL, sent 0.5 s in, by 7.5 s. One that never lets go runs on
with its group: the trial's deadline was kept by the parent.

A process the objective forks (a ``multiprocessing`` helper, a nested evaluation)
closes the watch's descriptors and does not watch the child's parent (a fork copies only
the forking thread). The thread is also stopped before the first of the ``os.fork`` calls
in flight in the child and started again after the last, in the forking process, for
Python 3.12:
it warns (``DeprecationWarning``) of a fork in a process with more than one thread,
counted before the after-fork hooks restart the watch, so it rarely sees it (4 of 120
forks measured: it counts the system's threads, and the stopped one may not have exited
yet). Python 3.13 counts after those hooks and warns at every fork; 3.11 never warns.
The stop is kept on every version, where it costs a thread start per fork, so that each
runs the one path the tests check. No lock is held across a fork: one held from the
before-fork hook to the after-fork one deadlocked against logging's own at-fork lock, and
against an after-fork hook of another library that forks again. The watch needs
``os.pidfd_open`` (Linux 5.3+); elsewhere the child only dies with its parent.
"""

from __future__ import annotations

import os
import select
import signal
import threading

import attrs


@attrs.frozen
class _Watch:
    """The parent's pidfd, and a pipe whose byte wakes the watching thread to stop it."""

    parent: int
    wake_read: int
    wake_write: int

    def close(self) -> None:
        for fd in (self.parent, self.wake_read, self.wake_write):
            try:
                os.close(fd)
            except OSError:
                pass


_watch: _Watch | None = None
_thread: threading.Thread | None = None
_forks_in_flight = 0
"""Forks between their before-fork and after-in-parent hooks: threads of the objective
fork at once, and the hooks run outside CPython's own fork serialisation."""
_counting = threading.Lock()
"""Guards the count and the stop or start of the watch, never across a fork; the watching
thread never takes it, so a join under it ends."""
_counted = threading.local()
"""``depth``: this thread's forks counted in ``_forks_in_flight``; a before-fork hook
interrupted (a Ctrl-C) before it counted leaves its after-fork hook nothing to uncount."""


def end_group_with_parent(parent: int) -> bool:
    """SIGKILL this process's group (this process alone if it does not lead one) once
    the process ``parent`` has exited; ``False`` where there is no pidfd to watch it on.

    The caller must check that ``parent`` is still its parent after this call: a pid
    that already exited may have been given to another process.
    """
    global _watch
    try:
        parent_fd = os.pidfd_open(parent)
    except (AttributeError, OSError):  # no pidfd_open here, an old kernel, or it is gone
        return False
    wake_read, wake_write = os.pipe()  # like the pidfd, closed on exec
    os.set_blocking(wake_read, False)  # _stop drains it
    _watch = _Watch(parent_fd, wake_read, wake_write)
    _start()
    return True


def _start() -> None:
    global _thread
    if _watch is None:
        return
    _thread = threading.Thread(
        target=_end_group_once_gone,
        args=(_watch,),
        name="ensembo-parent-watch",
        daemon=True,
    )
    _thread.start()


def _end_group_once_gone(watch: _Watch) -> None:
    try:
        ready, _, _ = select.select([watch.parent, watch.wake_read], [], [])
    except (OSError, ValueError):  # a descriptor closed under it: nothing to watch
        return
    if watch.parent in ready:
        _kill_own_group()


def _kill_own_group() -> None:
    """SIGKILL the group this process leads; never the group of a process that does not
    lead its own (``setpgid`` failed): that one is the parent's, with others in it."""
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _stop_before_fork() -> None:
    """Stop the watch before the first fork in flight, so Python 3.12 does not count it
    and warn of a fork in a multi-threaded process. Nothing at all in the driver."""
    global _forks_in_flight
    if _watch is None:
        return
    with _counting:
        _counted.depth = getattr(_counted, "depth", 0) + 1
        _forks_in_flight += 1
        if _forks_in_flight == 1:
            _stop()


def _start_in_parent() -> None:
    """Start the watch again in the forking process after the last fork in flight."""
    global _forks_in_flight
    if _watch is None or getattr(_counted, "depth", 0) == 0:
        return
    with _counting:
        _counted.depth -= 1
        _forks_in_flight -= 1
        if _forks_in_flight == 0:
            _stop()  # ends a stop a Ctrl-C interrupted in the before-fork hook
            _start()


def _stop() -> None:
    """Wake the watching thread, wait for it to end and take the wake bytes back, or
    the next watch would end at once; safe to run again after an interrupted run."""
    global _thread
    if _watch is None or _thread is None:
        return
    os.write(_watch.wake_write, b"x")
    _thread.join()
    try:
        while os.read(_watch.wake_read, 64):
            pass
    except BlockingIOError:
        pass
    _thread = None


def _forget_in_child() -> None:
    """A process forked by the child is not the evaluation: it closes the watch, and
    counts no fork (its copy of ``_counting`` may be held by another thread's hook)."""
    global _watch, _thread, _forks_in_flight, _counting, _counted
    _counting = threading.Lock()
    _counted = threading.local()
    _forks_in_flight = 0
    if _watch is not None:
        _watch.close()
    _watch, _thread = None, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_stop_before_fork,
        after_in_parent=_start_in_parent,
        after_in_child=_forget_in_child,
    )
