"""When to ask: immediately, or after the evaluations about to end.

Asking fits the surrogate in the driver. When that takes longer than evaluations do
(a GP on a busy machine against a fast objective), asking after every single result
leaves the other freed workers idle behind the driver: one ask for 7 slots, one for the
8th, and so on. :class:`Pacing` measures how long asks and evaluations take and, when
the next running evaluation should end before an ask would be done, says how long to
wait for it, so that one ask fills all those slots together. With fast asks (the usual
case) it never delays anything.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Collection, Hashable

_HISTORY = 16
_MARGIN = 1.5
_SLACK_SECONDS = 0.2


class Pacing:
    def __init__(self) -> None:
        self.ask_seconds = 0.0
        self._durations: deque[float] = deque(maxlen=_HISTORY)
        self._submitted: dict[Hashable, float] = {}

    def asked(self, seconds: float) -> None:
        self.ask_seconds = seconds

    def submitted(self, handle: Hashable) -> None:
        self._submitted[handle] = time.monotonic()

    def ended(self, handle: Hashable, seconds: float | None) -> None:
        """``seconds``: the evaluation's own wall time, as measured where it ran (the
        driver notices ends late while it is busy asking, so its clock would not do)."""
        self._submitted.pop(handle, None)
        if seconds is not None:
            self._durations.append(seconds)

    def gather_deadline(self, running: Collection[Hashable]) -> float | None:
        """Until when (``time.monotonic()``) to collect more ends before asking, or
        ``None`` to ask now: no ask measured yet, or no running evaluation expected to
        end before an ask would be done. Never further than one ask duration away."""
        if not running or not self._durations or self.ask_seconds <= 0:
            return None
        now = time.monotonic()
        typical = statistics.median(self._durations)
        soonest = max(min(self._submitted.get(h, now) for h in running) + typical - now, 0.0)
        if soonest >= self.ask_seconds:
            return None
        return now + min(self.ask_seconds, soonest * _MARGIN + _SLACK_SECONDS)
