"""Every ensembo error survives pickling (a worker process or a dask task raising it sends
it pickled): type, message, attributes and notes. Unpickling called ``__init__`` with the
message alone, which failed for each error that takes its fields (SpaceError,
ExperimentError, UnknownComponentError, MissingDependencyError)."""

from __future__ import annotations

import inspect
import pickle

import pytest

from ensembo import errors
from ensembo.bench.optimizers.base import MissingOutsideExtras
from ensembo.ensemble_keeper import PredictionsNeededError
from ensembo.experiment import ExperimentProblems
from ensembo.spaces.problems import SpaceDefinitionError

ARGUMENTS = {
    "EnsemboError": ("something failed",),
    "SpaceError": ("params.k", "must be an int"),
    "ExperimentError": ("surrogate", "unknown option"),
    "UnknownComponentError": ("surrogate", "gpp", ["gp", "rf"], "plugin x failed to load"),
    "DuplicatePluginError": ("surrogate", "gp", "a", "b", "c"),
    "PluginContractError": ("no fit method",),
    "ComponentOptionError": ("k must be >= 1",),
    "TrialError": ("told twice",),
    "StorageError": ("another study",),
    "MissingDependencyError": ("the dask backend", "dask", "dask"),
    "ExecutionError": ("no workers",),
}
"""Arguments to build each class in ensembo.errors with; a class added there without
them fails the test, so that it is checked too."""

ERROR_CLASSES = sorted(
    (cls for cls in vars(errors).values()
     if inspect.isclass(cls) and issubclass(cls, BaseException)
     and cls.__module__ == errors.__name__),
    key=lambda cls: cls.__name__)


def round_trip(error: BaseException) -> BaseException:
    error.add_note("while building the study")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert again.args == error.args
    assert again.__notes__ == ["while building the study"]
    return again


def test_every_error_class_is_checked():
    assert {cls.__name__ for cls in ERROR_CLASSES} == set(ARGUMENTS)


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda cls: cls.__name__)
def test_an_error_survives_pickling(cls):
    error = cls(*ARGUMENTS[cls.__name__])
    again = round_trip(error)
    assert vars(again) == vars(error)


def test_a_missing_dependency_is_still_an_import_error_with_its_message():
    error = errors.MissingDependencyError("the dask backend", "dask", "dask")
    assert round_trip(error).msg == error.msg == str(error)


@pytest.mark.parametrize("error", [
    SpaceDefinitionError([errors.SpaceError("a", "bad"), errors.SpaceError("b", "worse")]),
    ExperimentProblems([errors.ExperimentError("seed", "not an int")]),
    PredictionsNeededError("caruana"),
    MissingOutsideExtras("optuna's GP sampler", "torch"),
], ids=lambda error: type(error).__name__)
def test_subclasses_elsewhere_with_their_own_fields_survive_too(error):
    round_trip(error)
