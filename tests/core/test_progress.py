"""The progress bar: drawn in a terminal, absent when piped, logging goes above it."""

from __future__ import annotations

import fcntl
import io
import json
import logging
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import textwrap

import pytest
from ConfigSpace import ConfigurationSpace

from ensembo import Study
from ensembo.progress import ProgressBar, TqdmLoggingHandler, is_terminal
from ensembo.spaces import Space


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def quadratic(config):
    return (config["x"] - 1.0) ** 2 + 0.1 * config["y"]


def test_bar_counts_trials_and_shows_best_loss():
    stream = FakeTerminal()
    study = Study(ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}), surrogate=None)
    bar = ProgressBar(6, stream=stream)
    study._observer_manager.register(bar)
    study.optimize(quadratic, n_trials=6)
    text = stream.getvalue()
    assert "6/6" in text
    best = min(t.loss for t in study.trials)
    assert f"best={best:.4g}" in text
    assert f"ensemble={best:.4g}" in text  # the 'best' strategy: the ensemble is the best trial


def test_bar_counts_failed_trials():
    stream = FakeTerminal()
    study = Study(ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}), surrogate=None)
    bar = ProgressBar(4, stream=stream)
    study._observer_manager.register(bar)

    def sometimes_failing(config):
        if config["x"] > 0.0:
            raise ValueError("diverged")
        return config["x"]

    study.optimize(sometimes_failing, n_trials=4)
    failed = sum(t.state.value == "failed" for t in study.trials)
    assert bar.failed == failed
    assert 0 < failed < 4  # seed 0: some of each
    assert f"failed={failed}" in stream.getvalue()


def test_interrupted_trials_do_not_advance_the_bar():
    stream = FakeTerminal()
    study = Study(ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}), surrogate=None)
    bar = ProgressBar(2, stream=stream)
    study._observer_manager.register(bar)
    study.tell(study.ask(), state="interrupted", error="worker lost")
    study.tell(study.ask(), 1.0)
    assert bar._bar.n == 1
    bar.close()


def test_bar_is_not_drawn_on_a_plain_stream():
    stream = io.StringIO()
    bar = ProgressBar(3, stream=stream)
    assert not bar.drawing
    bar.close()
    assert stream.getvalue() == ""


def test_bar_is_drawn_in_a_notebook(monkeypatch, capsys):
    import types

    assert not ProgressBar(2).drawing  # pytest's captured stderr is no terminal
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    bar = ProgressBar(2)
    assert bar.drawing
    bar.close()
    assert "0/2" in capsys.readouterr().err


def test_bar_can_be_switched_off_on_a_terminal():
    stream = FakeTerminal()
    bar = ProgressBar(3, stream=stream, enabled=False)
    assert not bar.drawing and is_terminal(stream)
    bar.close()
    assert stream.getvalue() == ""


def test_optimize_show_progress_registers_and_removes_the_bar():
    study = Study(ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}), surrogate=None)
    before = len(study._observer_manager.get_plugins())
    study.optimize(quadratic, n_trials=2, show_progress=True)
    assert len(study._observer_manager.get_plugins()) == before
    assert len(study.trials) == 2


def test_log_records_go_through_tqdm_while_the_bar_is_up():
    stream = FakeTerminal()
    root = logging.getLogger()
    original = logging.StreamHandler(stream)
    original.setFormatter(logging.Formatter("LOG %(message)s"))
    root.addHandler(original)
    try:
        bar = ProgressBar(2, stream=stream)
        swapped = [h for h in root.handlers if isinstance(h, TqdmLoggingHandler)]
        assert len(swapped) == 1 and original not in root.handlers
        logging.getLogger("ensembo.test").warning("hello above the bar")
        bar.close()
        assert original in root.handlers
        assert not any(isinstance(h, TqdmLoggingHandler) for h in root.handlers)
    finally:
        root.removeHandler(original)
    assert "LOG hello above the bar\n" in stream.getvalue()


# --- the CLI in a pseudo-terminal and through a pipe ------------------------------------


@pytest.fixture
def experiment(tmp_path):
    (tmp_path / "toy_objective.py").write_text(
        textwrap.dedent(
            """
            def loss(config):
                return (config["x"] - 1.0) ** 2 + 0.1 * config["y"]
            """
        )
    )
    space = Space(ConfigurationSpace(name="toy", space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}))
    document = {
        "space": space.definition(),
        "objective": "toy_objective:loss",
        "surrogate": None,
        "budget": 8,
        "seed": 1,
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(json.dumps(document))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ensembo.cli", *args]


def _run_in_pty(command: list[str], cwd) -> tuple[int, str]:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # rows, cols
    env = {**os.environ, "TERM": "xterm"}
    process = subprocess.Popen(
        command, stdin=terminal, stdout=terminal, stderr=terminal, cwd=cwd, env=env, close_fds=True
    )
    os.close(terminal)
    chunks = []
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            process.kill()
            break
        try:
            data = os.read(controller, 4096)
        except OSError:  # the terminal side closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(controller)
    return process.wait(timeout=60), b"".join(chunks).decode(errors="replace")


def test_run_draws_the_bar_in_a_terminal(experiment):
    code, output = _run_in_pty(_cli("run", str(experiment)), experiment.parent)
    assert code == 0, output
    assert "trials: 100%" in output
    assert "8/8" in output
    assert "best=" in output
    assert "space: toy" in output  # the summary follows the bar


def test_run_without_progress_flag_in_a_terminal_has_no_bar(experiment):
    code, output = _run_in_pty(_cli("run", "--no-progress", str(experiment)), experiment.parent)
    assert code == 0, output
    assert "%|" not in output and "8/8" not in output


def test_run_piped_has_no_bar(experiment):
    finished = subprocess.run(
        _cli("run", str(experiment)),
        cwd=experiment.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert "%|" not in finished.stderr and "8/8" not in finished.stderr
    assert "\r" not in finished.stderr
    assert "space: toy" in finished.stdout


def test_bar_of_a_continued_study_starts_at_its_finished_trials():
    """``initial``: a study continued from 3 to 6 trials ends at 6/6, not 3/6."""
    stream = FakeTerminal()
    study = Study(ConfigurationSpace(space={"x": (-5.0, 10.0), "y": (0.0, 15.0)}), surrogate=None)
    study.optimize(quadratic, n_trials=3)
    bar = ProgressBar(6, initial=3, stream=stream)
    study._observer_manager.register(bar)
    study.optimize(quadratic, n_trials=3)
    bar.close()
    text = stream.getvalue()
    assert "3/6" in text and text.rstrip().splitlines()[-1].count("6/6") == 1
