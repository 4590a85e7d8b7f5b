"""The one interface every optimizer under benchmark implements."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from ensembo.bench.problem import Problem
from ensembo.errors import MissingDependencyError

Objective = Callable[[Mapping[str, Any]], float]


@runtime_checkable
class BenchOptimizer(Protocol):
    """Minimize ``objective`` over ``problem``'s space with exactly ``budget`` calls.

    ``objective`` accepts a full flat assignment or only the active hyperparameters and
    returns the loss; it does the timing and bookkeeping. Adapters translate the
    problem's neutral parameters into their library's native (conditional) form.
    Raise :class:`ensembo.errors.MissingDependencyError` when the library is missing:
    the run is then recorded as skipped, not failed.
    """

    name: str

    def prepare(self) -> None:
        """Imports and one-off per-process setup, done before the clock starts."""

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None: ...


def import_or_skip(optimizer: str, module: str, distribution: str):
    """Import an anchor's library, or raise :class:`MissingDependencyError` (run skipped)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingDependencyError(
            f"benchmark optimizer {optimizer!r}", distribution, "bench"
        ) from error
