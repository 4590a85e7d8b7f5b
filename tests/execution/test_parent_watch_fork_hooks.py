"""parent_watch's at-fork hooks held a lock from before a fork to after it, in the driver
too (importing ensembo registers them): a thread forking while it held logging's lock (as
``logging.config.dictConfig`` does while it builds handlers) deadlocked against a fork of
another thread, and so did another library's after-fork hook that forks again. Each case
runs in a process of its own, so a deadlock fails the test on a timeout instead of hanging
it; ``watching``: that process watches its parent, as an evaluation child does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_WATCH = """
import os, threading
from ensembo.execution.parent_watch import end_group_with_parent
assert end_group_with_parent(os.getppid())
"""

_REPORT = """
import threading
watches = [t for t in threading.enumerate() if t.name == "ensembo-parent-watch"]
print("stuck" if stuck else "ok", len(watches), flush=True)
os._exit(0)
"""

_FORK_ONCE = """
import os
def fork_once():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
"""

_LOGGING_LOCK_HELD_BY_A_FORKING_THREAD = _FORK_ONCE + """
import logging, threading, time
import ensembo  # registers its hooks after logging's: its before-fork hook runs first
{watch}
held = threading.Event()
def fork_holding_the_logging_lock():
    with logging._lock:  # _acquireLock is gone in Python 3.13; _lock is in 3.11 to 3.13
        held.set()
        time.sleep(0.5)  # the other thread forks meanwhile
        fork_once()
def fork_meanwhile():
    held.wait()
    time.sleep(0.1)
    fork_once()
threads = [threading.Thread(target=fork_holding_the_logging_lock, daemon=True),
           threading.Thread(target=fork_meanwhile, daemon=True)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(10)
stuck = any(thread.is_alive() for thread in threads)
"""

_AN_AFTER_FORK_HOOK_THAT_FORKS = _FORK_ONCE + """
import threading
forking = False
def fork_a_helper_after_each_fork():
    global forking
    if not forking:
        forking = True
        try:
            fork_once()
        finally:
            forking = False
os.register_at_fork(after_in_parent=fork_a_helper_after_each_fork)  # runs before ensembo's
import ensembo
{watch}
thread = threading.Thread(target=fork_once, daemon=True)
thread.start()
thread.join(10)
stuck = thread.is_alive()
"""


def _run(script: str, watching: bool) -> list[str]:
    """What the script reported: ``ok`` or ``stuck`` (a deadlock, a count left off
    zero), and how many watches run."""
    source = script.format(watch=_WATCH if watching else "") + _REPORT
    try:
        done = subprocess.run(
            [sys.executable, "-c", source], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the forks deadlocked and the process never reported")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


pytestmark = pytest.mark.skipif(
    not hasattr(os, "register_at_fork"), reason="the hooks are registered at fork"
)
watching = pytest.mark.parametrize(
    "watching",
    [False, pytest.param(True, marks=pytest.mark.skipif(
        not hasattr(os, "pidfd_open"), reason="the parent is watched on a pidfd"
    ))],
    ids=["driver", "watching"],
)


@watching
def test_a_thread_that_forks_holding_the_logging_lock_does_not_deadlock_another(watching):
    assert _run(_LOGGING_LOCK_HELD_BY_A_FORKING_THREAD, watching) == ["ok", str(int(watching))]


@watching
def test_an_after_fork_hook_that_forks_again_does_not_deadlock(watching):
    assert _run(_AN_AFTER_FORK_HOOK_THAT_FORKS, watching) == ["ok", str(int(watching))]


_A_CTRL_C_IN_THE_BEFORE_FORK_HOOK = _FORK_ONCE + """
import signal, sys, threading, time
import ensembo.execution.parent_watch as parent_watch
{watch}
def hold_the_count():
    with parent_watch._counting:  # as another thread's hook does while it stops the watch
        time.sleep(1.0)
holder = threading.Thread(target=hold_the_count)
holder.start()
time.sleep(0.1)
def interrupt(*_):
    raise KeyboardInterrupt
signal.signal(signal.SIGALRM, interrupt)
signal.setitimer(signal.ITIMER_REAL, 0.3)
sys.unraisablehook = lambda hook: None  # CPython reports the Ctrl-C and forks anyway
fork_once()
holder.join()
fork_once()
stuck = parent_watch._forks_in_flight != 0
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the parent is watched on a pidfd")
def test_a_fork_whose_before_hook_was_interrupted_is_not_uncounted():
    """The after-fork hook of a fork that was never counted took another fork's place:
    the count went below zero and the watch was never stopped or started again."""
    assert _run(_A_CTRL_C_IN_THE_BEFORE_FORK_HOOK, watching=True) == ["ok", "1"]
