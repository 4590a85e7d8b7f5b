"""A helper process the objective forked and left running (a daemonic
``multiprocessing.Process``, a prefetch worker) inherits the result pipe's write end.
The driver used to read until EOF, so it waited for the helper (``memory_limit``,
``n_jobs``: for ever if the helper never ends), failed a trial that returned at once as
a timeout (``trial_timeout``), and the helper outlived its trial (leak audit, item 4).
Now the result is framed and read until whole, and the trial's process group is killed
once the trial has ended."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from ensembo import Study, TrialState
from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
HELPER_SECONDS = 20
QUICK = 4.0  # seconds: a trial that returns at once is over well within this


def fork_helper() -> int:
    """Fork a process that sleeps ``HELPER_SECONDS`` holding every inherited descriptor."""
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(HELPER_SECONDS)
        finally:
            os._exit(0)
    return pid


def start_daemonic_helper() -> int:
    helper = multiprocessing.get_context("fork").Process(
        target=time.sleep, args=(HELPER_SECONDS,), daemon=True
    )
    helper.start()  # not joined: as a prefetch or logging worker often is
    return helper.pid


@pytest.fixture
def helpers(process_ends):
    """Pids of the helpers a test started: killed at the end whatever the outcome."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not process_ends(pid, within=0):
            os.kill(pid, 9)


def test_result_comes_back_at_once_although_a_forked_helper_holds_the_pipe(helpers, process_ends):
    start = time.monotonic()
    outcome = evaluate_in_child(lambda c: fork_helper(), {})
    elapsed = time.monotonic() - start
    assert outcome.kind is OutcomeKind.RETURNED
    helpers.append(outcome.value)
    assert elapsed < QUICK  # was HELPER_SECONDS: read until the helper closed the pipe
    assert process_ends(outcome.value)  # the helper ends with its trial


def test_a_large_result_arrives_whole_past_a_lingering_helper(helpers):
    blob = os.urandom(3 << 20)  # many pipe buffers' worth, read in pieces

    def objective(config):
        return fork_helper(), blob

    start = time.monotonic()
    outcome = evaluate_in_child(objective, {})
    assert outcome.kind is OutcomeKind.RETURNED
    helpers.append(outcome.value[0])
    assert outcome.value[1] == blob
    assert time.monotonic() - start < QUICK


def test_a_crash_with_a_helper_holding_the_pipe_is_a_crash_at_once(helpers, tmp_path, process_ends):
    marker = tmp_path / "helper"

    def crashing(config):
        marker.write_text(str(fork_helper()))
        os._exit(3)

    start = time.monotonic()
    outcome = evaluate_in_child(crashing, {})
    elapsed = time.monotonic() - start
    helpers.append(int(marker.read_text()))
    assert outcome.kind is OutcomeKind.CRASHED
    assert "exited with code 3" in outcome.message
    assert elapsed < QUICK  # was HELPER_SECONDS: EOF came when the helper ended
    assert process_ends(helpers[0])


def test_wall_time_limit_still_kills_a_slow_evaluation_and_its_helper(
    helpers, tmp_path, process_ends
):
    marker = tmp_path / "helper"

    def slow(config):
        marker.write_text(str(fork_helper()))
        time.sleep(HELPER_SECONDS)

    outcome = evaluate_in_child(slow, {}, TrialLimits(wall_time=0.5))
    helpers.append(int(marker.read_text()))
    assert outcome.kind is OutcomeKind.TIMEOUT
    assert process_ends(helpers[0])


@pytest.mark.parametrize(
    "settings",
    [{"trial_timeout": 10}, {"memory_limit": "2GB"}, {"n_jobs": 2}],
    ids=["trial_timeout", "memory_limit", "n_jobs"],
)
def test_a_trial_that_leaves_a_daemonic_helper_completes_at_once(
    settings, helpers, tmp_path, process_ends
):
    def objective(config):
        (tmp_path / f"helper-{os.getpid()}").write_text(str(start_daemonic_helper()))
        return config["x"]

    study = Study(SPACE, surrogate=None, seed=0)
    start = time.monotonic()
    study.optimize(objective, n_trials=2, **settings)
    elapsed = time.monotonic() - start
    helpers.extend(int(path.read_text()) for path in tmp_path.glob("helper-*"))
    # Before: trial_timeout failed both trials as timeouts after 10 s each;
    # memory_limit and n_jobs waited HELPER_SECONDS per trial.
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2
    assert elapsed < QUICK
    assert len(helpers) == 2 and all(process_ends(pid) for pid in helpers)
