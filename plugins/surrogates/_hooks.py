"""Registers the built-in surrogates."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.surrogates.gp.surrogate import gp, gp_conditional
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.plugins.surrogates.tpe import TreeParzenProposer


@hookimpl
def ensembo_add_surrogates():
    return {
        "gp": gp,
        "gp-cond": gp_conditional,
        "rf": RandomForestSurrogate,
        "tpe": TreeParzenProposer,
    }
