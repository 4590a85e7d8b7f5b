"""``synthetic``: six classic test functions with known minima.

Budgets follow the issue: 50 evaluations up to 3-D, 80 above.
"""

from __future__ import annotations

import numpy as np

from ensembo.bench.functions import TEST_FUNCTIONS, TestFunction
from ensembo.bench.parameters import float_parameter
from ensembo.bench.problem import Outcome, Problem
from ensembo.bench.suite import Suite

NAMES = ("branin", "hartmann3", "hartmann6", "levy5", "rosenbrock4", "ackley5")


def budget_for(dimension: int) -> int:
    return 50 if dimension <= 3 else 80


def function_problem(function: TestFunction) -> Problem:
    names = [f"x{i}" for i in range(function.dimension)]

    def evaluate(config):
        return Outcome(loss=function(np.array([config[n] for n in names], dtype=float)))

    return Problem(
        name=function.name,
        parameters=[
            float_parameter(n, low, high)
            for n, (low, high) in zip(names, function.bounds, strict=True)
        ],
        evaluate=evaluate,
        budget=budget_for(function.dimension),
        optimum=function.minimum,
    )


def problems():
    return [function_problem(TEST_FUNCTIONS[name]) for name in NAMES]


SUITE = Suite(
    name="synthetic",
    description="Branin, Hartmann3/6, Levy-5, Rosenbrock-4, Ackley-5 (known f*)",
    problems=problems,
)
