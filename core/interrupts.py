"""Ctrl-C held back for the length of a write that must not be cut in two.

A SIGINT raises ``KeyboardInterrupt`` wherever the main thread is: in the middle of
serialising a trial's row it left the result unwritten while the study in memory had
already counted it (3 of 25 interrupted runs lost a told result). Inside
:func:`deferred` the signal is only noted, and raised when the block is done.
Inside :func:`sigterm_as_interrupt` a SIGTERM takes the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any


def _raises_like_python(handler: object) -> bool:
    """Whether ``handler`` is Python's own, or one chained in front of it that marks
    what it wraps (``__wrapped__``, as :func:`interrupt_not_swallowed` does)."""
    while handler is not signal.default_int_handler and hasattr(handler, "__wrapped__"):
        handler = handler.__wrapped__
    return handler is signal.default_int_handler


def _held(number: int) -> bool:
    """Whether :func:`deferred` holds signal ``number`` back: SIGINT when its handler
    raises like Python's; SIGTERM when :func:`sigterm_as_interrupt` turned it into a
    Ctrl-C that no SIGINT handler takes (SIGINT ignored, as in a batch script's
    background job), since it would raise ``KeyboardInterrupt`` mid-write itself."""
    if number == signal.SIGINT:
        return _raises_like_python(signal.getsignal(signal.SIGINT))
    return _takes_sigterm_as_ctrl_c(signal.getsignal(signal.SIGTERM)) and not callable(
        signal.getsignal(signal.SIGINT)
    )


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Raise a Ctrl-C that arrives inside the block when the block ends. Only the main
    thread gets signals, and only Python's own handler (or one chained to it) is
    replaced: a program that installed its own keeps it, and a block inside another
    leaves the outer one to raise. The noted Ctrl-C is handed to the handler the block
    found, so one chained to Python's notes it too. A SIGTERM taken as a Ctrl-C
    (:func:`sigterm_as_interrupt`) waits too, also with SIGINT ignored."""
    main = threading.current_thread() is threading.main_thread()
    held = [number for number in (signal.SIGINT, signal.SIGTERM) if main and _held(number)]
    if not held:
        yield
        return
    found = {number: signal.getsignal(number) for number in held}
    caught: list[int] = []

    def note(number: int, frame: object) -> None:
        caught.append(number)

    if signal.SIGTERM in found:  # a child forked inside still gets SIGTERM's own action
        note.previous_sigterm_action = found[signal.SIGTERM].previous_sigterm_action
    for number in held:
        signal.signal(number, note)
    try:
        yield
    finally:
        for number, handler in found.items():
            signal.signal(number, handler)
    if caught:
        found[caught[0]](caught[0], None)
        raise KeyboardInterrupt  # a chained handler that let it pass


@contextlib.contextmanager
def interrupt_not_swallowed() -> Iterator[None]:
    """Raise ``KeyboardInterrupt`` when the block ends if a Ctrl-C inside it raised one
    that the block swallowed: some learners catch it in ``fit`` themselves
    (``MLPClassifier`` only warns "Training interrupted by user." and returns a
    half-trained model), so the trial would be stored complete and the run go on.

    The SIGINT handler in place still runs first (a learner that lets the interrupt
    through stops at once; a program's own handler that does not raise keeps its
    meaning). Only the main thread gets signals, so elsewhere the block runs as it is;
    a block inside another leaves both to raise."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    raised: list[int] = []

    def chained(number: int, frame: Any) -> None:
        try:
            previous(number, frame)
        except KeyboardInterrupt:
            raised.append(number)
            raise

    chained.__wrapped__ = previous  # so deferred() still holds writes
    signal.signal(signal.SIGINT, chained)
    try:
        yield
    except Exception as error:  # a learner that turned the interrupt into an error
        if raised:
            raise KeyboardInterrupt from error
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if raised:
        raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[threading.Event]:
    """Stop on SIGTERM (``scancel``, ``docker stop``, ``systemctl stop``) as on Ctrl-C.

    SIGTERM's default action ends this process at once: the trials it was running stay
    "running" and the programs they started (a trial's process group) are left orphaned.
    Inside the block a SIGTERM is handed to the SIGINT handler in place, so the run stops
    as on Ctrl-C (trials marked interrupted, their process groups ended) and a write
    inside :func:`deferred` still finishes first; with SIGINT ignored (a background job)
    it raises ``KeyboardInterrupt`` itself. The event yielded is set once a SIGTERM came.
    Processes forked inside get SIGTERM's previous action back (a trial's child must die
    of it). Only the main thread gets signals: elsewhere the block runs as it is."""
    received = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = signal.getsignal(signal.SIGTERM)

    def interrupt(number: int, frame: object) -> None:
        received.set()
        on_interrupt = signal.getsignal(signal.SIGINT)
        if not callable(on_interrupt):
            raise KeyboardInterrupt
        on_interrupt(signal.SIGINT, frame)

    interrupt.previous_sigterm_action = _action_before_any(previous)
    interrupt.takes_sigterm_as_ctrl_c = True
    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _takes_sigterm_as_ctrl_c(handler: object) -> bool:
    """Whether ``handler`` is the SIGTERM handler of a :func:`sigterm_as_interrupt`
    (not the one of a :func:`deferred` holding it, which only notes it)."""
    return getattr(handler, "takes_sigterm_as_ctrl_c", False)


def _action_before_any(handler: object) -> object:
    """SIGTERM's action before any :func:`sigterm_as_interrupt`: inside nested blocks
    the inner one's previous handler is the outer one's, which a forked child must not
    get back (it would take SIGTERM as a Ctrl-C instead of dying of it)."""
    if hasattr(handler, "previous_sigterm_action"):
        return handler.previous_sigterm_action
    return handler if handler is not None else signal.SIG_DFL


def _previous_sigterm_action_in_child() -> None:
    """A forked child does not stop its parent's run: it gets SIGTERM's action back."""
    handler = signal.getsignal(signal.SIGTERM)
    previous = getattr(handler, "previous_sigterm_action", None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def raised_by_signal_handler(error: BaseException) -> bool:
    """Whether ``error`` came from a Python signal handler now installed, run while the
    code the traceback goes through was interrupted: a service's
    ``signal(SIGTERM, lambda *_: sys.exit(0))`` raises its SystemExit inside whatever
    learner or objective runs, which must stop the program, not fail a trial."""
    handlers = set()
    for number in signal.valid_signals():
        try:
            handler = signal.getsignal(number)
        except (ValueError, OSError):
            continue
        code = getattr(handler, "__code__", None) or getattr(
            getattr(handler, "__func__", None), "__code__", None)
        if code is not None:
            handlers.add(code)
    frames = error.__traceback__
    while frames is not None:
        if frames.tb_frame.f_code in handlers:
            return True
        frames = frames.tb_next
    return False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_previous_sigterm_action_in_child)
