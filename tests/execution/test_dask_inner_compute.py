"""An objective that computes a dask collection itself (dask-ml, ``xgboost.dask``,
``dask.dataframe``) on a Dask cluster where each evaluation runs in a process forked inside
the worker: the computation runs in that process, not through the worker's client, whose
event-loop thread the fork does not have (it waited until the trial timed out). The
``execution:`` key ``isolate: false`` runs the objective in the worker instead. One
LocalCluster with one worker per test, a few seconds."""

from __future__ import annotations

import sys

import pytest

from ensembo import Study, TrialState

pytest.importorskip("distributed")

import cloudpickle  # noqa: E402

from ensembo.errors import ExperimentError  # noqa: E402
from ensembo.execution import ExecutionSettings  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import it

TRIAL_TIMEOUT = 8.0
"""Ample for a fork and a tiny computation; where the computation waited for the
worker's client, the trial failed at this limit."""


def sum_computed_by_dask(config):
    import dask.array as da

    return float(da.arange(10, chunks=3).sum().compute()) + config["x"]


def has_worker() -> bool:
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def dask_sum_and_whether_a_worker_is_seen(config):
    return {"loss": sum_computed_by_dask(config), "worker": has_worker()}


def run(settings: ExecutionSettings, space, **limits) -> Study:
    """Two trials; the lambda makes Dask ship the objective with cloudpickle, by value
    (a module-level function goes by reference, and the workers cannot import this one)."""
    with settings.open_backend() as backend:
        study = Study(space, surrogate=None, seed=0)
        study.optimize(
            lambda c: dask_sum_and_whether_a_worker_is_seen(c),
            n_trials=2,
            executor=backend,
            **limits,
        )
    return study


def test_a_dask_computation_in_an_isolated_evaluation_runs_locally(flat_space):
    study = run(
        ExecutionSettings(backend="dask", n_jobs=1), flat_space, trial_timeout=TRIAL_TIMEOUT
    )
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2
    for trial in study.trials:
        assert trial.loss == pytest.approx(45.0 + trial.config["x"])
        assert trial.info["worker"] is False  # worker_client() cannot work in a fork


def test_isolate_false_runs_the_objective_in_the_worker(flat_space):
    study = run(
        ExecutionSettings.from_document({"backend": "dask", "n_jobs": 1, "isolate": False}),
        flat_space,
    )
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2
    assert all(trial.info["worker"] is True for trial in study.trials)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"backend": "dask", "isolate": "no"},
            r"execution\.isolate: must be true or false, got 'no'",
        ),
        ({"n_jobs": 2, "isolate": False}, r"execution\.isolate: only the dask backend takes it"),
        ({"isolate": True}, r"execution\.isolate: only the dask backend takes it; 'serial'"),
    ],
)
def test_a_wrong_isolate_names_the_key(document, message):
    with pytest.raises(ExperimentError, match=message):
        ExecutionSettings.from_document(document)


def test_isolate_is_read_for_dask():
    assert ExecutionSettings.from_document({"backend": "dask"}).isolate is None
    assert ExecutionSettings.from_document({"backend": "dask", "isolate": True}).isolate is True
