"""Registers the built-in acquisition optimizers."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisition_optimizers.local_search import LocalSearchOptimizer
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer


@hookimpl
def ensembo_add_acquisition_optimizers():
    return {
        "random": RandomSearchOptimizer,
        "local-search": LocalSearchOptimizer,
        "lbfgs": LbfgsOptimizer,
    }
