"""``conditional``: synthetic tree-structured problems with known optima.

* ``choice-3branch``: a flat choice between branches of dimension 2, 3 and 6 built from
  Branin, Hartmann3 and Hartmann6 (shifted so the best branch is not the largest);
  ``x0`` is shared by all branches.
* ``tree-2level``: a choice inside a branch. Branch ``A`` is a smooth bowl with an
  integer; branch ``B`` holds a second choice (``B1``: one log-scaled float, ``B2``:
  Hartmann3) and a hyperparameter ``b_shared`` shared by ``B1`` and ``B2``; ``s`` is
  shared by everything.
"""

from __future__ import annotations

import math

import numpy as np

from ensembo.bench.functions import (
    BRANIN_MINIMUM,
    HARTMANN3_MINIMUM,
    HARTMANN6_MINIMUM,
    TEST_FUNCTIONS,
)
from ensembo.bench.parameters import (
    ActiveWhen,
    choice_parameter,
    float_parameter,
    int_parameter,
)
from ensembo.bench.problem import Outcome, Problem
from ensembo.bench.suite import Suite

BRANCH_SHIFT = {"branin": 0.3, "hartmann3": 4.0, "hartmann6": 3.5}
BRANIN_SCALE = 50.0
CHOICE_OPTIMUM = min(
    BRANCH_SHIFT["branin"] + BRANIN_MINIMUM / BRANIN_SCALE,
    BRANCH_SHIFT["hartmann3"] + HARTMANN3_MINIMUM,
    BRANCH_SHIFT["hartmann6"] + HARTMANN6_MINIMUM,
)
TREE_OPTIMUM = 0.0


def _branch_value(branch: str, unit: list[float]) -> float:
    function = TEST_FUNCTIONS[branch]
    value = function(function.from_unit(np.array(unit)))
    if branch == "branin":
        value /= BRANIN_SCALE
    return BRANCH_SHIFT[branch] + value


def choice_problem() -> Problem:
    branch = choice_parameter("branch", ["branin", "hartmann3", "hartmann6"])
    parameters = [branch, float_parameter("x0", 0.0, 1.0)]
    extra = {"branin": 1, "hartmann3": 2, "hartmann6": 5}
    for name, count in extra.items():
        parameters += [
            float_parameter(
                f"{name}_x{i}", 0.0, 1.0, active_when=ActiveWhen(parent="branch", values=[name])
            )
            for i in range(1, count + 1)
        ]

    def evaluate(config):
        name = config["branch"]
        unit = [config["x0"]] + [config[f"{name}_x{i}"] for i in range(1, extra[name] + 1)]
        return Outcome(loss=_branch_value(name, unit))

    return Problem(
        name="choice-3branch",
        parameters=parameters,
        evaluate=evaluate,
        budget=80,
        optimum=CHOICE_OPTIMUM,
    )


def tree_problem() -> Problem:
    in_a = ActiveWhen(parent="top", values=["A"])
    in_b = ActiveWhen(parent="top", values=["B"])
    parameters = [
        choice_parameter("top", ["A", "B"]),
        float_parameter("s", 0.0, 1.0),
        float_parameter("a_x", 0.0, 1.0, active_when=in_a),
        int_parameter("a_n", 1, 10, active_when=in_a),
        choice_parameter("inner", ["B1", "B2"], active_when=in_b),
        float_parameter("b_shared", 0.0, 1.0, active_when=in_b),
        float_parameter(
            "b1_rate", 1e-4, 1.0, log=True, active_when=ActiveWhen(parent="inner", values=["B1"])
        ),
        float_parameter("b2_y", 0.0, 1.0, active_when=ActiveWhen(parent="inner", values=["B2"])),
        float_parameter("b2_z", 0.0, 1.0, active_when=ActiveWhen(parent="inner", values=["B2"])),
    ]

    def evaluate(config):
        s = config["s"]
        if config["top"] == "A":
            loss = 0.5 + (s - 0.3) ** 2 + (config["a_x"] - 0.6) ** 2 + 0.02 * abs(config["a_n"] - 7)
        elif config["inner"] == "B1":
            loss = (
                0.2
                + (s - 0.8) ** 2
                + (config["b_shared"] - 0.25) ** 2
                + (math.log10(config["b1_rate"]) + 2) ** 2 / 4
            )
        else:
            hartmann = TEST_FUNCTIONS["hartmann3"]([s, config["b2_y"], config["b2_z"]])
            loss = hartmann - HARTMANN3_MINIMUM + (config["b_shared"] - 0.5) ** 2
        return Outcome(loss=loss)

    return Problem(
        name="tree-2level",
        parameters=parameters,
        evaluate=evaluate,
        budget=80,
        optimum=TREE_OPTIMUM,
    )


def problems():
    return [choice_problem(), tree_problem()]


SUITE = Suite(
    name="conditional",
    description="3-way choice (2/3/6-D branches), two-level tree; shared hyperparameters",
    problems=problems,
)
