"""Supervised learning on top of the study: tasks, validation, model store, final models."""

from ensembo.ml.artifacts import (
    ArtifactStore,
    DiskArtifactStore,
    MemoryArtifactStore,
    artifact_store_for,
)
from ensembo.ml.final import FinalModels, finalize
from ensembo.ml.fitted_ensemble import FittedEnsemble
from ensembo.ml.loop import run_task
from ensembo.ml.predictions import InvalidPredictionError
from ensembo.ml.selection import SELECTIONS, select_trial
from ensembo.ml.task import Task
from ensembo.ml.validation import CrossValidation, Holdout, Split, validation_scheme

__all__ = [
    "SELECTIONS",
    "ArtifactStore",
    "CrossValidation",
    "DiskArtifactStore",
    "FinalModels",
    "FittedEnsemble",
    "Holdout",
    "InvalidPredictionError",
    "MemoryArtifactStore",
    "Split",
    "Task",
    "artifact_store_for",
    "finalize",
    "run_task",
    "select_trial",
    "validation_scheme",
]
