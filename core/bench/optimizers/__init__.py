"""Optimizers under benchmark: ensembo plugin combinations and the anchor libraries."""

from __future__ import annotations

from ensembo.bench.optimizers.base import BenchOptimizer, Objective
from ensembo.bench.optimizers.ensembo_optimizer import PREFIX, EnsemboOptimizer
from ensembo.bench.optimizers.hyperopt_optimizer import HyperoptOptimizer
from ensembo.bench.optimizers.optuna_optimizer import OptunaOptimizer
from ensembo.bench.optimizers.random_optimizer import RandomOptimizer
from ensembo.bench.optimizers.skopt_optimizer import SkoptOptimizer
from ensembo.bench.optimizers.smac_optimizer import SmacOptimizer
from ensembo.errors import UnknownComponentError

ANCHORS = {
    "smac-hpo": lambda: SmacOptimizer(name="smac-hpo"),
    "smac-bb": lambda: SmacOptimizer(name="smac-bb"),
    "optuna-tpe": lambda: OptunaOptimizer(name="optuna-tpe"),
    "optuna-gp": lambda: OptunaOptimizer(name="optuna-gp"),
    "hyperopt-tpe": HyperoptOptimizer,
    "skopt-gp": SkoptOptimizer,
    "random": RandomOptimizer,
}


def make_optimizer(spec: str) -> BenchOptimizer:
    """``ensembo:...`` or an anchor name (see :data:`ANCHORS`)."""
    if spec.startswith(PREFIX):
        return EnsemboOptimizer.from_spec(spec)
    if spec not in ANCHORS:
        raise UnknownComponentError(
            "benchmark optimizer", spec, [*ANCHORS, "ensembo:<surrogate>+<acquisition>+<optimizer>"]
        )
    return ANCHORS[spec]()


def is_anchor(spec: str) -> bool:
    return not spec.startswith(PREFIX)


__all__ = ["ANCHORS", "BenchOptimizer", "Objective", "is_anchor", "make_optimizer"]
