"""Optuna anchors: ``optuna-tpe`` (multivariate, group) and ``optuna-gp`` (GPSampler).

Conditional spaces are given define-by-run: a parameter is suggested only when its
parent's sampled value activates it, which is how Optuna users write them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import attrs

from ensembo.bench.optimizers.base import Objective, import_or_skip
from ensembo.bench.parameters import Parameter
from ensembo.bench.problem import Problem


def suggest_active(trial, parameters: Sequence[Parameter]) -> dict[str, Any]:
    """Define-by-run: walk the tree, suggesting only active parameters."""
    values: dict[str, Any] = {}
    for p in parameters:
        condition = p.active_when
        if condition is not None and values.get(condition.parent, _MISSING) not in condition.values:
            continue
        if p.kind == "choice":
            values[p.name] = trial.suggest_categorical(p.name, list(p.choices))
        elif p.kind == "int":
            values[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            values[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return values


_MISSING = object()


@attrs.frozen(kw_only=True)
class OptunaOptimizer:
    name: str

    def _sampler(self, optuna, seed: int):
        if self.name == "optuna-gp":
            torch = import_or_skip(self.name, "torch", "torch", extra=None)  # for GPSampler
            torch.set_num_threads(1)
            return optuna.samplers.GPSampler(seed=seed)
        return optuna.samplers.TPESampler(multivariate=True, group=True, seed=seed)

    def prepare(self) -> None:
        import_or_skip(self.name, "optuna", "optuna")
        if self.name == "optuna-gp":
            import_or_skip(self.name, "torch", "torch", extra=None)

    def minimize(self, problem: Problem, objective: Objective, budget: int, seed: int) -> None:
        optuna = import_or_skip(self.name, "optuna", "optuna")
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study = optuna.create_study(sampler=self._sampler(optuna, seed))
            study.optimize(
                lambda trial: objective(suggest_active(trial, problem.parameters)),
                n_trials=budget,
                catch=(),
            )
