"""The ``ensembo`` command: plugins listing, experiments, errors, crash-safe resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from ensembo import Study
from ensembo.errors import EnsemboError

OBJECTIVE = '''
import time

def loss(config):
    time.sleep(float(config.get("pause", 0.0)))
    return (config["x"] - 1.0) ** 2
'''

EXPERIMENT = """\
space:
  name: line
  params:
    x: {{type: float, low: -5.0, high: 5.0}}
    pause: {{type: float, low: {pause}, high: {pause_high}}}
objective: objective_module:loss
surrogate: null
budget: {budget}
seed: 3
storage: study.db
"""


def ensembo(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ensembo.cli", *args], capture_output=True, text=True, cwd=cwd
    )


def write_experiment(folder: Path, budget: int = 8, pause: float = 0.0, extra: str = "") -> Path:
    (folder / "objective_module.py").write_text(textwrap.dedent(OBJECTIVE))
    path = folder / "experiment.yaml"
    path.write_text(EXPERIMENT.format(budget=budget, pause=pause, pause_high=pause + 1e-3) + extra)
    return path


def complete_numbers(db: Path) -> list[int]:
    with sqlite3.connect(db) as connection:
        try:
            rows = connection.execute(
                "SELECT number FROM trials WHERE state = 'complete'"
            ).fetchall()
        except sqlite3.OperationalError:  # the run has not created its tables yet
            return []
    return sorted(r[0] for r in rows)


def test_plugins_json_lists_builtins_with_kind_and_distribution():
    result = ensembo("plugins", "--json")
    assert result.returncode == 0, result.stderr
    plugins = json.loads(result.stdout)["plugins"]
    assert {"kind": "ensemble_strategy", "name": "best", "distribution": "ensembo"} in plugins
    assert {"kind": "initial_design", "name": "random", "distribution": "ensembo"} in plugins


def test_run_experiment_prints_summary(tmp_path):
    path = write_experiment(tmp_path)
    result = ensembo("run", str(path), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["complete"] == 8 and summary["best"]["loss"] >= 0
    assert complete_numbers(tmp_path / "study.db") == list(range(8))


def queued_configs(db: Path) -> list[dict]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT config FROM trials ORDER BY number").fetchall()
    return [json.loads(row[0]) for row in rows]


def test_enqueued_configs_run_first_and_are_not_queued_again_on_resume(tmp_path):
    queued = "enqueue:\n  - {x: 1.0}\n  - {x: -2.0, pause: 0.0}\n"
    path = write_experiment(tmp_path, budget=4, extra=queued)
    assert ensembo("run", str(path)).returncode == 0
    path.write_text(path.read_text().replace("budget: 4", "budget: 6"))
    result = ensembo("run", str(path), "--json")
    assert result.returncode == 0, result.stderr
    configs = queued_configs(tmp_path / "study.db")
    assert len(configs) == 6 and [c["x"] for c in configs[:2]] == [1.0, -2.0]
    assert [c["x"] for c in configs].count(1.0) == 1
    assert json.loads(result.stdout)["best"]["loss"] == 0.0


def test_resume_queues_the_entries_a_run_that_died_while_queueing_left_out(tmp_path):
    queued = "enqueue:\n  - {x: 1.0}\n  - {x: -2.0}\n  - {x: 3.0}\n"
    path = write_experiment(tmp_path, budget=1, extra=queued)
    assert ensembo("run", str(path)).returncode == 0
    with sqlite3.connect(tmp_path / "study.db") as connection:  # as if it died after entry 0
        connection.execute("DELETE FROM trials WHERE number > 0")
    path.write_text(path.read_text().replace("budget: 1", "budget: 3"))
    result = ensembo("resume", str(tmp_path / "study.db"))
    assert result.returncode == 0, result.stderr
    assert [c["x"] for c in queued_configs(tmp_path / "study.db")] == [1.0, -2.0, 3.0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("surogate: gp\n", "surogate: unknown key; did you mean 'surrogate'"),
        ("enqueue: {x: 1.0}\n", "enqueue: must be a list of configurations"),
        ("enqueue:\n  - {x: 1.0}\n  - {x: 9.0}\n", "enqueue[1]: line: x: 9.0 is not a number"),
        ("enqueue:\n  - {y: 1.0}\n", "enqueue[0]: line: unknown hyperparameters ['y']"),
        ("seed: many\n", None),
    ],
)
def test_malformed_experiment_exits_2_naming_the_key(tmp_path, extra, message):
    path = write_experiment(tmp_path)
    if extra.startswith("seed"):
        path.write_text(path.read_text().replace("seed: 3", "seed: many"))
        message = "seed: must be an integer"
    else:
        path.write_text(path.read_text() + extra)
    result = ensembo("run", str(path))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_key_and_bad_yaml_exit_2(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("space: [unclosed\n")
    result = ensembo("run", str(path))
    assert result.returncode == 2 and "not valid YAML" in result.stderr
    path.write_text("space: {params: {x: {type: float, low: 0, high: 1}}}\nbudget: 3\n")
    result = ensembo("run", str(path))
    assert result.returncode == 2 and "objective: required key is missing" in result.stderr


def test_unknown_plugin_in_experiment_exits_2(tmp_path):
    path = write_experiment(tmp_path)
    path.write_text(path.read_text().replace("surrogate: null", "ensemble: bestt"))
    result = ensembo("run", str(path))
    assert result.returncode == 2 and "did you mean 'best'" in result.stderr


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    budget = 30
    path = write_experiment(tmp_path, budget=budget, pause=0.05)
    db = tmp_path / "study.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "ensembo.cli", "run", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists() and len(complete_numbers(db)) >= 8:
            break
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished_before = complete_numbers(db)
    assert 8 <= len(finished_before) < budget, "the run should have been killed mid-way"

    result = ensembo("resume", str(db), "--json")
    assert result.returncode == 0, result.stderr
    numbers = complete_numbers(db)
    assert numbers == list(range(budget))  # all trials, each exactly once
    assert set(finished_before) <= set(numbers)
    with sqlite3.connect(db) as connection:
        total = connection.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    assert total == budget


def test_plugins_name_shows_the_options_and_defaults_of_each_match(capsys):
    from ensembo.cli import main

    assert main(["plugins", "random"]) == 0  # an acquisition optimizer and an initial design
    text = capsys.readouterr().out
    assert "random (acquisition optimizer, from ensembo)" in text
    assert "random (initial design, from ensembo)" in text
    assert main(["plugins", "gp", "--json"]) == 0  # a **options factory that declares them
    (gp,) = json.loads(capsys.readouterr().out)
    # JSON values, not Python reprs in strings ("'matern52'", "2")
    assert gp["options"]["kernel"] == {"default": "matern52"}
    assert gp["options"]["restarts"] == {"default": 2}
    assert main(["plugins", "eo"]) == 0
    text = capsys.readouterr().out
    assert "    size         12\n" in text and "    post         false\n" in text
    assert "`eo`: Bayesian ensemble optimization" in text
    assert "  task: classification only\n" in text  # eo on regression is refused


def test_plugins_name_unknown_suggests_close_names(capsys):
    from ensembo.cli import main

    assert main(["plugins", "eos"]) == 2
    assert "no registered component is called 'eos'; did you mean 'eo'?" in capsys.readouterr().err


def test_an_undeclared_kwargs_factory_says_so():
    from ensembo.cli.plugins_command import describe
    from ensembo.registry import PluginEntry

    def factory(**options):
        """A third party's design."""

    entry = PluginEntry(kind="initial_design", name="x", distribution="d", factory=factory)
    assert describe(entry) == {"kind": "initial_design", "name": "x", "distribution": "d",
                               "summary": "A third party's design.", "options": None,
                               "options_unknown": "the factory takes **kwargs"}


