"""Evaluate in a forked child process so that a time or memory limit really holds.

A thread cannot be stopped and a Dask task cannot be killed, but a process can. The
child is forked (no pickling of the objective, no re-import, milliseconds to start),
optionally capped with ``RLIMIT_AS`` (the memory limit is counted on top of the
address space the child inherits at the fork). The child leads a process group of its
own, and the group is what is killed, so programs the objective started stop with it: at
the deadline, once the trial has ended, so that a helper the objective forked and left
running (a daemonic ``multiprocessing.Process``, a prefetch worker) ends with its trial,
and when the worker or driver that forked the child dies (a Dask worker killed by its
nanny on Ctrl-C; :mod:`ensembo.execution.parent_watch`). At the deadline and at the end
the group gets SIGTERM, then SIGKILL after a short grace, so that a ``multiprocessing`` resource
tracker, which ignores SIGTERM, can still unlink the shared memory the objective left.
The result travels back pickled through a pipe, in a frame whose header gives its length
(:mod:`ensembo.execution.result_frame`); the parent reads it against the deadline, and
stops reading as soon as it is whole (a forked helper holds the pipe's write end too, so
EOF would wait for the helper).

The joblib/loky workers of the process that forked are its own: the child drops
the executor it inherited and starts workers of its own if the objective asks
(:mod:`ensembo.execution.inherited_executors`). It stops those after sending its result,
saying so in the frame's header: the parent then gives it up to
:data:`~ensembo.execution.inherited_executors.SHUTDOWN_SECONDS` more to exit, so that
stopping them is not charged to the objective's wall time.

Forking works inside daemonic processes (Dask workers, pool workers), where
``multiprocessing`` refuses to start children. POSIX only. Ending the child and its group,
and reading how it ended: :mod:`ensembo.execution.process_group`.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from ensembo import interrupts
from ensembo.execution.inherited_executors import (
    SHUTDOWN_SECONDS,
    forget_inherited_executors,
    own_executors,
    shut_down,
)
from ensembo.execution.outcome import (
    Outcome,
    OutcomeKind,
    describe_exception,
    exited,
    portable,
    raised,
    traceback_text,
)
from ensembo.execution.parent_watch import end_group_with_parent
from ensembo.execution.process_group import (
    end_timed_out,
    exit_description,
    kill_and_reap,
    reap_ending_group,
)
from ensembo.execution.result_frame import exit_watch, read_frame, send_frame

_PR_SET_PDEATHSIG = 1
_STOPPING_GRACE = 2.0
"""Seconds beyond the workers' shutdown a child has to flush its output and exit."""


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
"""Held from the pipe to the fork, so that no sibling evaluation inherits a write end."""


def _fresh_fork_lock_in_child() -> None:
    """A forked process gets :data:`_FORK_LOCK` as it was: held, when the fork was an
    evaluation's (or another thread's was under way), by a thread the child does not
    have. An objective that itself evaluates in a child (nested) then waited on it until
    its own wall-time limit killed it."""
    global _FORK_LOCK
    _FORK_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_fork_lock_in_child)


def evaluate(
    objective: Callable[[dict[str, Any]], Any],
    config: dict[str, Any],
    limits: TrialLimits,
    ship: bool = False,
) -> Outcome:
    """Run ``objective(config)`` here, or in a child process when limits are set.

    This is the function shipped to workers: ``ship=True`` where the outcome is then
    pickled back to the driver (a process pool, Dask), so that what cannot make the
    trip is replaced here (:func:`portable`). In the driver's own process the outcome
    is kept as it is: a model holding a lock is fine there. KeyboardInterrupt
    propagates, from the child process too, so that Ctrl-C stops a serial run; every
    exception becomes an outcome, and so does the objective's ``sys.exit()``
    (:func:`~ensembo.execution.outcome.exited`): a failure of its trial, not the run's end.
    """
    if limits.any:
        return evaluate_in_child(objective, config, limits)
    outcome = _call(objective, config)
    return portable(outcome) if ship else outcome


