"""SMAC3 anchors through ask/tell: ``smac-hpo`` (random forest) and ``smac-bb`` (GP).

SMAC takes the ConfigSpace (with its conditions) natively. Its output directory goes
to a temporary folder; ``deterministic=True`` since our objectives are deterministic.
"""

from __future__ import annotations

import tempfile
import warnings

import attrs

from ensembo.bench.optimizers.base import Objective, import_or_skip
from ensembo.bench.problem import Problem

FACADES = {"smac-hpo": "HyperparameterOptimizationFacade", "smac-bb": "BlackBoxFacade"}


def _unused_target(config, seed: int = 0) -> float:
    raise RuntimeError("the benchmark drives SMAC through ask/tell")


@attrs.frozen(kw_only=True)
class SmacOptimizer:
    name: str

    def prepare(self) -> None:
        import_or_skip(self.name, "smac", "smac")

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        smac = import_or_skip(self.name, "smac", "smac")
        from smac.runhistory.dataclasses import TrialValue

        with (
            tempfile.TemporaryDirectory(prefix="ensembo-smac-") as output,
            warnings.catch_warnings(),
        ):
            # SMAC's imputation of inactive hyperparameters averages empty slices on
            # conditional spaces; the warnings say nothing about the result.
            warnings.simplefilter("ignore", RuntimeWarning)
            scenario = smac.Scenario(
                problem.configspace(),
                deterministic=problem.deterministic,
                n_trials=budget,
                seed=seed,
                output_directory=output,
            )
            facade = getattr(smac, FACADES[self.name])(
                scenario, _unused_target, overwrite=True, logging_level=40
            )
            for _ in range(budget):
                info = facade.ask()
                facade.tell(info, TrialValue(cost=objective(dict(info.config))))
