"""Evaluation in a forked child: results, errors, and limits that really stop it."""

from __future__ import annotations

import mmap
import os
import time

import pytest

from ensembo.execution import NO_LIMITS, OutcomeKind, TrialLimits, evaluate, evaluate_in_child
from ensembo.execution.outcome import ObjectiveError


def square(config):
    return config["x"] ** 2


def test_inline_evaluation_returns_the_value_and_turns_errors_into_outcomes():
    assert evaluate(square, {"x": 3.0}, NO_LIMITS).value == 9.0
    failed = evaluate(lambda c: 1 / 0, {}, NO_LIMITS)
    assert failed.kind is OutcomeKind.RAISED and isinstance(failed.error, ZeroDivisionError)
    assert "division by zero" in failed.message


def test_inline_evaluation_lets_ctrl_c_through():
    def interrupted(config):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(interrupted, {}, NO_LIMITS)


def test_child_returns_value_and_runs_in_another_process():
    outcome = evaluate_in_child(lambda c: {"loss": c["x"], "pid": os.getpid()}, {"x": 1.5})
    assert outcome.kind is OutcomeKind.RETURNED and outcome.value["loss"] == 1.5
    assert outcome.value["pid"] != os.getpid()


def test_child_exception_comes_back_with_its_type():
    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("no")

    outcome = evaluate_in_child(lambda c: 1 / 0, {})
    assert outcome.kind is OutcomeKind.RAISED and isinstance(outcome.error, ZeroDivisionError)

    def raise_unpicklable(config):
        raise Unpicklable("local class")

    outcome = evaluate_in_child(raise_unpicklable, {})  # a stand-in with its type and message
    assert outcome.kind is OutcomeKind.RAISED and isinstance(outcome.error, ObjectiveError)
    assert "Unpicklable" in outcome.error.type_name and "local class" in str(outcome.error)
    assert "local class" in outcome.message


def test_wall_time_limit_kills_the_evaluation(tmp_path):
    marker = tmp_path / "pid"

    def slow(config):
        marker.write_text(str(os.getpid()))
        time.sleep(30)
        (tmp_path / "finished").write_text("should never happen")
        return 0.0

    started = time.monotonic()
    outcome = evaluate_in_child(slow, {}, TrialLimits(wall_time=0.5))
    assert outcome.kind is OutcomeKind.TIMEOUT and outcome.message.startswith("timeout")
    assert time.monotonic() - started < 20
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)
    assert not (tmp_path / "finished").exists()


def _address_space() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmSize:"))
    return int(line.split()[1]) * 1024


def test_memory_limit_fails_a_hungry_evaluation():
    limit = 256 * 1024**2  # on top of what the forked process already maps
    outcome = evaluate_in_child(lambda c: len(bytearray(1024**3)), {}, TrialLimits(memory=limit))
    assert outcome.kind is OutcomeKind.MEMORY and outcome.message.startswith("memory")
    modest = evaluate_in_child(
        lambda c: len(bytearray(16 * 1024**2)), {}, TrialLimits(memory=limit)
    )
    assert modest.value == 16 * 1024**2


def test_memory_limit_counts_from_the_address_space_held_at_the_fork():
    """A parent that maps more than the limit (libraries, arenas, here 1 GiB reserved)
    still leaves the evaluation its full allowance, and no more."""
    reserved = mmap.mmap(-1, 1024**3)  # address space only: never touched
    try:
        assert _address_space() > 1024**3
        limits = TrialLimits(memory=200 * 10**6)
        modest = evaluate_in_child(lambda c: len(bytearray(64 * 1024**2)), {}, limits)
        assert modest.kind is OutcomeKind.RETURNED, modest.message
        hungry = evaluate_in_child(lambda c: len(bytearray(2 * 10**9)), {}, limits)
        assert hungry.kind is OutcomeKind.MEMORY
    finally:
        reserved.close()


def test_a_crashed_child_is_reported_as_crashed():
    outcome = evaluate_in_child(lambda c: os._exit(7), {})
    assert outcome.kind is OutcomeKind.CRASHED and "code 7" in outcome.message
    outcome = evaluate_in_child(lambda c: os.kill(os.getpid(), 9), {})
    assert outcome.kind is OutcomeKind.CRASHED and "SIGKILL" in outcome.message


def test_a_result_that_cannot_travel_back_fails_with_a_reason():
    outcome = evaluate_in_child(lambda c: lambda: None, {})
    assert outcome.kind is OutcomeKind.RAISED and "cannot be sent back" in outcome.message
