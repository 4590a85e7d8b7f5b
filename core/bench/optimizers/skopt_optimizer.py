"""``skopt-gp``: scikit-optimize's GP minimizer (defaults: gp_hedge, 10 random starts).

scikit-optimize has no conditional spaces: every parameter becomes one dimension of a
flat box and values of inactive parameters are ignored by the objective.
"""

from __future__ import annotations

import attrs

from ensembo.bench.optimizers.base import Objective, import_or_skip
from ensembo.bench.problem import Problem


def native_dimensions(space_module, parameters):
    dimensions, names = [], []
    for p in parameters:
        if p.kind == "choice":
            if len(p.choices) < 2:
                continue  # constants are filled in by the objective's typing
            dimension = space_module.Categorical(list(p.choices), name=p.name)
        elif p.kind == "int":
            prior = "log-uniform" if p.log else "uniform"
            dimension = space_module.Integer(int(p.low), int(p.high), prior=prior, name=p.name)
        else:
            prior = "log-uniform" if p.log else "uniform"
            dimension = space_module.Real(p.low, p.high, prior=prior, name=p.name)
        dimensions.append(dimension)
        names.append(p.name)
    return dimensions, names


@attrs.frozen(kw_only=True)
class SkoptOptimizer:
    name: str = "skopt-gp"

    def prepare(self) -> None:
        import_or_skip(self.name, "skopt", "scikit-optimize")

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        skopt = import_or_skip(self.name, "skopt", "scikit-optimize")
        dimensions, names = native_dimensions(skopt.space, problem.parameters)
        constants = {
            p.name: p.choices[0]
            for p in problem.parameters
            if p.kind == "choice" and len(p.choices) < 2
        }
        optimizer = skopt.Optimizer(dimensions, base_estimator="GP", random_state=seed)
        for _ in range(budget):
            point = optimizer.ask()
            loss = objective({**constants, **dict(zip(names, point, strict=True))})
            optimizer.tell(point, loss)