def _call(objective: Callable[[dict[str, Any]], Any], config: dict[str, Any]) -> Outcome:
    """``objective(config)`` as an outcome; only the objective's own SystemExit is
    caught as a failure, so one raised by the driver's code, or by the program's signal
    handler while the objective ran (a service's ``sys.exit`` on SIGTERM), still ends
    the run."""
    try:
        return Outcome(kind=OutcomeKind.RETURNED, value=objective(dict(config)))
    except SystemExit as sys_exit:
        if interrupts.raised_by_signal_handler(sys_exit):
            raise
        return exited(sys_exit)
    except Exception as error:
        return raised(error)


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
    pid = 0
    read_end: int | None = None
    exited: int | None = None
    try:
        # From the pipe to a stored pid, a Ctrl-C is only noted (main thread; no signal
        # reaches a worker thread): raised before the pid is known, it would leave the
        # child running the whole evaluation, unreaped. It is raised when the block
        # ends, inside this ``try``, whose except kills the child.
        with interrupts.deferred():
            # A sibling forked while this write end is open would inherit it and keep the
            # pipe from reaching EOF until that sibling exits: fork and close under one lock.
            with _FORK_LOCK:
                read_end, write_end = os.pipe()
                try:
                    _flush_std_streams()  # else the child writes buffered output again
                    pid = os.fork()
                except BaseException:  # EAGAIN (a pids.max or ulimit -u): no pipe left
                    os.close(write_end)  # and read_end in the finally below
                    raise
                if pid == 0:  # child: never returns
                    os.close(read_end)
                    _child_main(objective, config, limits, write_end, parent)
                os.close(write_end)
        _own_process_group(pid)  # the child does it too: whichever runs first
        exited = exit_watch(pid)
        if on_start is not None:
            on_start(pid)
        deadline = None if limits.wall_time is None else time.monotonic() + limits.wall_time
        frame = read_frame(read_end, deadline, exited, pid)
    except BaseException:  # Ctrl-C or shutdown from the fork on: the child must not linger
        if pid:
            kill_and_reap(pid)
        raise
    finally:
        if read_end is not None:
            os.close(read_end)
        if exited is not None:
            os.close(exited)
    if frame is None:
        end_timed_out(pid)
        return Outcome(
            kind=OutcomeKind.TIMEOUT,
            message=(
                f"timeout: the evaluation exceeded its wall-time limit of {limits.wall_time:g} s "
                "and was killed"
            ),
        )
    status = reap_ending_group(pid, _exit_deadline(deadline, frame.workers_stopping))
    if frame.payload:
        try:
            outcome = pickle.loads(frame.payload)
        except Exception as error:
            return Outcome(
                kind=OutcomeKind.RAISED,
                message=f"unreadable result from the child: {describe_exception(error)}",
            )
        return _propagating_interrupt(outcome)
    return Outcome(
        kind=OutcomeKind.CRASHED,
        message=f"crashed: the evaluation process {exit_description(status)}"
        + _memory_limit_note(limits),
    )


def _exit_deadline(deadline: float | None, workers_stopping: bool) -> float | None:
    """When a child that sent its result must have exited: at the trial's deadline, or,
    while it stops joblib workers of its own, once that shutdown has had its time
    (``trial_timeout`` bounds the objective's work, not the cleanup after it)."""
    if deadline is None or not workers_stopping:
        return deadline
    return max(deadline, time.monotonic() + SHUTDOWN_SECONDS + _STOPPING_GRACE)


def _memory_limit_note(limits: TrialLimits) -> str:
    """Native code (OpenBLAS, a C extension) that cannot allocate under the memory limit
    often aborts or exits instead of raising MemoryError: the crash may be the limit."""
    if limits.memory is None:
        return ""
    return (f" (it ran under a memory limit of {limits.memory} bytes, which native code "
            "may die of instead of raising MemoryError)")


def _propagating_interrupt(outcome: Outcome) -> Outcome:
    """The child's outcome, but its KeyboardInterrupt raised here, as :func:`evaluate`
    lets it through in-process: the run stops and records the trial INTERRUPTED, to be
    run again (as a failure it was never retried). The objective's ``sys.exit()`` came
    back as a failure (:func:`_run`), not as an interrupt."""
    if outcome.kind is OutcomeKind.RAISED and isinstance(outcome.error, KeyboardInterrupt):
        raise outcome.error
    return outcome


