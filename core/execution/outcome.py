"""What came of one evaluation, as seen by the process that ran it.

Workers never raise the objective's exceptions at the driver: they return an
:class:`Outcome`, so that infrastructure failures (a lost worker, a broken pool) are the
only exceptions a backend has to translate, and every way an evaluation can end maps to
exactly one trial state in :func:`ensembo.execution.loop.record`.
"""

from __future__ import annotations

import enum
import pickle
import traceback
from typing import Any

import attrs

from ensembo.errors import ExecutionError


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
    traceback: str | None = attrs.field(default=None, eq=False)
    """The objective's traceback as text: it survives any trip between processes."""


class ObjectiveError(ExecutionError):
    """Stands in for an objective's exception that could not travel back from the
    process that ran it (it cannot be pickled, or its ``__init__`` takes other
    arguments than its ``args``): it keeps the type's name, the names of its classes
    (which ``catch`` is matched against) and the message."""

    def __init__(self, type_name: str, type_names: tuple[str, ...], message: str):
        super().__init__(type_name, tuple(type_names), message)
        self.type_name, self.type_names, self.message = type_name, tuple(type_names), message

    def __str__(self) -> str:
        return (
            f"the objective raised {self.message} "
            f"(the {self.type_name} itself could not be sent back)"
        )


class ObjectiveExit(ExecutionError):
    """The objective called ``sys.exit()`` (a library's argparse or click does so on an
    argument it refuses): a failure of its trial, matched against ``catch`` as any
    exception. Let through as SystemExit, it ended the run, often with status 0, and
    left the trial interrupted, to be run first, and exit again, at every resume."""

    def __init__(self, code: Any = None):
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        if self.code is None:  # sys.exit(): SystemExit(None) would say "SystemExit: None"
            return "the objective called sys.exit() (SystemExit)"
        return (
            f"the objective called sys.exit({self.code!r}) "
            f"({describe_exception(SystemExit(self.code))})"
        )


class RemoteTraceback(Exception):
    """Set as ``__cause__`` of an exception re-raised from another process, whose own
    traceback was lost in pickling, so the user still sees where it was raised (as
    ``concurrent.futures`` does)."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0]).rstrip()


def with_remote_traceback(error: BaseException, text: str | None) -> BaseException:
    """An exception from another process lost its traceback in pickling: chain the text
    of it, so the user sees where the objective raised."""
    if error.__traceback__ is None and text and error.__cause__ is None:
        error.__cause__ = RemoteTraceback(text)
    return error


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def stand_in(error: BaseException) -> ObjectiveError:
    return ObjectiveError(
        qualified_name(type(error)),
        tuple(qualified_name(cls) for cls in type(error).__mro__),
        describe_exception(error),
    )


def matches(error: BaseException, catch: tuple[type[BaseException], ...]) -> bool:
    """``isinstance(error, catch)``, by class names for a stand-in of the original."""
    if isinstance(error, ObjectiveError):
        return any(qualified_name(cls) in error.type_names for cls in catch)
    return isinstance(error, catch)


def describe_exception(error: BaseException) -> str:
    """The exception's last traceback line ("Type: message"); an exit's own sentence,
    which its type's module path would only make longer."""
    if isinstance(error, ObjectiveExit):
        return str(error)
    return "".join(traceback.format_exception_only(error)).strip()


def raised(error: BaseException) -> Outcome:
    return Outcome(
        kind=OutcomeKind.RAISED,
        error=error,
        message=describe_exception(error),
        traceback=traceback_text(error),
    )


def exited(sys_exit: SystemExit) -> Outcome:
    """The outcome of an objective that called ``sys.exit()``: it raised
    :class:`ObjectiveExit`, with the SystemExit's traceback (where it was called)."""
    error = ObjectiveExit(sys_exit.code)
    error.__cause__ = sys_exit
    return Outcome(
        kind=OutcomeKind.RAISED, error=error, message=str(error),
        traceback=traceback_text(sys_exit),
    )


def traceback_text(error: BaseException) -> str:
    """The traceback from the objective's frame on: the frames of ensembo's call to it
    tell the user nothing."""
    frames = error.__traceback__
    while (
        frames is not None
        and frames.tb_next is not None
        and frames.tb_frame.f_globals.get("__name__", "").startswith("ensembo.execution.")
    ):
        frames = frames.tb_next
    return "".join(traceback.format_exception(type(error), error, frames))


def portable(outcome: Outcome, *, memory_limited: bool = False) -> Outcome:
    """The outcome, or a copy whose parts that cannot make the trip to the driver are
    replaced: for an outcome that crosses a process boundary only.

    An exception that cannot be pickled, or pickles but cannot be loaded (an
    ``__init__`` taking other arguments), becomes an :class:`ObjectiveError` with its
    type and message; an unpicklable return value turns the outcome into a failure that
    says so. ``memory_limited``: a MemoryError while pickling is raised, not taken for
    a result that cannot be sent, since under a memory limit of ours it is the limit
    that stopped the trial (pickling copies the result, which may not fit twice).
    """
    try:
        pickle.loads(pickle.dumps(outcome.error))
    except Exception as error:  # pickling and loading raise many types (TypeError, ...)
        if memory_limited and isinstance(error, MemoryError):
            raise
        outcome = attrs.evolve(outcome, error=stand_in(outcome.error))
    try:
        pickle.dumps(outcome)
        return outcome
    except Exception as error:
        if memory_limited and isinstance(error, MemoryError):
            raise
        if outcome.kind is OutcomeKind.RETURNED:
            return Outcome(
                kind=OutcomeKind.RAISED,
                message="the objective's result cannot be sent back to the driver: "
                + describe_exception(error),
            )
        return attrs.evolve(outcome, error=None)
