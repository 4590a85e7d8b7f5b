"""Where evaluations run: the small contract the optimize loop drives.

A backend accepts evaluations, says which have ended, and turns each into an
:class:`~ensembo.execution.outcome.Outcome`. Scheduling belongs to the engine underneath
(a thread pool of forked children, any ``concurrent.futures.Executor``, Dask); the loop
only keeps at most :attr:`Backend.slots` evaluations in flight so that every new
suggestion is made with the freshest history.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Hashable
from typing import Any, Protocol, runtime_checkable

from ensembo.errors import ExecutionError
from ensembo.execution.child import TrialLimits, evaluate
from ensembo.execution.outcome import Outcome, describe_exception

Objective = Callable[[dict[str, Any]], Any]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask: ``taskset``, a SLURM or
    container cpuset), not all the machine has."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        return counter() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def check_serializable(
    objective: Callable[..., Any], dumps: Callable[[Any], bytes], receivers: str, advice: str
) -> None:
    """Refuse, before the first trial is handed out, an objective ``dumps`` cannot send
    to ``receivers``: otherwise the run stops at the first result, naming a pickling
    detail, with a trial already out."""
    try:
        dumps(objective)
    except Exception as error:  # PicklingError, TypeError, AttributeError, ...
        raise ExecutionError(
            f"the objective {objective!r} cannot be sent to {receivers} "
            f"({describe_exception(error)}). {advice}"
        ) from error


@runtime_checkable
class Backend(Protocol):
    @property
    def slots(self) -> int:
        """How many evaluations may run at once (re-read every iteration)."""

    def submit(self, objective: Objective, config: dict[str, Any], limits: TrialLimits) -> Hashable:
        """Start evaluating ``objective(config)``; return a handle for it."""

    def wait(self, handles: Collection[Hashable], timeout: float | None = None) -> list[Hashable]:
        """Block until at least one of ``handles`` has ended, or ``timeout`` seconds
        passed; return those that have ended (maybe none after a timeout)."""

    def outcome(self, handle: Hashable) -> Outcome:
        """The outcome of an ended evaluation (a lost worker is ``OutcomeKind.LOST``)."""

    def close(self, *, interrupted: bool = False) -> None:
        """Release what the backend started; ``interrupted`` also stops running work."""


class InlineBackend:
    """Serial evaluation in the calling thread, the study's historical behaviour.

    Evaluation happens in :meth:`wait`, after the loop has recorded the trial as
    running, so that Ctrl-C inside the objective finds the trial to mark interrupted.
    With limits the evaluation runs in a forked child (see :mod:`ensembo.execution.child`).
    """

    slots = 1

    def __init__(self) -> None:
        self._queued: dict[int, tuple[Objective, dict[str, Any], TrialLimits]] = {}
        self._outcomes: dict[int, Outcome] = {}
        self._next = 0

    def submit(self, objective: Objective, config: dict[str, Any], limits: TrialLimits) -> int:
        handle, self._next = self._next, self._next + 1
        self._queued[handle] = (objective, config, limits)
        return handle

    def wait(self, handles: Collection[int], timeout: float | None = None) -> list[int]:
        """Runs the next queued evaluation (``timeout`` cannot apply: it runs here)."""
        ended = [h for h in handles if h in self._outcomes]
        if ended:
            return ended
        handle = next(h for h in handles if h in self._queued)
        self._outcomes[handle] = evaluate(*self._queued.pop(handle))
        return [handle]

    def outcome(self, handle: int) -> Outcome:
        return self._outcomes.pop(handle)

    def close(self, *, interrupted: bool = False) -> None:
        self._queued.clear()
        self._outcomes.clear()
