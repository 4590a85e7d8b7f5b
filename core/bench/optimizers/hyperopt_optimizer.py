"""``hyperopt-tpe``: Hyperopt's TPE on a nested ``hp.choice`` space.

Each option of a choice is a dict holding the choice value and the parameters it
activates. Hyperopt forbids one label in two places, so a parameter shared by several
options (but not all) gets one label per option (``name@parent=value``), as a Hyperopt
user would write it; the sampled value is mapped back to ``name``. The suffix extends the
one inherited from above: under a parent that is itself shared, each path gets its own
label (``w@top=A@inner=i1``, ``w@top=B@inner=i1``), which Hyperopt requires.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.bench.optimizers.base import Objective, import_or_skip
from ensembo.bench.parameters import Parameter
from ensembo.bench.problem import Problem

VALUE_KEY = "__value__"


def _leaf(hp, p: Parameter, label: str):
    if p.kind == "choice":
        return hp.choice(label, list(p.choices))
    if p.kind == "int":
        if p.log:
            return hp.qloguniform(label, math.log(p.low), math.log(p.high), 1)
        return hp.uniformint(label, int(p.low), int(p.high))
    if p.log:
        return hp.loguniform(label, math.log(p.low), math.log(p.high))
    return hp.uniform(label, p.low, p.high)


def native_space(hp, parameters: Sequence[Parameter]) -> dict[str, Any]:
    """The nested Hyperopt space of the parameters."""
    children: dict[str, list[Parameter]] = {}
    for p in parameters:
        if p.active_when is not None:
            children.setdefault(p.active_when.parent, []).append(p)

    def node(p: Parameter, suffix: str):
        label = p.name + suffix
        below = children.get(p.name)
        if p.kind != "choice" or not below:
            return _leaf(hp, p, label)
        options = []
        for value in p.choices:
            option: dict[str, Any] = {VALUE_KEY: value}
            active = [c for c in below if value in c.active_when.values]
            for child in active:
                shared = len(child.active_when.values) > 1
                child_suffix = f"{suffix}@{p.name}={value}" if shared else suffix
                option[child.name] = node(child, child_suffix)
            options.append(option)
        return hp.choice(label, options)

    return {p.name: node(p, "") for p in parameters if p.active_when is None}


def flatten(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample of :func:`native_space` as ``{name: value}`` over active parameters."""
    flat: dict[str, Any] = {}
    for name, value in sample.items():
        if isinstance(value, dict):
            flat[name] = value[VALUE_KEY]
            flat.update(flatten({k: v for k, v in value.items() if k != VALUE_KEY}))
        else:
            flat[name] = value
    return flat


@attrs.frozen(kw_only=True)
class HyperoptOptimizer:
    name: str = "hyperopt-tpe"

    def prepare(self) -> None:
        import_or_skip(self.name, "hyperopt", "hyperopt")

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        hyperopt = import_or_skip(self.name, "hyperopt", "hyperopt")
        hyperopt.fmin(
            lambda sample: objective(flatten(sample)),
            native_space(hyperopt.hp, problem.parameters),
            algo=hyperopt.tpe.suggest,
            max_evals=budget,
            rstate=np.random.default_rng(seed),
            show_progressbar=False,
        )