def _child_main(objective, config, limits: TrialLimits, write_end: int, parent: int) -> None:
    code = 0
    try:
        _own_process_group(0)
        _fresh_std_streams()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides what Ctrl-C means
        # Its own group is a background one: reading the terminal would stop it for ever
        # (SIGTTIN); ignored, such a read fails with an error the trial records.
        signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        _end_with(parent)
        forget_inherited_executors()  # the parent's joblib workers are not ours
        if limits.memory is not None:
            _limit_address_space(limits.memory)
        payload = _payload(_run(objective, config, limits), limits)
        own = own_executors()
        # the result first: stopping the workers can take seconds the objective did not use
        send_frame(write_end, payload, workers_stopping=bool(own))
        shut_down(own)  # before the exit: the driver then ends the group
    except BaseException:
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _run(objective, config, limits: TrialLimits) -> Outcome:
    """``objective(config)`` as an outcome, in the child: ``memory:`` whenever our
    memory limit is behind what it raised."""
    try:
        return Outcome(kind=OutcomeKind.RETURNED, value=objective(dict(config)))
    except KeyboardInterrupt as interrupt:
        return raised(interrupt)
    except BaseException as error:
        if limits.memory is not None and _memory_error_behind(error) is not None:
            # our limit stopped it, also when the objective raised its own error on the
            # MemoryError; without a limit of ours it is an error like any other
            return Outcome(
                kind=OutcomeKind.MEMORY,
                message=_memory_message(limits, error),
                traceback=traceback_text(error),
            )
        if isinstance(error, SystemExit):  # the objective's: a failure, as in-process
            return exited(error)
        return raised(error)


def _memory_error_behind(error: BaseException) -> MemoryError | None:
    """The MemoryError that ``error`` is, or was raised on (its ``__cause__`` or
    ``__context__``, as an objective that catches MemoryError and raises its own error,
    or exits, leaves it); ``None`` if there is none."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, MemoryError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _memory_message(limits: TrialLimits, error: BaseException, during: str = "") -> str:
    """Why the memory limit failed the trial, naming the limit and the MemoryError
    (and what the objective raised on it)."""
    memory_error = _memory_error_behind(error)
    what = describe_exception(memory_error)
    if memory_error is not error:
        what = f"{what}, raised as {describe_exception(error)}"
    limit = f"its memory limit of {limits.memory} bytes"
    return f"memory: the evaluation exceeded {limit}{during} ({what})"


def _payload(outcome: Outcome, limits: TrialLimits) -> bytes:
    """The outcome pickled for the parent. Pickling copies the result (a model, an
    array): one that fitted within the memory limit may not fit twice, and then the
    limit is what stopped the trial, so it fails ``memory:`` as if the objective had
    run out itself, not as a result that cannot be sent back."""
    memory_limited = limits.memory is not None
    try:
        return pickle.dumps(portable(outcome, memory_limited=memory_limited))
    except MemoryError as error:
        if not memory_limited:
            raise
        message = _memory_message(limits, error, " while its result was pickled to be sent back")
    del outcome  # the result that did not fit: the failure's pickle needs the room
    return pickle.dumps(Outcome(kind=OutcomeKind.MEMORY, message=message))


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # None (no console), closed, or a stream that cannot flush
            pass


def _fresh_std_streams() -> None:
    """Bind ``sys.stdout``/``sys.stderr`` to new, empty buffers on the same files.

    What the driver printed but had not flushed when it forked (another thread may print
    between the flush and the fork) is copied into the child; written at the child's
    exit, it would appear once more per evaluation. Streams without a file (a notebook's,
    ``capsys``) are kept.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            raw = io.FileIO(stream.fileno(), "w", closefd=False)
            fresh = io.TextIOWrapper(
                io.BufferedWriter(raw),
                encoding=stream.encoding,
                errors=stream.errors,
                line_buffering=stream.line_buffering,
                write_through=getattr(stream, "write_through", False),
            )
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation included
            continue
        setattr(sys, name, fresh)
        if getattr(sys, f"__{name}__") is stream:
            setattr(sys, f"__{name}__", fresh)


def _own_process_group(pid: int) -> None:
    """Make the child lead a process group of its own, so that killing the group also
    stops what the evaluation started (a training program, a shell), and Ctrl-C at the
    terminal reaches the driver only."""
    try:
        os.setpgid(pid, 0)
    except OSError:  # the child already exited, or already did it
        pass


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
    hard limit already in force (``ulimit -v``) is kept and wins if lower. Processes the
    evaluation starts (joblib workers, a ``subprocess``) inherit the same cap, each as
    its own total: a fresh worker, smaller than this process, has more room than
    ``memory``, and together they may map several times it.
    """
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = _address_space() + memory
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _end_with(parent: int) -> None:
    """End this process and its group when ``parent`` dies, or, where that cannot be
    watched (no pidfd), have the kernel SIGKILL this process alone (Linux)."""
    if not end_group_with_parent(parent):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the watch or prctl took effect
        os._exit(1)
