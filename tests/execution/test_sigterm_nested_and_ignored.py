"""SIGTERM taken as a Ctrl-C (ensembo.interrupts.sigterm_as_interrupt) in the two
cases the first version got wrong: nested blocks, and SIGINT ignored (a batch script's
background job), where a SIGTERM cut a write that deferred() must hold together."""

from __future__ import annotations

import os
import signal

import pytest

from ensembo import interrupts


@pytest.fixture
def sigint_ignored():
    """SIGINT ignored, as in a job started with ``&`` from a non-interactive shell."""
    found = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)


def _sigterm_action_in_forked_child() -> object:
    """The SIGTERM action a child forked here starts with (exit 0: default, 1: other)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else 1)
    _, status = os.waitpid(pid, 0)
    return signal.SIG_DFL if os.waitstatus_to_exitcode(status) == 0 else "a handler"


def test_child_forked_inside_nested_blocks_gets_sigterm_default_back():
    with interrupts.sigterm_as_interrupt(), interrupts.sigterm_as_interrupt():
        action = _sigterm_action_in_forked_child()
    assert action == signal.SIG_DFL  # the outer block's handler made it a Ctrl-C
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_nested_block_restores_the_outer_handler():
    with interrupts.sigterm_as_interrupt():
        outer = signal.getsignal(signal.SIGTERM)
        with interrupts.sigterm_as_interrupt():
            pass
        assert signal.getsignal(signal.SIGTERM) is outer


def test_sigterm_with_sigint_ignored_waits_for_the_deferred_block(sigint_ignored):
    finished = []
    with pytest.raises(KeyboardInterrupt), interrupts.sigterm_as_interrupt() as terminated:
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10_000):  # the handler runs at the next check of the loop
                pass
            finished.append("the write")
    assert finished == ["the write"]
    assert terminated.is_set()


def test_child_forked_inside_deferred_with_sigint_ignored_dies_of_sigterm(sigint_ignored):
    with interrupts.sigterm_as_interrupt(), interrupts.deferred():
        action = _sigterm_action_in_forked_child()
    assert action == signal.SIG_DFL  # a timed-out trial's child ends at SIGTERM, not SIGKILL


def test_sigint_ignored_stays_ignored_after_deferred(sigint_ignored):
    with interrupts.sigterm_as_interrupt(), interrupts.deferred():
        pass
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
