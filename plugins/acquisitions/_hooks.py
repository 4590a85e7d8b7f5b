"""Registers the built-in acquisition functions."""

from ensembo.hookspecs import hookimpl


@hookimpl
def ensembo_add_acquisitions():
    return {}
