"""Study.optimize on a Dask LocalCluster (loopback, 2 worker processes): lost workers,
time limits and distinct suggestions with pending trials."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from ensembo import Study, TrialState

pytest.importorskip("distributed")

import cloudpickle  # noqa: E402

from ensembo.execution import DaskBackend, start_local_cluster  # noqa: E402

# Workers cannot import this test module: ship its functions by value. Dask tries the
# standard pickle first, which would refer to module-level functions by name, so the
# tests hand Dask lambdas (which only cloudpickle can pickle).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    client = start_local_cluster(2)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


def quadratic(config):
    return (config["x"] - 1.0) ** 2 + (config["y"] - 2.0) ** 2


def sleepy_quadratic(config):
    time.sleep(0.4)
    return quadratic(config)


def test_trial_over_its_time_limit_is_stopped_and_recorded(client, flat_space, tmp_path):
    def slow_for_large_x(config):
        (tmp_path / str(os.getpid())).write_text("started")
        if config["x"] > 4.0:
            time.sleep(60)
        return quadratic(config)

    study = Study(flat_space, surrogate=None, seed=0)
    study.optimize(slow_for_large_x, n_trials=6, executor=client, trial_timeout=1.5)
    assert len(study.trials) == 6
    timed_out = [t for t in study.trials if t.config["x"] > 4.0]
    assert timed_out
    for trial in study.trials:
        if trial in timed_out:
            assert trial.state is TrialState.FAILED and trial.error.startswith("timeout")
        else:
            assert trial.state is TrialState.COMPLETE
    for pid_file in tmp_path.iterdir():  # every evaluation process is gone
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.name), 0)


def test_model_based_suggestions_with_pending_trials_are_distinct(client, flat_space):
    study = Study(flat_space, surrogate="gp", n_initial=3, seed=1)
    study.optimize(lambda c: sleepy_quadratic(c), n_trials=10, executor=client)
    configs = [tuple(sorted(t.config.items())) for t in study.trials]
    assert len(set(configs)) == len(configs) == 10
    assert all(t.state is TrialState.COMPLETE for t in study.trials)


def kill_own_worker_on_fifth_evaluation(config, marks):
    """The fifth evaluation to start SIGKILLs the worker process it runs in, once: the
    worker dies mid-evaluation, which is what a lost Dask worker looks like to the loop."""
    (marks / f"started-{os.getpid()}-{time.monotonic_ns()}").touch()
    if len(list(marks.glob("started-*"))) >= 5:
        try:
            os.close(os.open(marks / "killed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return sleepy_quadratic(config)


def test_killing_a_worker_mid_run_loses_no_trial(client, flat_space, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    path = tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, seed=3, storage=path)
    study.optimize(
        lambda c: kill_own_worker_on_fifth_evaluation(c, marks),
        n_trials=10,
        executor=DaskBackend(client),
    )
    assert (marks / "killed").exists()
    stored = Study.load(path).trials
    assert [t.number for t in stored] == list(range(10))
    assert all(t.state is TrialState.COMPLETE and t.loss == quadratic(t.config) for t in stored)
    assert sorted(t.attempts for t in stored) == [1] * 9 + [2]  # the lost evaluation ran again
    assert len({tuple(sorted(t.config.items())) for t in stored}) == 10
    client.wait_for_workers(2, timeout=60)
