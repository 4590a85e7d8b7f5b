"""ensembo itself, with any registered plugin combination.

``ensembo:<surrogate>+<acquisition>+<acquisition optimizer>``, e.g. ``ensembo:gp+ei+lbfgs``
or ``ensembo:rf+ei+local-search``; shorter forms keep the Study defaults for the rest
(``ensembo:tpe``, ``ensembo:gp``). ``ensembo:random`` is random search.
"""

from __future__ import annotations

import attrs

from ensembo import defaults
from ensembo.bench.optimizers.base import Objective
from ensembo.bench.problem import Problem
from ensembo.errors import UnknownComponentError
from ensembo.registry import registry

PREFIX = "ensembo:"
KINDS = ("surrogate", "acquisition", "acquisition_optimizer")


@attrs.frozen(kw_only=True)
class EnsemboOptimizer:
    name: str
    surrogate: str | None
    acquisition: str = "ei"
    acquisition_optimizer: str = defaults.AUTO

    @classmethod
    def from_spec(cls, spec: str) -> EnsemboOptimizer:
        parts = spec[len(PREFIX) :].split("+")
        if not parts[0] or len(parts) > 3 or not all(parts):
            raise UnknownComponentError(
                "benchmark optimizer",
                spec,
                ["ensembo:random", "ensembo:<surrogate>[+<acquisition>[+<acquisition optimizer>]]"],
            )
        if parts[0] == "random":
            return cls(name=spec, surrogate=None)
        chosen = dict(zip(KINDS, parts))
        return cls(name=spec, **chosen)

    def check_registered(self) -> None:
        """Fail before any run starts if a named plugin is not registered."""
        names = {
            "surrogate": self.surrogate,
            "acquisition": self.acquisition,
            "acquisition_optimizer": self.acquisition_optimizer,
        }
        known = registry()
        for kind, name in names.items():
            if name is None or name == defaults.AUTO:
                continue
            available = known.names(kind)
            if name not in available:
                raise UnknownComponentError(kind.replace("_", " "), name, available)

    def prepare(self) -> None:
        """Plugin discovery is once per process, like an import: not part of overhead."""
        registry()

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        from ensembo.study import Study

        study = Study(
            problem.space_for_ensembo(),
            surrogate=self.surrogate,
            acquisition=self.acquisition,
            acquisition_optimizer=self.acquisition_optimizer,
            seed=seed,
        )
        study.optimize(objective, n_trials=budget, catch=())
