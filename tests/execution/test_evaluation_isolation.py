"""Fixes from the second audit of trial execution: forked evaluations and their output,
process groups, exceptions that cannot travel back, tracebacks, and backend choices."""

from __future__ import annotations

import concurrent.futures
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import pytest

from ensembo import Evaluation, Study, TrialState
from ensembo.errors import ExecutionError
from ensembo.execution import (
    ExecutionSettings,
    ExecutorBackend,
    OutcomeKind,
    ProcessBackend,
    TrialLimits,
    evaluate,
    evaluate_in_child,
)
from ensembo.execution.loop import record, run_trials
from ensembo.execution.outcome import ObjectiveError, Outcome, RemoteTraceback, portable, raised
from ensembo.execution.resolve import resolve_jobs

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def study() -> Study:
    return Study(SPACE, surrogate=None, seed=0)


class FitError(ValueError):
    """Pickles, but cannot be loaded: its ``__init__`` takes other arguments than ``args``."""

    def __init__(self, estimator, reason):
        super().__init__(f"{estimator} failed: {reason}")


class HoldsLock(Exception):
    """Cannot be pickled at all."""

    def __init__(self, message):
        super().__init__(message)
        self.lock = threading.Lock()


FIT_ERROR = "FitError: SVC failed: did not converge"  # after the module's name


def fit_fails(config):
    raise FitError("SVC", "did not converge")


