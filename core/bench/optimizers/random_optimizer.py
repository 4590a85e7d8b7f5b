"""``random``: uniform sampling with ConfigSpace, independent of ensembo's code."""

from __future__ import annotations

import attrs

from ensembo.bench.optimizers.base import Objective, import_or_skip
from ensembo.bench.problem import Problem


@attrs.frozen(kw_only=True)
class RandomOptimizer:
    name: str = "random"

    def prepare(self) -> None:
        import_or_skip(self.name, "ConfigSpace", "ConfigSpace")

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        space = problem.configspace()
        space.seed(seed)
        configurations = space.sample_configuration(budget)
        for configuration in configurations if budget > 1 else [configurations]:
            objective(dict(configuration))
