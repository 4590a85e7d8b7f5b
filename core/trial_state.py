"""Where a trial is in its life, as :class:`TrialState`.

Its own module, below the trial records: what a history keeps by state
(:mod:`ensembo.history_indexes`) and a run's outcome counts read it, and the records in
:mod:`ensembo.trials` use those. Import it from :mod:`ensembo.trials`, as before.
"""

from __future__ import annotations

import enum
from typing import Any

from ensembo.errors import TrialError


# Not enum.StrEnum: its str()/format() give the value ("complete") where this public enum
# gives "TrialState.COMPLETE"; stored values (.value), comparisons and JSON are the same.
class TrialState(str, enum.Enum):  # noqa: UP042 - keep str()/f-string output unchanged
    """Where a trial is in its life; only ``COMPLETE`` trials carry a loss."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        return self in (TrialState.COMPLETE, TrialState.FAILED)

    @classmethod
    def parse(cls, state: Any) -> TrialState:
        """``state`` as a TrialState; an unknown one is a TrialError listing the valid ones."""
        try:
            return cls(state)
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise TrialError(f"unknown trial state {state!r}; valid: {valid}") from None