def test_show_exits_quietly_when_the_reader_closes_the_pipe():
    """``ensembo space show NAME | head -1``: the pipe has no reader before anything is
    written, so the first write (or the flush at exit) fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ensembo.cli", "space", "show", "cash-classification"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_warnings_are_one_line_for_the_user_and_full_under_verbose(monkeypatch):
    """eo's short-budget warning printed its file path and the source line that raised it."""
    import io
    import warnings

    from ensembo import cli

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after
    cli._configure_logging(0, False)
    stream = io.StringIO()
    warnings.showwarning("budget 30 is short for eo", UserWarning, "/x/eo.py", 7, stream)
    warnings.showwarning("lbfgs stopped", RuntimeWarning, "/x/y.py", 9, stream)
    assert stream.getvalue() == (
        "ensembo: warning: budget 30 is short for eo\n"
        "ensembo: warning: RuntimeWarning: lbfgs stopped\n"
    )
    default = warnings.showwarning = warnings._showwarning_orig
    cli._configure_logging(1, False)
    assert warnings.showwarning is default


def test_version(capsys):
    import pytest

    from ensembo import __version__
    from ensembo.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"ensembo {__version__}\n"


# --- errors raised in a plugin's method name the plugin (plugin-author audit, defect 1) ---


class _NaNSurrogate:
    def fit(self, batch, y, rng):
        pass

    def predict(self, batch):
        return np.full(len(batch), np.nan), np.ones(len(batch))


class _TooFewPoints(EnsemboError, ValueError):
    """A plugin's own error for a user mistake, as docs/plugin-authoring.md §5 suggests."""


class _RefusesSmallHistories(_NaNSurrogate):
    def fit(self, batch, y, rng):
        raise _TooFewPoints("knn: option 'k' is 5 but only 2 trials are complete")


def _study_with(surrogate):
    """A command handler running a study on ``surrogate`` until its error propagates."""

    def handler(args):
        space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
        Study(space, surrogate=surrogate, acquisition_optimizer="random", n_initial=2).optimize(
            lambda config: config["x"], n_trials=3, catch=())

    return handler


@pytest.mark.parametrize(
    ("surrogate", "code", "message", "method"),
    [(_NaNSurrogate(), 1,
      "PluginContractError: predict returned NaN or infinite means or variances", "predict"),
     (_RefusesSmallHistories(), 2, "knn: option 'k' is 5 but only 2 trials are complete", "fit")],
)
def test_an_error_in_a_plugin_method_names_the_plugin(
    monkeypatch, capsys, surrogate, code, message, method
):
    """The CLI printed str(error) only: 'predict returned NaN ...' with no plugin named,
    and exit 2 ('user mistake') for a plugin's broken contract."""
    from ensembo.cli import main, plugins_command

    monkeypatch.setattr(plugins_command, "run", _study_with(surrogate))
    assert main(["plugins"]) == code
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"ensembo: error: {message}"
    assert lines[1].startswith(
        f"  while calling {method}() of surrogate {__name__}.{type(surrogate).__name__}")
    broke_contract = code == 1
    assert ("a bug in the component named first above" in lines[-1]) is broke_contract


def test_a_misspelt_option_stays_a_user_mistake(tmp_path):
    """A PluginContractError found while building (not calling) a component."""
    write_experiment(tmp_path, extra="ensemble: {name: best, sizee: 3}\n")
    result = ensembo("run", "experiment.yaml", "--no-progress", cwd=tmp_path)
    assert result.returncode == 2 and "rejected options ['sizee']" in result.stderr
