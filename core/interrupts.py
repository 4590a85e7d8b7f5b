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


def _raises_like_python(handler: object) -> bool:
    """Whether ``handler`` is Python's own, or one chained in front of it that marks
    what it wraps (``__wrapped__``, as the fits of ``ensembo.ml.task`` do)."""
    while handler is not signal.default_int_handler and hasattr(handler, "__wrapped__"):
        handler = handler.__wrapped__
    return handler is signal.default_int_handler


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Raise a Ctrl-C that arrives inside the block when the block ends. Only the main
    thread gets signals, and only Python's own handler (or one chained to it) is
    replaced: a program that installed its own keeps it, and a block inside another
    leaves the outer one to raise. The noted Ctrl-C is handed to the handler the block
    found, so one chained to Python's notes it too."""
    previous = signal.getsignal(signal.SIGINT)
    main = threading.current_thread() is threading.main_thread()
    if not main or not _raises_like_python(previous):
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        previous(signal.SIGINT, None)
        raise KeyboardInterrupt  # a chained handler that let it pass


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

    interrupt.previous_sigterm_action = previous if previous is not None else signal.SIG_DFL
    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, interrupt.previous_sigterm_action)


def _previous_sigterm_action_in_child() -> None:
    """A forked child does not stop its parent's run: it gets SIGTERM's action back."""
    handler = signal.getsignal(signal.SIGTERM)
    previous = getattr(handler, "previous_sigterm_action", None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_previous_sigterm_action_in_child)
