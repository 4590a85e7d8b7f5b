"""SIGTERM to the driver (how ``scancel``, ``docker stop`` and ``systemctl stop`` end a
job) stops an ``ensembo run`` as Ctrl-C does: the running trial is stored interrupted
and the programs its objective started are ended with its process group, not left
orphaned as SIGTERM's default action left them."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from ensembo import interrupts

TERMINATED = 128 + signal.SIGTERM  # a shell's status for a job ended by SIGTERM

# The first trial completes at once (so the study file is kept whatever the rule for a
# file whose only trial was interrupted); the second starts a program and waits.
OBJECTIVE = """
import os
import subprocess
import time

def loss(config):
    if not os.path.exists({first!r}):
        open({first!r}, "w").close()
        return 1.0
    program = subprocess.Popen(["sleep", "600"])
    with open({pid_file!r} + ".tmp", "w") as out:
        out.write(str(program.pid))
    os.replace({pid_file!r} + ".tmp", {pid_file!r})
    time.sleep(60)
    return 2.0
"""


def write_experiment(folder):
    pid_file = folder / "program.pid"
    source = OBJECTIVE.format(first=str(folder / "first_done"), pid_file=str(pid_file))
    (folder / "starting_objective.py").write_text(textwrap.dedent(source))
    document = {
        "space": {"name": "line", "hyperparameters": [
            {"name": "k", "type": "uniform_int", "lower": 0, "upper": 9}
        ]},
        "objective": "starting_objective:loss",
        "surrogate": None,
        "budget": 2,
        "seed": 0,
        "storage": "study.db",
        "execution": {"trial_timeout": 120},
    }
    path = folder / "experiment.yaml"
    path.write_text(json.dumps(document))  # JSON is YAML
    return path, pid_file


def wait_for(path, run, log):
    deadline = time.monotonic() + 60
    while not path.exists():
        if run.poll() is not None:
            pytest.fail(f"the run exited with {run.returncode}: {log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"the objective never wrote {path}")
        time.sleep(0.05)
    return int(path.read_text())


def is_running(pid: int) -> bool:
    """Whether ``pid`` still runs; a zombie (ended, its reaper not yet there) does not."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_the_run_and_the_programs_its_trial_started(tmp_path):
    experiment, pid_file = write_experiment(tmp_path)
    log = tmp_path / "stderr.txt"
    with open(log, "w") as stderr_file:  # not a pipe: an orphan holding it would hang a read
        run = subprocess.Popen(
            [sys.executable, "-m", "ensembo.cli", "-q", "run", str(experiment), "--no-progress"],
            stderr=stderr_file, cwd=tmp_path,
        )
    program = None
    try:
        program = wait_for(pid_file, run, log)
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=30)
        stderr = log.read_text()
        assert run.returncode == TERMINATED, stderr
        assert "terminated (SIGTERM)" in stderr
        assert not is_running(program), "the program the trial started outlived the run"
        with sqlite3.connect(tmp_path / "study.db") as connection:
            states = connection.execute("SELECT state FROM trials ORDER BY number").fetchall()
        assert states == [("complete",), ("interrupted",)]
    finally:
        run.kill()
        if program is not None and is_running(program):
            os.kill(program, signal.SIGKILL)


def test_a_sigterm_inside_a_deferred_write_is_raised_when_the_write_is_done():
    written = []
    with interrupts.sigterm_as_interrupt() as terminated:
        with pytest.raises(KeyboardInterrupt), interrupts.deferred():
            signal.raise_signal(signal.SIGTERM)
            written.append("row")
    assert written == ["row"] and terminated.is_set()


def test_the_previous_sigterm_action_is_back_after_the_block_and_in_forked_children():
    before = signal.getsignal(signal.SIGTERM)
    with interrupts.sigterm_as_interrupt():
        pid = os.fork()
        if pid == 0:
            os._exit(0 if signal.getsignal(signal.SIGTERM) == before else 1)
        assert os.waitpid(pid, 0)[1] == 0
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_command_that_catches_the_interrupt_itself_exits_143_on_sigterm():
    """``ensembo bench`` catches KeyboardInterrupt to say how to resume and returned 130
    on SIGTERM too, where the CLI promises 143 (audit)."""
    import argparse
    import threading

    from ensembo import cli

    caught_it_itself = argparse.Namespace(handler=lambda args: cli.INTERRUPTED, verbose=False)
    terminated = threading.Event()
    assert cli._handle(caught_it_itself, terminated) == cli.INTERRUPTED  # a Ctrl-C
    terminated.set()
    assert cli._handle(caught_it_itself, terminated) == cli.TERMINATED
