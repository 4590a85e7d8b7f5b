"""ensembo: sequential model-based optimization that builds ensembles while it searches."""

import logging

from ensembo.ensemble import Ensemble, EnsembleContext
from ensembo.errors import (
    DuplicatePluginError,
    EnsemboError,
    ExperimentError,
    PluginContractError,
    SpaceError,
    StorageError,
    TrialError,
    UnknownComponentError,
)
from ensembo.hookspecs import declares_options, hookimpl
from ensembo.registry import registry
from ensembo.study import Study
from ensembo.trials import Evaluation, History, Trial, TrialState

logging.getLogger(__name__).addHandler(logging.NullHandler())

__version__ = "0.1.0"

__all__ = [
    "DuplicatePluginError",
    "Ensemble",
    "EnsembleContext",
    "EnsemboError",
    "Evaluation",
    "ExperimentError",
    "History",
    "PluginContractError",
    "SpaceError",
    "StorageError",
    "Study",
    "Trial",
    "TrialError",
    "TrialState",
    "UnknownComponentError",
    "declares_options",
    "hookimpl",
    "registry",
]
