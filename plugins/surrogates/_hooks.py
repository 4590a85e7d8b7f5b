"""Registers the built-in surrogates."""

from ensembo.hookspecs import hookimpl


@hookimpl
def ensembo_add_surrogates():
    return {}
