"""Study.optimize on local processes and executors: async refills, distinct suggestions,
limits, retries and interrupts."""

from __future__ import annotations

import concurrent.futures
import os
import time

import pytest

import ensembo
from ensembo import Study, TrialState
from ensembo.errors import ExecutionError


def quadratic(config):
    return (config["x"] - 1.0) ** 2 + (config["y"] - 2.0) ** 2


class RepeatingProposer:
    """A worst case for parallelism: always proposes the same configuration."""

    def propose(self, space, history, targets, n, rng):
        return [{"x": 0.0, "y": 0.0}] * n


def running_at(trials, moment):
    return sum(t.started_at < moment < t.finished_at for t in trials)


def test_processes_evaluate_every_trial_and_refill_slots_asynchronously(flat_space):
    def staggered(config):
        time.sleep(0.05 * (1 + int(config["x"] * 7) % 3))
        return quadratic(config)

    study = Study(flat_space, surrogate=None, seed=2).optimize(staggered, n_trials=12, n_jobs=3)
    trials = list(study.trials)
    assert [t.number for t in trials] == list(range(12))
    assert all(t.state is TrialState.COMPLETE and t.loss == quadratic(t.config) for t in trials)
    later = trials[3:]
    # a batch loop would start trials only when nothing runs; the async loop refills one slot
    assert sum(running_at(trials, t.started_at) >= 1 for t in later) >= len(later) // 2
    assert max(running_at(trials, t.started_at) for t in trials) <= 2


def test_pending_trials_are_never_suggested_again(flat_space):
    study = Study(flat_space, surrogate=RepeatingProposer(), n_initial=2, seed=0)
    study.optimize(lambda c: (time.sleep(0.02), quadratic(c))[1], n_trials=10, n_jobs=3)
    configs = [tuple(sorted(t.config.items())) for t in study.trials]
    assert len(set(configs)) == len(configs) == 10
    assert {"x": 0.0, "y": 0.0} in [t.config for t in study.trials]


def test_lambdas_and_closures_work_on_processes(flat_space):
    offset = 3.0
    study = Study(flat_space, surrogate=None).optimize(
        lambda c: c["x"] + offset, n_trials=4, n_jobs=2
    )
    assert all(t.loss == t.config["x"] + offset for t in study.trials)


TIME_LIMIT_SCRIPT = """
import json, os, sys, time
from pathlib import Path
from ConfigSpace import ConfigurationSpace
from ensembo import Study

pids = Path(sys.argv[1])

def slow_for_large_x(config):
    (pids / str(os.getpid())).write_text("started")
    if config["x"] > 2.5:
        time.sleep(60)
    return (config["x"] - 1.0) ** 2

space = ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)})
study = Study(space, surrogate=None, seed=0)
study.optimize(slow_for_large_x, n_trials=6, n_jobs=3, trial_timeout=5.0)
print(json.dumps([[t.config["x"], t.state.value, t.error] for t in study.trials]))
"""


def test_trial_over_its_time_limit_is_killed_and_recorded_failed(tmp_path):
    # A fresh interpreter: forking a pytest process that earlier tests left with
    # threads (Dask's event loop) can deadlock a child, which is not what this tests.
    import json
    import subprocess
    import sys

    script = tmp_path / "time_limit.py"
    script.write_text(TIME_LIMIT_SCRIPT)
    pids = tmp_path / "pids"
    pids.mkdir()
    result = subprocess.run(
        [sys.executable, str(script), str(pids)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    trials = json.loads(result.stdout.strip().splitlines()[-1])
    timed_out = [t for t in trials if t[2] and t[2].startswith("timeout")]
    assert timed_out and all(state == "failed" for _, state, _ in timed_out)
    assert all(state == "complete" for x, state, _ in trials if x <= 2.5)
    for pid_file in pids.iterdir():
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.name), 0)


