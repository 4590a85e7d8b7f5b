"""What the command line says when an experiment, a study file or a check goes wrong:
each message names the file or key the user must change, and a failed run leaves
nothing behind that blocks the corrected one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ensembo import Study
from ensembo.cli import main
from ensembo.errors import ExperimentError, StorageError
from ensembo.execution.settings import ExecutionSettings

OBJECTIVE = """
import time

def loss(config):
    time.sleep(float(config.get("pause", 0.0)))
    return (config["x"] - 1.0) ** 2
"""

EXPERIMENT = """\
space:
  name: line
  params:
    x: {{type: float, low: -5.0, high: 5.0}}
    pause: {{type: float, low: {pause}, high: {pause_high}}}
objective: {objective}
surrogate: null
budget: {budget}
seed: 3
storage: study.db
"""


def write_experiment(
    folder: Path, *, objective: str = "cli_messages_objective:loss", budget: int = 3,
    pause: float = 0.0, extra: str = "",
) -> Path:
    (folder / "cli_messages_objective.py").write_text(textwrap.dedent(OBJECTIVE))
    path = folder / "experiment.yaml"
    path.write_text(EXPERIMENT.format(objective=objective, budget=budget, pause=pause,
                                      pause_high=pause + 1e-3) + extra)
    return path


def run(*arguments: str | Path) -> int:
    return main(["run", *map(str, arguments), "--no-progress"])


# --- 1. a failed run leaves no study file that blocks the corrected one ------------------


def test_a_misspelt_objective_leaves_no_study_file_and_the_corrected_one_runs(tmp_path, capsys):
    path = write_experiment(tmp_path, objective="cli_messages_objective:nosuch")
    assert run(path) == 2
    assert "has no attribute 'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "study.db").exists()
    write_experiment(tmp_path)
    assert run(path) == 0, capsys.readouterr().err
    assert len(Study.load(tmp_path / "study.db").trials) == 3


def test_a_bad_enqueue_entry_leaves_no_study_file(tmp_path, capsys):
    path = write_experiment(tmp_path, extra="enqueue:\n  - {y: 1.0}\n")
    assert run(path) == 2
    assert "enqueue[0]: line: unknown hyperparameters ['y']" in capsys.readouterr().err
    assert not (tmp_path / "study.db").exists()


def _backend_that_fails(self):
    raise ExperimentError("execution", "no backend here")


def test_a_failure_before_the_first_trial_removes_the_file_this_run_created(
    tmp_path, capsys, monkeypatch
):
    path = write_experiment(tmp_path)
    monkeypatch.setattr(ExecutionSettings, "open_backend", _backend_that_fails)
    assert run(path) == 2
    assert "no backend here" in capsys.readouterr().err
    assert not (tmp_path / "study.db").exists()
    monkeypatch.undo()
    assert run(path) == 0, capsys.readouterr().err


def test_a_failed_rerun_keeps_the_file_it_did_not_create(tmp_path, capsys, monkeypatch):
    path = write_experiment(tmp_path)
    assert run(path) == 0
    write_experiment(tmp_path, budget=5)
    monkeypatch.setattr(ExecutionSettings, "open_backend", _backend_that_fails)
    assert run(path) == 2
    assert len(Study.load(tmp_path / "study.db").trials) == 3


# --- 2. errors found after parsing name the experiment file -------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [({"surrogate: null": "surrogate: rff"}, "Unknown surrogate 'rff'; did you mean 'rf'?"),
     ({"surrogate: null": "surrogate: null\nloss: zero-onee"}, "Unknown loss 'zero-onee'"),
     ({"name: line": "name: line\n  typo: 1"}, "space"),
     ({":loss": ":nosuch"}, "objective: module 'cli_messages_objective' has no attribute"),
     ({"seed: 3": "seed: 3\nenqueue:\n  - {x: 9.0}"}, "enqueue[0]: line: x: 9.0")],
    ids=["surrogate", "loss", "space", "objective", "enqueue"],
)
def test_errors_found_after_parsing_name_the_experiment_file(tmp_path, capsys, change, message):
    path = write_experiment(tmp_path)
    text = path.read_text()
    for old, new in change.items():
        text = text.replace(old, new)
    path.write_text(text)
    assert run(path) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"ensembo: error: {path}: ") and message in error


@pytest.mark.parametrize("ensemble", ["posthoc", "{name: esmbo}"])
def test_a_strategy_needing_predictions_in_an_objective_experiment_is_told_in_its_terms(
    tmp_path, capsys, ensemble
):
    """It was told to give the study validation_targets= and return
    Evaluation(predictions=...): Python an experiment file has no key for."""
    path = write_experiment(tmp_path, extra=f"ensemble: {ensemble}\n")
    assert run(path) == 2
    error = capsys.readouterr().err
    name = ensemble.removeprefix("{name: ").rstrip("}")
    assert error.startswith(
        f"ensembo: error: {path}: ensemble: ensemble strategy {name!r} needs the trials' "
        "validation predictions, which only a data: experiment has"
    ), error
    assert "an objective: experiment can use only ensemble: best" in error
    assert "validation_targets" not in error and "Evaluation" not in error
    assert not (tmp_path / "study.db").exists()


# --- 3. plugins --check --task ------------------------------------------------------------


def test_a_loss_checked_for_the_other_task_fails_one_check_that_names_it(capsys):
    assert main(["plugins", "zero-one", "--check", "--task", "regression"]) == 1
    out = capsys.readouterr().out
    assert "  FAIL fits the task: " in out
    assert "loss 'zero-one' does not fit a regression task" in out
    assert main(["plugins", "mse", "--check", "--task", "classification", "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)
    assert [failure["check"] for failure in result["failures"]] == ["fits the task"]


def test_a_strategy_for_one_task_checked_for_the_other_fails_naming_its_task(capsys):
    assert main(["plugins", "eo", "--check", "--task", "regression"]) == 1
    expected = "FAIL fits the task: ensemble strategy 'eo' is for classification only, not "
    assert f"{expected}regression" in capsys.readouterr().out
    assert main(["plugins", "posthoc", "--check", "--task", "regression", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert not any(name.endswith("classification") for name in result["passed"])


@pytest.mark.parametrize(
    ("arguments", "error"),
    [(["--task", "regression"], "--task goes with --check"),
     (["rf", "--check", "--task", "regression"], "--task applies to losses and ensemble")],
)
def test_task_is_refused_where_it_means_nothing(capsys, arguments, error):
    assert main(["plugins", *arguments]) == 2
    assert error in capsys.readouterr().err


# --- 4. execution: keys -------------------------------------------------------------------


def test_a_misspelt_execution_key_suggests_the_valid_one():
    with pytest.raises(ExperimentError, match=r"execution\.n_job: unknown key; did you mean "
                       r"'n_jobs'\? Valid keys: backend"):
        ExecutionSettings.from_document({"n_job": 2})


# --- 5. another dataset is named, not its targets -----------------------------------------


def test_another_scoring_is_named_before_the_targets_it_changed(tmp_path):
    space = {"name": "flat", "params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    path = tmp_path / "study.db"
    Study(space, surrogate=None, storage=path, validation_targets=np.array([0, 1, 1]),
          metadata={"scoring": {"data": {"dataset": "iris"}}}).close()
    with pytest.raises(StorageError, match=r"scored otherwise \(data\.dataset 'iris' stored, "
                       r"'wine' given\)"):
        Study(space, surrogate=None, storage=path, validation_targets=np.array([0, 1, 1, 2]),
              metadata={"scoring": {"data": {"dataset": "wine"}}})


# --- 6, 7. resume, space, timeout ---------------------------------------------------------


def test_resuming_a_finished_study_says_how_to_continue_it(tmp_path, capsys):
    path = write_experiment(tmp_path, budget=2)
    assert run(path) == 0
    capsys.readouterr()
    assert main(["resume", str(tmp_path / "study.db"), "--no-progress"]) == 0
    assert "raise budget: in its experiment file and 'ensembo run' that file again" in (
        capsys.readouterr().err)


def test_a_directory_is_named_as_one(tmp_path, capsys):
    assert main(["resume", str(tmp_path)]) == 2
    assert f"{tmp_path}: is a directory; resume takes a study's storage file" in (
        capsys.readouterr().err)
    assert main(["space", "show", str(tmp_path)]) == 2
    assert f"{tmp_path}: is a directory; give a space file" in capsys.readouterr().err


def test_validating_an_experiment_file_says_it_is_one(tmp_path, capsys):
    path = write_experiment(tmp_path)
    assert main(["space", "validate", str(path)]) == 2
    error = capsys.readouterr().err
    assert "looks like an experiment file (it has space:, objective:, budget:)" in error
    assert "unknown key" not in error


def test_a_run_stopped_by_its_timeout_says_so(tmp_path, capsys):
    path = write_experiment(tmp_path, budget=50, pause=0.2, extra="timeout: 0.5\n")
    assert run(path) == 0
    error = capsys.readouterr().err
    assert "ensembo: stopped by timeout (0.5 s) after " in error and " of 50 trials" in error


# --- 8. no finalizer noise at exit ---------------------------------------------------------


DATA_EXPERIMENT = """\
space: {{name: tree, estimator: sklearn.tree.DecisionTreeClassifier,
         params: {{max_depth: {{type: int, low: 1, high: 4}}}}}}
data: {{dataset: iris, validation: 3}}
surrogate: null
budget: {budget}
seed: 0
storage: data.db
{extra}"""


def _write_data_experiment(folder: Path, budget: int = 2, extra: str = "") -> Path:
    path = folder / "data.yaml"
    path.write_text(DATA_EXPERIMENT.format(budget=budget, extra=extra))
    return path


def test_a_data_run_failing_before_its_first_trial_removes_the_file_it_created(
    tmp_path, capsys, monkeypatch
):
    from ensembo.cli import data_run

    def refuse(*args, **kwargs):
        raise ExperimentError("data", "refused before any trial")

    path = _write_data_experiment(tmp_path)
    monkeypatch.setattr(data_run, "run_and_report", refuse)
    assert run(path) == 2
    assert "refused before any trial" in capsys.readouterr().err
    assert not (tmp_path / "data.db").exists()
    monkeypatch.undo()
    assert run(path) == 0, capsys.readouterr().err


def test_a_data_run_stopped_by_its_timeout_says_so(tmp_path, capsys):
    path = _write_data_experiment(tmp_path, budget=500, extra="timeout: 0.01\n")
    assert run(path) == 0
    assert "stopped by timeout (0.01 s) after" in capsys.readouterr().err
