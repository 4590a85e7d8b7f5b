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


class MissingOutsideExtras(MissingDependencyError):
    """A library no ensembo extra installs (torch, for Optuna's GP sampler): the message
    names the package to install, where naming the ``bench`` extra would send the user to
    an install that does not provide it."""

    def __init__(self, feature: str, distribution: str):
        self.feature, self.module, self.extra = feature, distribution, None
        super(MissingDependencyError, self).__init__(
            f"{feature} needs the {distribution!r} package, which is not installed and which "
            f"no ensembo extra installs. Install it with: pip install {distribution}"
        )


def import_or_skip(optimizer: str, module: str, distribution: str, extra: str | None = "bench"):
    """Import an anchor's library, or raise :class:`MissingDependencyError` (run skipped).

    ``extra`` is the ensembo extra that installs ``distribution``, None when none does."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        feature = f"benchmark optimizer {optimizer!r}"
        if extra is None:
            raise MissingOutsideExtras(feature, distribution) from error
        raise MissingDependencyError(feature, distribution, extra) from error