def test_forked_evaluations_do_not_print_the_drivers_buffered_output_again():
    """A driver piping its stdout buffers it; each forked child used to write it again."""
    script = textwrap.dedent(
        """
        import ensembo
        print("BEFORE")
        study = ensembo.Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                              surrogate=None, seed=0)
        study.optimize(lambda c: c["x"], n_trials=3, n_jobs=2)
        print("BETWEEN")
        study.optimize(lambda c: c["x"], n_trials=2, trial_timeout=30)
        print("AFTER")
        """
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["BEFORE", "BETWEEN", "AFTER"]


def test_processes_backend_with_one_job_still_runs_the_objective_in_a_child():
    driver = os.getpid()
    settings = ExecutionSettings.from_document({"backend": "processes", "n_jobs": 1})
    run = study()
    with settings.open_backend() as backend:
        assert isinstance(backend, ProcessBackend)
        run.optimize(lambda config: float(os.getpid() == driver), n_trials=1, executor=backend)
    assert run.trials[0].loss == 0.0


def _starts_a_program(marker):
    def objective(config):
        child = subprocess.Popen(["sleep", "60"])
        partial = marker.with_suffix(".partial")
        partial.write_text(str(child.pid))
        partial.replace(marker)  # the test never reads half a pid
        time.sleep(60)
        return 0.0

    return objective


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_timeout_kills_what_the_evaluation_started(tmp_path, process_ends):
    marker = tmp_path / "pid"
    outcome = evaluate_in_child(_starts_a_program(marker), {}, TrialLimits(wall_time=3))
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert process_ends(int(marker.read_text()), within=20)


def test_an_evaluation_in_its_own_group_is_not_stopped_by_the_terminal():
    """Its group is a background one: a read of the terminal would stop it (SIGTTIN) and,
    without a timeout, the driver would wait for ever; ignored, the read fails instead."""
    import signal

    def terminal_signals(config):
        return [signal.getsignal(signal.SIGTTIN), signal.getsignal(signal.SIGTTOU)]

    outcome = evaluate_in_child(terminal_signals, {}, TrialLimits(wall_time=30))
    assert outcome.value == [signal.SIG_IGN, signal.SIG_IGN]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_stopping_local_processes_kills_what_the_evaluations_started(tmp_path, process_ends):
    marker = tmp_path / "pid"
    backend = ProcessBackend(1)
    backend.submit(_starts_a_program(marker), {}, TrialLimits())
    give_up = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < give_up:
        time.sleep(0.05)
    backend.close(interrupted=True)
    assert process_ends(int(marker.read_text()), within=20)


def test_an_exception_that_cannot_be_loaded_keeps_its_message():
    for options in ({"n_jobs": 2}, {"trial_timeout": 30}):
        run = study()
        run.optimize(fit_fails, n_trials=2, **options)
        assert [t.error.rsplit(".", 1)[-1] for t in run.trials] == [FIT_ERROR] * 2


def test_catch_nothing_stops_the_run_on_an_exception_that_cannot_travel():
    with pytest.raises(ObjectiveError, match=FIT_ERROR):
        study().optimize(fit_fails, n_trials=3, n_jobs=2, catch=())

    def holds_lock(config):
        raise HoldsLock("boom")

    run = study()
    with pytest.raises(HoldsLock, match="boom"):  # in-process: the exception itself
        run.optimize(holds_lock, n_trials=3, catch=())
    assert len(run.trials) == 1
    with pytest.raises(ObjectiveError, match="HoldsLock: boom"):
        study().optimize(holds_lock, n_trials=3, trial_timeout=30, catch=())


def test_catch_matches_a_stand_in_by_the_original_classes():
    run = study()
    run.optimize(fit_fails, n_trials=2, trial_timeout=30, catch=(ValueError,))
    assert [t.state for t in run.trials] == [TrialState.FAILED] * 2


def test_an_outcome_shipped_back_replaces_an_exception_that_cannot_be_loaded():
    """As Dask and process pools pickle it back: loading it there must not fail."""
    outcome = evaluate(fit_fails, {}, TrialLimits(), ship=True)
    assert isinstance(outcome.error, ObjectiveError)
    assert outcome.message.endswith(FIT_ERROR)
    assert "fit_fails" in outcome.traceback
    assert portable(raised(ValueError("plain"))).error.args == ("plain",)


def test_dask_result_the_client_cannot_load_fails_the_trial_not_the_run():
    pytest.importorskip("distributed")
    from ensembo.execution import DaskBackend

    class Unreadable:
        status = "finished"

        def result(self):
            raise TypeError("FitError.__init__() missing 1 required positional argument")

    outcome = DaskBackend(client=None).outcome(Unreadable())
    assert outcome.kind is OutcomeKind.RAISED and "could not be read" in outcome.message


def test_dask_refuses_an_objective_it_cannot_serialize_before_asking():
    pytest.importorskip("distributed")
    from ensembo.execution import DaskBackend

    lock = threading.Lock()
    run = study()
    with pytest.raises(ExecutionError, match="cannot be sent to the Dask workers"):
        run_trials(run, lambda config: lock and config["x"], DaskBackend(None), n_trials=2)
    assert len(run.trials) == 0


def _missing_key(data):
    return data["missing_key"]


def test_a_failed_trial_logs_its_traceback_and_keeps_a_one_line_error(caplog):
    run = study()
    with caplog.at_level(logging.WARNING, logger="ensembo.execution.loop"):
        run.optimize(lambda config: _missing_key({}), n_trials=1, n_jobs=2)
    assert run.trials[0].error == "KeyError: 'missing_key'"
    (warning,) = [m for m in caplog.messages if "trial 0 failed" in m]
    assert "Traceback" in warning and "_missing_key" in warning
    assert "in _run" not in warning  # from the objective's frame on, not ensembo's


def test_an_exception_re_raised_from_a_child_carries_its_traceback():
    """Chained as text; or its own, once ``tblib`` (which Dask loads) pickles tracebacks."""
    with pytest.raises(KeyError) as raised_info:
        study().optimize(lambda config: _missing_key({}), n_trials=1, n_jobs=2, catch=())
    assert "_missing_key" in "".join(traceback.format_exception(raised_info.value))


def test_an_error_from_another_process_is_raised_with_its_traceback_text():
    """Pickling drops ``__traceback__``: the text is chained, as ``concurrent.futures`` does."""
    run = study()
    trial = run.ask()
    text = 'Traceback (most recent call last):\n  File "x.py", line 1, in helper\nKeyError: 1\n'
    outcome = Outcome(
        kind=OutcomeKind.RAISED, error=KeyError(1), message="KeyError: 1", traceback=text
    )
    with pytest.raises(KeyError) as raised_info:
        record(run, trial, outcome, catch=())
    assert isinstance(raised_info.value.__cause__, RemoteTraceback)
    assert "in helper" in str(raised_info.value.__cause__)
    assert run.trials[0].error == "KeyError: 1"


def test_memory_error_without_a_memory_limit_is_an_ordinary_failure():
    def hungry(config):
        raise MemoryError("allocation failed")

    for options in ({"n_jobs": 2}, {"trial_timeout": 30}):
        run = study()
        run.optimize(hungry, n_trials=1, **options)
        assert run.trials[0].error == "MemoryError: allocation failed"


def test_in_process_results_need_not_be_picklable():
    """Models stay in memory: an objective may make them in any form."""

    def with_lock(config):
        return Evaluation(loss=config["x"], model=threading.Lock())

    run = study()
    run.optimize(with_lock, n_trials=2)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        run.optimize(with_lock, n_trials=2, executor=pool)
    assert [t.state for t in run.trials] == [TrialState.COMPLETE] * 4
    assert sorted(run.models) == [0, 1, 2, 3]


def test_stopping_an_executor_cancels_evaluations_not_yet_started():
    started, release = [], threading.Event()

    def objective(config):
        started.append(config["n"])
        release.wait(30)
        return 0.0

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        backend = ExecutorBackend(pool, slots=3)
        for n in range(3):
            backend.submit(objective, {"n": n}, TrialLimits())
        give_up = time.monotonic() + 30
        while not started and time.monotonic() < give_up:
            time.sleep(0.01)
        backend.close(interrupted=True)
        release.set()
    assert started == [0]


def test_one_job_per_cpu_counts_the_cpus_this_process_may_use(monkeypatch):
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1})
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert resolve_jobs(-1) == 1
