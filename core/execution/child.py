"""Evaluate in a forked child process so that a time or memory limit really holds.

A thread cannot be stopped and a Dask task cannot be killed, but a process can. The
child is forked (no pickling of the objective, no re-import, milliseconds to start),
optionally capped with ``RLIMIT_AS`` (the memory limit is counted on top of the
address space the child inherits at the fork), and asked by the kernel to die with its parent
(``PR_SET_PDEATHSIG``) so that no evaluation outlives the worker or driver that started
it. The result travels back pickled through a pipe; the parent reads it against the
deadline and kills the child with SIGKILL when the deadline passes.

Forking works inside daemonic processes (Dask workers, pool workers), where
``multiprocessing`` refuses to start children. POSIX only.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import resource
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from ensembo.execution.outcome import Outcome, OutcomeKind, describe_exception, portable, raised

_PR_SET_PDEATHSIG = 1
_CHUNK = 1 << 16
_PROPAGATED = (KeyboardInterrupt, SystemExit)
"""What an objective may raise to stop the run rather than fail its trial."""


@attrs.frozen(kw_only=True)
class TrialLimits:
    """Per-evaluation limits: wall time in seconds, and in bytes the address space the
    evaluation may map beyond what its process held when it was forked."""

    wall_time: float | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.gt(0))
    )
    memory: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.gt(0))
    )

    @property
    def any(self) -> bool:
        return self.wall_time is not None or self.memory is not None


NO_LIMITS = TrialLimits()


_FORK_LOCK = threading.Lock()


def evaluate(
    objective: Callable[[dict[str, Any]], Any], config: dict[str, Any], limits: TrialLimits
) -> Outcome:
    """Run ``objective(config)`` here, or in a child process when limits are set.

    This is the function shipped to workers. KeyboardInterrupt and SystemExit propagate,
    from the child process too, so that Ctrl-C stops a serial run; every other exception
    becomes an outcome.
    """
    if limits.any:
        return evaluate_in_child(objective, config, limits)
    try:
        return portable(Outcome(kind=OutcomeKind.RETURNED, value=objective(dict(config))))
    except Exception as error:
        return portable(raised(error))


def evaluate_in_child(
    objective: Callable[[dict[str, Any]], Any],
    config: dict[str, Any],
    limits: TrialLimits = NO_LIMITS,
    on_start: Callable[[int], None] | None = None,
) -> Outcome:
    """Fork, evaluate in the child, and wait for its result up to ``limits.wall_time``.

    ``on_start(pid)`` lets a supervisor track the child so it can kill it on shutdown.
    """
    parent = os.getpid()
    # A sibling forked while this write end is open would inherit it and keep the pipe
    # from reaching EOF until that sibling exits: fork and close under one lock.
    with _FORK_LOCK:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns
            os.close(read_end)
            _child_main(objective, config, limits, write_end, parent)
        os.close(write_end)
    if on_start is not None:
        on_start(pid)
    deadline = None if limits.wall_time is None else time.monotonic() + limits.wall_time
    try:
        payload = _read_until(read_end, deadline)
    except BaseException:  # Ctrl-C or shutdown while waiting: the child must not linger
        _kill(pid)
        raise
    finally:
        os.close(read_end)
    if payload is None:
        _kill(pid)
        return Outcome(
            kind=OutcomeKind.TIMEOUT,
            message=(
                f"timeout: the evaluation exceeded its wall-time limit of {limits.wall_time:g} s "
                "and was killed"
            ),
        )
    status = _reap(pid)
    if payload:
        try:
            outcome = pickle.loads(payload)
        except Exception as error:
            return Outcome(
                kind=OutcomeKind.RAISED,
                message=f"unreadable result from the child: {describe_exception(error)}",
            )
        return _propagating_interrupts(outcome)
    return Outcome(
        kind=OutcomeKind.CRASHED,
        message=f"crashed: the evaluation process {_exit_description(status)}",
    )


def _propagating_interrupts(outcome: Outcome) -> Outcome:
    """The child's outcome, but its KeyboardInterrupt or SystemExit raised here, as
    :func:`evaluate` lets them through in-process: the run stops and records the trial
    INTERRUPTED, to be run again (as a failure it was never retried)."""
    if outcome.kind is OutcomeKind.RAISED and isinstance(outcome.error, _PROPAGATED):
        raise outcome.error
    return outcome


def _child_main(objective, config, limits: TrialLimits, write_end: int, parent: int) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl-C means
        _die_with(parent)
        if limits.memory is not None:
            _limit_address_space(limits.memory)
        try:
            outcome = Outcome(kind=OutcomeKind.RETURNED, value=objective(dict(config)))
        except MemoryError as error:
            outcome = Outcome(
                kind=OutcomeKind.MEMORY,
                message=(
                    f"memory: the evaluation exceeded its memory limit of {limits.memory} "
                    f"bytes ({describe_exception(error)})"
                ),
            )
        except BaseException as error:
            outcome = raised(error)
        _write_all(write_end, pickle.dumps(portable(outcome)))
    except BaseException:
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _address_space() -> int:
    """Bytes of address space this process has mapped now (0 where unknown)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_address_space(memory: int) -> None:
    """Let the evaluation map ``memory`` bytes more than the forked process already has.

    The child inherits its parent's mappings (interpreter, imported libraries, thread
    stacks, malloc arenas: often several hundred MB, GBs with deep-learning libraries).
    A cap on the total would fail trials that allocate nothing when the parent is large,
    and how much room a cap left would depend on what the parent happened to map. A
    hard limit already in force (``ulimit -v``) is kept and wins if lower.
    """
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = _address_space() + memory
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _die_with(parent: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.close(fd)


def _read_until(fd: int, deadline: float | None) -> bytes | None:
    """Everything written to ``fd`` until EOF, or ``None`` if the deadline passes first."""
    chunks = []
    while True:
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return None
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid)


def _reap(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _exit_description(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"was killed by signal {signal.Signals(number).name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)} before returning a result"
