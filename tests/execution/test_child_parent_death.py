"""The programs an evaluation started outlived the process that forked it: a Dask worker
SIGKILLed by its nanny on Ctrl-C (or a driver killed with SIGKILL) took its evaluation
child with it (``PR_SET_PDEATHSIG``), but the child's process group, where the
objective's ``sleep 1000`` ran, was reparented to init and ran on. Now the child watches
its parent and kills its whole group when the parent dies."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

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


def _fork_once() -> None:
    helper = os.fork()
    if helper == 0:
        os._exit(0)
    os.waitpid(helper, 0)


def _fork_from_threads(threads: int = 4, forks_each: int = 25) -> dict:
    """Fork (and reap) from several threads at once, then tell whether the watch runs:
    the hooks around each fork raced, so a thread joined a watch another had stopped (or
    one not yet started) and a wake byte was left, which ends every watch started later."""
    from ensembo.execution import parent_watch

    hook_errors: list[str] = []
    sys.unraisablehook = lambda hook: hook_errors.append(repr(hook.exc_value))
    forkers = [
        threading.Thread(target=lambda: [_fork_once() for _ in range(forks_each)])
        for _ in range(threads)
    ]
    for forker in forkers:
        forker.start()
    for forker in forkers:
        forker.join()
    time.sleep(0.2)  # a watch started after a stray byte has read it and ended by now
    watching = [t for t in threading.enumerate() if t.name == "ensembo-parent-watch"]
    stray, _, _ = select.select([parent_watch._watch.wake_read], [], [], 0)
    return {
        "watch threads": len(watching),
        "stray wake byte": bool(stray),
        "hook errors": sorted(set(hook_errors)),
    }


def _evaluating_parent(report: int, before_the_sleep: Callable[[], object]) -> int:
    """Fork a process that evaluates, in a child, an objective that calls
    ``before_the_sleep``, starts ``sleep 1000`` in the child's group, writes the sleep's
    pid and what ``before_the_sleep`` returned to ``report`` as a JSON line, then waits."""

    def objective(config):
        before = before_the_sleep()
        sleeper = subprocess.Popen(["sleep", "1000"])
        os.write(report, (json.dumps({"sleeper": sleeper.pid, "before": before}) + "\n").encode())
        time.sleep(60)
        return 0.0

    parent = os.fork()
    if parent == 0:
        try:
            evaluate_in_child(objective, {}, TrialLimits(wall_time=60))
        finally:
            os._exit(0)
    return parent


def _kill_the_parent(
    before_the_sleep: Callable[[], object], process_ends
) -> tuple[object, bool]:
    """Kill the evaluation's parent once its objective started the sleep: what
    ``before_the_sleep`` returned in the objective, and whether the sleep ended within
    5 s (if not, its group, the orphaned evaluation's, is killed here)."""
    read_end, write_end = os.pipe()
    parent = _evaluating_parent(write_end, before_the_sleep)
    os.close(write_end)
    sleeper = 0
    try:
        reported = json.loads(_read_line(read_end))
        sleeper = reported["sleeper"]
    finally:
        os.close(read_end)
        os.kill(parent, signal.SIGKILL)
        os.waitpid(parent, 0)
    ended = process_ends(sleeper, within=5.0)
    if not ended:
        group = os.getpgid(sleeper)
        if group != os.getpgrp():
            os.killpg(group, signal.SIGKILL)
        else:
            os.kill(sleeper, signal.SIGKILL)
    return reported["before"], ended


@pytest.mark.parametrize(
    "before_the_sleep", [lambda: None, _fork_once], ids=["plain", "after-a-fork"]
)
def test_the_programs_an_evaluation_started_end_when_its_parent_is_killed(
    process_ends, before_the_sleep
):
    """``after-a-fork``: the watch, stopped around the objective's own fork, runs again."""
    _, sleeper_ended = _kill_the_parent(before_the_sleep, process_ends)
    assert sleeper_ended  # ran on for 1000 s


def test_the_watch_survives_forks_from_several_threads_at_once(process_ends):
    """The at-fork hooks were not serialised: after threads of the objective forked at
    once, no watch ran (every run of 4 threads forking 25 times each), and the sleep
    outlived its killed parent."""
    forked, sleeper_ended = _kill_the_parent(_fork_from_threads, process_ends)
    assert forked == {"watch threads": 1, "stray wake byte": False, "hook errors": []}
    assert sleeper_ended


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
