"""Registers the built-in ensemble strategies."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.ensembles.agnostic_bayes import AgnosticBayes
from ensembo.plugins.ensembles.best import BestSingle
from ensembo.plugins.ensembles.eo import EnsembleOptimization
from ensembo.plugins.ensembles.esmbo import ESMBO
from ensembo.plugins.ensembles.posthoc import PostHocSelection
from ensembo.plugins.ensembles.segor import SEGOR


@hookimpl
def ensembo_add_ensemble_strategies():
    return {
        "best": BestSingle,
        "posthoc": PostHocSelection,
        "agnostic-bayes": AgnosticBayes,
        "esmbo": ESMBO,
        "eo": EnsembleOptimization,
        "segor": SEGOR,
    }