def test_crashed_evaluations_are_retried_then_failed(flat_space):
    def crash_on_negative(config):
        if config["x"] < 0:
            os._exit(1)
        return quadratic(config)

    seen = []

    class Watch:
        @ensembo.hookimpl
        def ensembo_trial_finished(self, trial):
            seen.append((trial.number, trial.state))

    study = Study(flat_space, surrogate=None, seed=5, callbacks=[Watch()])
    study.optimize(crash_on_negative, n_trials=8, n_jobs=2, max_retries=1)
    crashing = [t for t in study.trials if t.config["x"] < 0]
    assert crashing and len(study.trials) == 8
    for trial in crashing:
        assert trial.state is TrialState.FAILED and trial.attempts == 2
        assert "crashed" in trial.error and "gave up after 2 attempts" in trial.error
        assert (trial.number, TrialState.INTERRUPTED) in seen


def test_any_concurrent_futures_executor(flat_space):
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        study = Study(flat_space, surrogate=None, seed=1).optimize(
            quadratic, n_trials=6, executor=pool
        )
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 6
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        study = Study(flat_space, surrogate=None, seed=1).optimize(
            quadratic, n_trials=4, executor=pool
        )
    assert all(t.loss == quadratic(t.config) for t in study.trials)


def test_ctrl_c_in_a_parallel_run_interrupts_running_trials_and_kills_them(flat_space, tmp_path):
    def slow(config):
        (tmp_path / f"{os.getpid()}").write_text("started")
        time.sleep(0.3 if len(os.listdir(tmp_path)) <= 2 else 60)
        return quadratic(config)

    class CtrlC:
        @ensembo.hookimpl
        def ensembo_trial_finished(self, study, trial):
            if trial.state is TrialState.COMPLETE:
                raise KeyboardInterrupt

    storage = tmp_path.parent / f"{tmp_path.name}.db"
    study = Study(flat_space, surrogate=None, storage=storage, callbacks=[CtrlC()])
    with pytest.raises(KeyboardInterrupt):
        study.optimize(slow, n_trials=10, n_jobs=3)
    stored = Study.load(storage).trials
    assert not [t for t in stored if t.state is TrialState.RUNNING]
    assert [t.state for t in stored].count(TrialState.COMPLETE) >= 1
    assert [t.error for t in stored if t.state is TrialState.INTERRUPTED] == [
        "KeyboardInterrupt"
    ] * 2
    for pid_file in tmp_path.iterdir():
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.name), 0)


def test_ctrl_c_in_a_serial_objective_marks_the_trial_interrupted_and_resume_reruns_it(
    flat_space, tmp_path
):
    def interrupted_once(config, calls=[]):  # noqa: B006 - counts calls across trials
        calls.append(config)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return quadratic(config)

    path = tmp_path / "s.db"
    with pytest.raises(KeyboardInterrupt):
        Study(flat_space, surrogate=None, storage=path).optimize(interrupted_once, n_trials=5)
    resumed = Study.load(path)
    assert resumed.trials[2].state is TrialState.INTERRUPTED
    resumed.optimize(quadratic, n_trials=3)
    assert [t.state for t in resumed.trials] == [TrialState.COMPLETE] * 5
    assert resumed.trials[2].attempts == 2


def test_error_outside_catch_fails_the_trial_and_propagates(flat_space):
    study = Study(flat_space, surrogate=None)
    with pytest.raises(ZeroDivisionError):
        study.optimize(lambda c: 1 / 0, n_trials=3, n_jobs=2, catch=())
    assert TrialState.FAILED in [t.state for t in study.trials]
    assert TrialState.RUNNING not in [t.state for t in study.trials]


def test_bad_execution_arguments_are_named(flat_space):
    study = Study(flat_space, surrogate=None)
    with pytest.raises(ExecutionError, match="n_jobs must be a positive integer or -1"):
        study.optimize(quadratic, n_trials=1, n_jobs=0)
    with pytest.raises(ExecutionError, match="executor must be a dask.distributed.Client"):
        study.optimize(quadratic, n_trials=1, executor="tcp://localhost:8786")
    with pytest.raises(ValueError, match="memory_limit"):
        study.optimize(quadratic, n_trials=1, memory_limit="lots")
