"""A benchmark suite: a named, lazily built list of problems.

Suites are discovered from the modules of :mod:`ensembo.bench.suites`; each module
exposes ``SUITE``. Adding a suite means adding a module there, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence

import attrs

from ensembo.bench.problem import Problem
from ensembo.errors import EnsemboError


class UnknownSuiteError(EnsemboError, LookupError):
    """A suite or problem name that is not registered."""


@attrs.frozen(kw_only=True)
class Suite:
    """``problems`` builds the problems (data sets may be loaded there, so it is lazy).

    ``default_optimizers`` is what ``ensembo bench SUITE`` runs without ``--optimizers``.
    """

    name: str
    description: str
    problems: Callable[[], Sequence[Problem]] = attrs.field(eq=False, repr=False)
    default_optimizers: tuple[str, ...] = attrs.field(
        default=(
            "ensembo:random",
            "random",
            "smac-hpo",
            "smac-bb",
            "optuna-tpe",
            "optuna-gp",
            "hyperopt-tpe",
            "skopt-gp",
        ),
        converter=tuple,
    )

    def problem(self, name: str) -> Problem:
        for problem in self.problems():
            if problem.name == name:
                return problem
        raise UnknownSuiteError(f"suite {self.name!r} has no problem {name!r}")


def _suite_modules() -> tuple[dict[str, Suite], dict[str, str]]:
    """Suites found, and suite modules that failed to import (module -> error)."""
    import ensembo.bench.suites as package

    found, broken = {}, {}
    for module_info in pkgutil.iter_modules(package.__path__):
        if module_info.name.startswith("_"):
            continue
        qualified = f"{package.__name__}.{module_info.name}"
        try:
            module = importlib.import_module(qualified)
        except Exception as error:  # one broken suite must not take the others down
            broken[qualified] = f"{type(error).__name__}: {error}"
            continue
        suite = getattr(module, "SUITE", None)
        if isinstance(suite, Suite):
            found[suite.name] = suite
    return found, broken


def available_suites() -> dict[str, Suite]:
    """Every ``SUITE`` defined by an importable module of :mod:`ensembo.bench.suites`."""
    return _suite_modules()[0]


def get_suite(name: str) -> Suite:
    suites, broken = _suite_modules()
    if name not in suites:
        failures = "".join(
            f"; {module} failed to import ({error})" for module, error in broken.items()
        )
        raise UnknownSuiteError(
            f"unknown benchmark suite {name!r}; available: "
            f"{', '.join(sorted(suites)) or '(none)'}{failures}"
        )
    return suites[name]
