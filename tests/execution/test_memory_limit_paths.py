"""A trial that our memory limit stopped fails ``memory:``, naming the limit, however
the MemoryError reached us.

Two ways said ``raised`` instead: a result that fitted within the limit but not twice
(pickling it to send it back copies it: "the objective's result cannot be sent back to
the driver: MemoryError"), and an objective that caught the MemoryError and raised an
error of its own, or exited ("RuntimeError: out of memory"). Without a memory limit of
ours, a MemoryError stays an error like any other.
"""

from __future__ import annotations

import sys

import pytest

from ensembo import Study
from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child
from ensembo.trials import TrialState

LIMIT = 96 * 1024**2
MEMORY = TrialLimits(memory=LIMIT)
NO_MEMORY_LIMIT = TrialLimits(wall_time=60)  # a child process too, without a memory limit


def returns_what_fits_once(config):
    return bytearray(64 * 1024**2)  # fits in 96 MB; its pickled copy does not


class RunsOutOfMemoryWhenPickled:
    def __reduce__(self):
        raise MemoryError


def returns_a_value_out_of_memory_when_pickled(config):
    return RunsOutOfMemoryWhenPickled()


def out_of_memory_raises_its_own_error(config):
    try:
        bytearray(1024**3)
    except MemoryError as error:
        raise RuntimeError("could not allocate the buffer") from error


def out_of_memory_exits(config):
    try:
        bytearray(1024**3)
    except MemoryError:
        sys.exit("out of memory")


def raises_its_own_error_on_a_memory_error(config):
    try:
        raise MemoryError("a cache refused to grow")
    except MemoryError:
        raise RuntimeError("could not allocate the buffer")  # noqa: B904 (its context)


def test_a_result_too_large_to_send_back_within_the_limit_fails_memory():
    outcome = evaluate_in_child(returns_what_fits_once, {}, MEMORY)
    assert outcome.kind is OutcomeKind.MEMORY
    assert outcome.message == (
        f"memory: the evaluation exceeded its memory limit of {LIMIT} bytes while its result "
        "was pickled to be sent back (MemoryError)"
    )
    assert evaluate_in_child(returns_what_fits_once, {}, NO_MEMORY_LIMIT).value == bytearray(
        64 * 1024**2
    )


def test_a_memory_error_sending_back_is_plain_without_a_memory_limit_of_ours():
    limited = evaluate_in_child(returns_a_value_out_of_memory_when_pickled, {}, MEMORY)
    assert limited.kind is OutcomeKind.MEMORY and "while its result was pickled" in limited.message
    unlimited = evaluate_in_child(returns_a_value_out_of_memory_when_pickled, {}, NO_MEMORY_LIMIT)
    assert unlimited.kind is OutcomeKind.RAISED
    assert unlimited.message == (
        "the objective's result cannot be sent back to the driver: MemoryError"
    )


@pytest.mark.parametrize(
    ("objective", "raised_as"),
    [
        (out_of_memory_raises_its_own_error, "RuntimeError: could not allocate the buffer"),
        (out_of_memory_exits, "SystemExit: out of memory"),
    ],
    ids=["own-error", "sys-exit"],
)
def test_an_objective_that_turns_the_memory_error_into_another_fails_memory(
    objective, raised_as
):
    outcome = evaluate_in_child(objective, {}, MEMORY)
    assert outcome.kind is OutcomeKind.MEMORY
    assert outcome.message.startswith(
        f"memory: the evaluation exceeded its memory limit of {LIMIT} bytes (MemoryError"
    )
    assert outcome.message.endswith(f", raised as {raised_as})")
    assert "bytearray(1024**3)" in outcome.traceback  # where it ran out


def test_an_error_raised_on_a_memory_error_is_plain_without_a_memory_limit_of_ours():
    outcome = evaluate_in_child(raises_its_own_error_on_a_memory_error, {}, NO_MEMORY_LIMIT)
    assert outcome.kind is OutcomeKind.RAISED
    assert outcome.message == "RuntimeError: could not allocate the buffer"


def test_a_study_records_the_memory_limit_behind_an_objective_s_own_error(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    study.optimize(out_of_memory_raises_its_own_error, n_trials=2, memory_limit=LIMIT, catch=())
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    assert all(t.error.startswith("memory: ") for t in study.trials)


def test_a_crash_under_a_memory_limit_says_the_limit_may_be_why():
    """Native code that cannot allocate (OpenBLAS: 'Memory allocation still failed')
    exits instead of raising: the trial said only 'crashed', though the guide says a
    trial over its limit fails 'memory' (sklearn estimator audit)."""
    import os

    crashed = evaluate_in_child(lambda config: os._exit(1), {}, MEMORY)
    assert crashed.kind is OutcomeKind.CRASHED
    assert f"it ran under a memory limit of {LIMIT} bytes" in crashed.message
    plain = evaluate_in_child(lambda config: os._exit(1), {}, NO_MEMORY_LIMIT)
    assert "memory" not in plain.message
