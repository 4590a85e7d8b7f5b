"""Registers the built-in acquisition optimizers."""

from ensembo.hookspecs import hookimpl


@hookimpl
def ensembo_add_acquisition_optimizers():
    return {}
