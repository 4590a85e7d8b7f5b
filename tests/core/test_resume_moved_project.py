"""``ensembo resume`` of a study file copied or moved with its project uses the project
beside it; the recorded absolute folder is the original's (a copy ran the original's
objective) or gone (a moved project failed without naming where it looked)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL ends the first run")

# The first run dies (as by SIGKILL) during its fourth trial, leaving a study to resume.
OBJECTIVE = """\
import os, signal
CALLS = []

def loss(config):
    CALLS.append(config)
    if len(CALLS) > int(os.environ.get("STOP_AFTER", "1000")):
        os.kill(os.getpid(), signal.SIGKILL)
    return LOSS
"""

EXPERIMENT = """\
space:
  name: line
  params:
    x: {type: float, low: -5.0, high: 5.0}
objective: objective_module:loss
surrogate: null
budget: 6
seed: 3
"""


def ensembo(*args: str, cwd: Path, stop_after: int | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "STOP_AFTER"}
    if stop_after is not None:
        env["STOP_AFTER"] = str(stop_after)
    return subprocess.run(
        [sys.executable, "-m", "ensembo.cli", *args],
        capture_output=True, text=True, cwd=cwd, env=env,
    )


def write_project(folder: Path, loss: str, storage: str = "runs/study.db") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_objective(folder, loss)
    path = folder / "experiment.yaml"
    path.write_text(EXPERIMENT + f"storage: {storage}\n")
    return path


def write_objective(folder: Path, loss: str) -> None:
    (folder / "objective_module.py").write_text(OBJECTIVE.replace("LOSS", loss))


def start_and_kill(experiment: Path, *options: str) -> None:
    result = ensembo("run", str(experiment), "--no-progress", *options,
                     cwd=experiment.parent, stop_after=3)
    assert result.returncode != 0, "the first run should have been killed"


def losses(db: Path) -> dict[int, float | None]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT number, loss FROM trials").fetchall()
    return dict(rows)


def test_a_copied_project_resumes_with_the_copys_objective(tmp_path):
    start_and_kill(write_project(tmp_path / "original", "1.0"))
    shutil.copytree(tmp_path / "original", tmp_path / "copy")
    write_objective(tmp_path / "copy", "12345.0")

    result = ensembo("resume", str(tmp_path / "copy" / "runs" / "study.db"), "--no-progress",
                     cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    stored = losses(tmp_path / "copy" / "runs" / "study.db")
    assert [stored[n] for n in range(3)] == [1.0, 1.0, 1.0]  # run by the original
    assert [stored[n] for n in range(3, 6)] == [12345.0] * 3  # resumed: the copy's objective
    notices = [line for line in result.stderr.splitlines() if "moved or copied" in line]
    assert len(notices) == 1 and f"experiment folder {tmp_path / 'copy'} " in notices[0]
    assert losses(tmp_path / "original" / "runs" / "study.db")[3] is None  # left alone


def test_a_moved_project_resumes_from_its_new_place(tmp_path):
    start_and_kill(write_project(tmp_path / "before", "2.0"))
    (tmp_path / "before").rename(tmp_path / "after")

    result = ensembo("resume", str(tmp_path / "after" / "runs" / "study.db"), "--json",
                     "--no-progress", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["complete"] == 6
    assert f"experiment folder {tmp_path / 'after'} " in result.stderr


def test_a_study_file_copied_alone_resumes_with_the_recorded_project(tmp_path):
    # a backup in another folder: nothing beside it holds the objective
    start_and_kill(write_project(tmp_path / "project", "3.0"))
    backup = tmp_path / "backups" / "study.db"
    backup.parent.mkdir()
    for stored in (tmp_path / "project" / "runs").glob("study.db*"):  # with its -wal
        shutil.copy(stored, backup.parent / stored.name)

    result = ensembo("resume", str(backup), "--no-progress", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert set(losses(backup).values()) == {3.0}
    assert f"experiment folder {tmp_path / 'project'} (the one 'ensembo run' recorded" in (
        result.stderr
    )


def test_a_missing_experiment_folder_is_named_with_the_way_on(tmp_path):
    # the study file outside the project (--storage), the project gone
    experiment = write_project(tmp_path / "project", "4.0")
    db = tmp_path / "store" / "study.db"
    start_and_kill(experiment, "--storage", str(db))
    shutil.rmtree(tmp_path / "project")

    result = ensembo("resume", str(db), "--no-progress", cwd=tmp_path)

    assert result.returncode == 2
    assert f"looked in the experiment's folder {tmp_path / 'project'}" in result.stderr
    assert f"the experiment folder {tmp_path / 'project'} no longer exists" in result.stderr
    assert f"'ensembo run EXPERIMENT.yaml --storage {db}'" in result.stderr


def test_a_study_that_recorded_no_study_folder_resumes_from_its_experiment_folder(tmp_path):
    # stored by an earlier version: only the absolute experiment folder, used as before
    start_and_kill(write_project(tmp_path / "original", "5.0"))
    shutil.copytree(tmp_path / "original", tmp_path / "copy")
    write_objective(tmp_path / "copy", "6.0")
    db = tmp_path / "copy" / "runs" / "study.db"
    with sqlite3.connect(db) as connection:
        (text,) = connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        study = json.loads(text)
        study["metadata"].pop("study_dir", None)
        connection.execute("UPDATE meta SET value = ? WHERE key = 'study'", (json.dumps(study),))

    result = ensembo("resume", str(db), "--no-progress", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert set(losses(db).values()) == {5.0}
    assert "moved or copied" not in result.stderr


def test_a_moved_data_project_resumes_with_its_dataset_file(tmp_path):
    """A data: run recorded only the experiment folder: moved, its relative dataset file
    was looked for in the folder that no longer exists."""
    from sklearn.datasets import load_iris

    project = tmp_path / "before"
    project.mkdir()
    iris = load_iris(as_frame=True).frame
    iris.to_csv(project / "flowers.csv", index=False)
    (project / "experiment.yaml").write_text(
        "space: cash-classification\n"
        "data: {dataset: flowers.csv, target: target, test: 0.3, validation: 3}\n"
        "budget: 2\nseed: 0\nstorage: runs/study.db\n"
    )
    first = ensembo("run", "experiment.yaml", "--no-progress", cwd=project)
    assert first.returncode == 0, first.stderr
    project.rename(tmp_path / "after")

    result = ensembo("resume", str(tmp_path / "after" / "runs" / "study.db"), "--no-progress",
                     cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"experiment folder {tmp_path / 'after'} " in result.stderr


def test_a_data_study_file_copied_alone_resumes_with_the_recorded_project(tmp_path):
    """With no objective module to look for, every folder beside the backup 'held' it,
    and the backup's parent was taken: 'flowers.csv: no such file' (review of 3e1a401)."""
    from sklearn.datasets import load_iris

    project = tmp_path / "project"
    project.mkdir()
    load_iris(as_frame=True).frame.to_csv(project / "flowers.csv", index=False)
    (project / "experiment.yaml").write_text(
        "space: cash-classification\n"
        "data: {dataset: flowers.csv, target: target, test: 0.3, validation: 3}\n"
        "budget: 2\nseed: 0\nstorage: runs/study.db\n"
    )
    assert ensembo("run", "experiment.yaml", "--no-progress", cwd=project).returncode == 0
    backup = tmp_path / "backups" / "study.db"
    backup.parent.mkdir()
    for stored in (project / "runs").glob("study.db*"):
        shutil.copy(stored, backup.parent / stored.name)

    result = ensembo("resume", str(backup), "--no-progress", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"experiment folder {project} (the one 'ensembo run' recorded" in result.stderr
