"""Registers the built-in initial designs."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.initial_designs.default_design import DefaultDesign
from ensembo.plugins.initial_designs.lhs_design import LatinHypercubeDesign
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.plugins.initial_designs.sobol_design import SobolDesign


@hookimpl
def ensembo_add_initial_designs():
    return {
        "random": RandomDesign,
        "default": DefaultDesign,
        "sobol": SobolDesign,
        "lhs": LatinHypercubeDesign,
    }
