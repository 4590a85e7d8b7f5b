"""Registers the built-in losses."""

from ensembo.hookspecs import hookimpl
from ensembo.plugins.losses.c_bound import CBoundLoss
from ensembo.plugins.losses.classification import LogLoss, ZeroOneLoss
from ensembo.plugins.losses.margins import SigmoidMarginLoss, SquaredMarginLoss
from ensembo.plugins.losses.regression import AbsoluteError, HuberLoss, SquaredError, TukeyLoss


@hookimpl
def ensembo_add_losses():
    return {
        "zero-one": ZeroOneLoss,
        "log-loss": LogLoss,
        "squared-margin": SquaredMarginLoss,
        "sigmoid-margin": SigmoidMarginLoss,
        "c-bound": CBoundLoss,
        "mse": SquaredError,
        "mae": AbsoluteError,
        "huber": HuberLoss,
        "tukey": TukeyLoss,
    }
