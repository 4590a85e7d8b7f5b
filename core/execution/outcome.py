"""What came of one evaluation, as seen by the process that ran it.

Workers never raise the objective's exceptions at the driver: they return an
:class:`Outcome`, so that infrastructure failures (a lost worker, a broken pool) are the
only exceptions a backend has to translate, and every way an evaluation can end maps to
exactly one trial state in :mod:`ensembo.execution.recording`.
"""

from __future__ import annotations

import enum
import pickle
import traceback
from typing import Any

import attrs


class OutcomeKind(enum.StrEnum):
    RETURNED = "returned"
    """The objective returned a value (which ``Study.tell`` still validates)."""
    RAISED = "raised"
    """The objective raised; the trial fails unless the error is not in ``catch``."""
    TIMEOUT = "timeout"
    """The wall-time limit was reached and the evaluation was killed."""
    MEMORY = "memory"
    """The evaluation ran out of its memory limit."""
    CRASHED = "crashed"
    """The process evaluating the trial died (signal, ``os._exit``); retried."""
    LOST = "lost"
    """The worker holding the evaluation went away (Dask worker, broken pool); retried."""

    @property
    def retried(self) -> bool:
        return self in (OutcomeKind.CRASHED, OutcomeKind.LOST)


@attrs.frozen(kw_only=True)
class Outcome:
    kind: OutcomeKind
    value: Any = attrs.field(default=None, eq=False)
    error: BaseException | None = attrs.field(default=None, eq=False)
    message: str | None = None


def describe_exception(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(error)).strip()


def raised(error: BaseException) -> Outcome:
    return Outcome(kind=OutcomeKind.RAISED, error=error, message=describe_exception(error))


def portable(outcome: Outcome) -> Outcome:
    """The outcome, or a copy without the parts that cannot be pickled back to the driver.

    An unpicklable exception keeps its message; an unpicklable return value turns the
    outcome into a failure that says so.
    """
    try:
        pickle.dumps(outcome)
        return outcome
    except Exception as error:  # pickling raises many types (TypeError, PicklingError, ...)
        if outcome.kind is OutcomeKind.RETURNED:
            return Outcome(
                kind=OutcomeKind.RAISED,
                message="the objective's result cannot be sent back to the driver: "
                + describe_exception(error),
            )
        return attrs.evolve(outcome, error=None)
