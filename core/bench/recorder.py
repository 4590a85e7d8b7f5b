"""The objective as optimizers see it: it types the configuration, evaluates it, and
records loss and timings, so every adapter is measured the same way."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.bench.parameters import Parameter
from ensembo.bench.problem import Problem
from ensembo.errors import EnsemboError


class BudgetExhausted(EnsemboError, RuntimeError):
    """An optimizer asked for more evaluations than its budget."""


@attrs.frozen(kw_only=True)
class Evaluated:
    config: dict[str, Any]
    loss: float
    test_loss: float | None
    objective_seconds: float
    objective_cpu_seconds: float  # this process's CPU time inside the objective
    finished_at: float  # seconds since the run started


def clocks() -> tuple[float, float]:
    """Wall-clock and process CPU time. Wall time also counts the time other processes
    kept this one off the CPU; CPU time is this process's own work whatever the load."""
    return time.perf_counter(), time.process_time()


def _typed(parameter: Parameter, value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value
    if parameter.kind == "choice":
        for choice in parameter.choices:  # map back to the declared object (e.g. 1 vs "1")
            if choice == value or str(choice) == str(value):
                return choice
        raise ValueError(f"{parameter.name}: {value!r} is not one of {list(parameter.choices)}")
    low, high = parameter.low, parameter.high
    if parameter.kind == "int":
        return int(min(max(round(float(value)), low), high))
    return float(min(max(float(value), low), high))


def canonical_config(parameters: Sequence[Parameter], values: Mapping[str, Any]) -> dict[str, Any]:
    """Only the active parameters, typed and clipped to their bounds.

    ``values`` may be a full (flat) assignment or only the active part; an active
    parameter that is missing is an error naming it.
    """
    config: dict[str, Any] = {}
    for parameter in parameters:
        condition = parameter.active_when
        if condition is not None and not (
            condition.parent in config and config[condition.parent] in condition.values
        ):
            continue
        if parameter.name not in values:
            raise ValueError(f"active parameter {parameter.name!r} has no value in {dict(values)}")
        config[parameter.name] = _typed(parameter, values[parameter.name])
    return config


class Recorder:
    """Callable objective: ``recorder(values) -> loss`` and a log of every evaluation."""

    def __init__(self, problem: Problem, budget: int):
        self.problem = problem
        self.budget = budget
        self.evaluations: list[Evaluated] = []
        self.started = time.perf_counter()

    @property
    def remaining(self) -> int:
        return self.budget - len(self.evaluations)

    def __call__(self, values: Mapping[str, Any]) -> float:
        if self.remaining <= 0:
            raise BudgetExhausted(f"budget of {self.budget} evaluations is used up")
        config = canonical_config(self.problem.parameters, values)
        begin, begin_cpu = clocks()
        outcome = self.problem.evaluate(config)
        end, end_cpu = clocks()
        if not math.isfinite(outcome.loss):
            raise ValueError(f"{self.problem.name}: non-finite loss {outcome.loss} at {config}")
        self.evaluations.append(
            Evaluated(
                config=config,
                loss=outcome.loss,
                test_loss=outcome.test_loss,
                objective_seconds=end - begin,
                objective_cpu_seconds=end_cpu - begin_cpu,
                finished_at=end - self.started,
            )
        )
        return outcome.loss
