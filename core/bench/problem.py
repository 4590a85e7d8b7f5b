"""What an optimizer is benchmarked on: a space, an objective and what "good" means."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from ConfigSpace import ConfigurationSpace

from ensembo.bench.parameters import (
    Parameter,
    check_order,
    refuse_untranslatable,
    to_configspace,
)


@attrs.frozen(kw_only=True)
class Outcome:
    """One evaluation: the loss the optimizer sees and, for ML problems, the test loss
    of the same configuration (never shown to the optimizer)."""

    loss: float = attrs.field(converter=float)
    test_loss: float | None = None


@attrs.frozen(kw_only=True)
class Problem:
    """A benchmark problem.

    ``optimum`` is the known minimum of the loss (synthetic problems), so simple
    regret = best loss - optimum; ``None`` for ML problems, which report validation and
    test error instead. ``evaluate`` receives only the active hyperparameters.
    """

    name: str
    parameters: tuple[Parameter, ...] = attrs.field(converter=tuple)
    evaluate: Callable[[Mapping[str, Any]], Outcome] = attrs.field(eq=False, repr=False)
    budget: int
    optimum: float | None = None
    deterministic: bool = True
    # ensembo's own form of the space (e.g. a library space name, with its imputation
    # rules), when there is one; the other libraries get their translations.
    ensembo_space: Any = attrs.field(default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        check_order(self.parameters)
        if self.ensembo_space is not None:
            refuse_untranslatable(_as_configspace(self.ensembo_space), self.name)

    def configspace(self):
        return to_configspace(self.parameters, name=self.name)

    def space_for_ensembo(self):
        return self.ensembo_space if self.ensembo_space is not None else self.configspace()


def _as_configspace(space: Any) -> ConfigurationSpace:
    """ensembo's space (a ConfigSpace, an ensembo space or a library space name) as the
    ConfigSpace it tunes, to check that the anchors' translation loses nothing of it."""
    if isinstance(space, ConfigurationSpace):
        return space
    if isinstance(space, str):
        from ensembo import spaces

        space = spaces.load(space)
    return space.to_configspace()


def problems_by_name(problems: Sequence[Problem]) -> dict[str, Problem]:
    return {p.name: p for p in problems}
