"""On the Dask cluster ensembo starts itself, an objective that crashes its process fails
(or re-runs) its trial and leaves the worker alive: a dead worker whose nanny was still
restarting it when the next crash came left the cluster without workers and stopped the
run. One LocalCluster with one worker, a few seconds."""

from __future__ import annotations

import logging
import os
import sys

import pytest

from ensembo import Study, TrialState

pytest.importorskip("distributed")

import cloudpickle  # noqa: E402

from ensembo.execution import ExecutionSettings  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import it


def crash_at_first_evaluation(config, marks):
    """The first evaluation ends its process without a word, as a segfault would."""
    try:
        os.close(os.open(marks / "crashed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return config["x"] ** 2
    os._exit(3)


def test_a_crash_on_the_own_cluster_is_retried_and_spares_the_worker(
    flat_space, tmp_path, caplog
):
    caplog.set_level(logging.WARNING, logger="ensembo.execution.loop")
    settings = ExecutionSettings(backend="dask", n_jobs=1, max_retries=1)
    with settings.open_backend() as backend:
        workers = set(backend.client.nthreads())
        study = Study(flat_space, surrogate=None, seed=0)
        study.optimize(
            lambda c: crash_at_first_evaluation(c, tmp_path),
            n_trials=3,
            executor=backend,
            max_retries=1,
        )
        assert set(backend.client.nthreads()) == workers  # the same worker, never restarted
    assert (tmp_path / "crashed").exists()
    assert all(t.state is TrialState.COMPLETE for t in study.trials)
    assert [t.attempts for t in study.trials] == [2, 1, 1]
    assert "crashed: the evaluation process exited with code 3" in caplog.text
