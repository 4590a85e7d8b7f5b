"""Registers the built-in ensemble strategies."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.ensembles.best import BestSingle


@hookimpl
def ensembo_add_ensemble_strategies():
    return {"best": BestSingle}
