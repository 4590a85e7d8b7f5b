"""Registers the built-in losses."""

from ensembo.hookspecs import hookimpl


@hookimpl
def ensembo_add_losses():
    return {}
