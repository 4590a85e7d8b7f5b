"""The programs an evaluation started outlived the process that forked it: a Dask worker
SIGKILLed by its nanny on Ctrl-C (or a driver killed with SIGKILL) took its evaluation
child with it (``PR_SET_PDEATHSIG``), but the child's process group, where the
objective's ``sleep 1000`` ran, was reparented to init and ran on. Now the child watches
its parent and kills its whole group when the parent dies."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

import pytest

from ensembo.execution import OutcomeKind, TrialLimits, evaluate_in_child

pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="the parent is watched on a pidfd (Linux 5.3+)"
)


def _read_line(fd: int, within: float = 20.0) -> str:
    """A line written to the pipe ``fd``, read against a deadline."""
    data = b""
    end = time.monotonic() + within
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(end - time.monotonic(), 0))
        assert ready, f"nothing came within {within} s (read so far: {data!r})"
        chunk = os.read(fd, 4096)
        assert chunk, f"the writer closed the pipe early (read so far: {data!r})"
        data += chunk
    return data.decode().strip()


def _evaluating_parent(report: int, fork_first: bool) -> int:
    """Fork a process that evaluates, in a child, an objective that starts ``sleep 1000``
    in the child's group and writes its pid to ``report``, then waits; ``fork_first``:
    the objective forks (and reaps) a process of its own before it starts the sleep."""

    def objective(config):
        if fork_first:
            helper = os.fork()
            if helper == 0:
                os._exit(0)
            os.waitpid(helper, 0)
        sleeper = subprocess.Popen(["sleep", "1000"])
        os.write(report, f"{sleeper.pid}\n".encode())
        time.sleep(60)
        return 0.0

    parent = os.fork()
    if parent == 0:
        try:
            evaluate_in_child(objective, {}, TrialLimits(wall_time=60))
        finally:
            os._exit(0)
    return parent


@pytest.mark.parametrize("fork_first", [False, True], ids=["plain", "after-a-fork"])
def test_the_programs_an_evaluation_started_end_when_its_parent_is_killed(
    process_ends, fork_first
):
    """``after-a-fork``: the watch, stopped around the objective's own fork, runs again."""
    read_end, write_end = os.pipe()
    parent = _evaluating_parent(write_end, fork_first)
    os.close(write_end)
    sleeper = 0
    try:
        sleeper = int(_read_line(read_end))
    finally:
        os.close(read_end)
        os.kill(parent, signal.SIGKILL)
        os.waitpid(parent, 0)
    try:
        assert process_ends(sleeper, within=5.0)  # ran on for 1000 s
    finally:
        if not process_ends(sleeper, within=0):
            os.kill(sleeper, signal.SIGKILL)


def test_processes_the_objective_starts_do_not_hold_the_watch():
    def objective(config):
        listing = subprocess.run(
            ["ls", "-l", "/proc/self/fd"], capture_output=True, text=True, check=True
        ).stdout
        read_end, write_end = os.pipe()
        helper = os.fork()
        if helper == 0:
            names = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                     if os.path.exists(f"/proc/self/fd/{fd}")]
            os.write(write_end, repr(names).encode())
            os._exit(0)
        os.close(write_end)
        os.waitpid(helper, 0)
        with os.fdopen(read_end, "rb") as forked:
            forked_names = forked.read().decode()
        own = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
               if os.path.exists(f"/proc/self/fd/{fd}")]
        return listing, forked_names, own

    outcome = evaluate_in_child(objective, {}, TrialLimits(wall_time=30))
    assert outcome.kind is OutcomeKind.RETURNED, outcome.message
    listing, forked_names, own = outcome.value
    assert any("pidfd" in name for name in own)  # the evaluation itself watches
    assert "pidfd" not in listing  # closed on exec
    assert "pidfd" not in forked_names  # closed in a process the objective forks
