"""Ctrl-C held back for the length of a write that must not be cut in two.

A SIGINT raises ``KeyboardInterrupt`` wherever the main thread is: in the middle of
serialising a trial's row it left the result unwritten while the study in memory had
already counted it (3 of 25 interrupted runs lost a told result). Inside
:func:`deferred` the signal is only noted, and raised when the block is done.
"""

from __future__ import annotations

import contextlib
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
