"""Fixes from the review of the audit fixes (findings 3, 4, 5, 6, 9, 10): final refits
that hit a trial limit, space paths of older studies, a stored study's unused selection
split (and its warning, once), the models folder's owner, the data digest."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ensembo import Study
from ensembo.cli import main
from ensembo.datasets import Dataset, data_digest, load_dataset
from ensembo.errors import ExperimentError, StorageError
from ensembo.execution import NO_LIMITS, TrialLimits
from ensembo.experiment import load_experiment
from ensembo.ml.artifacts import MemoryArtifactStore, artifact_store_for
from ensembo.ml.data_run import DataSettings
from ensembo.ml.final import finalize

SPACE = """\
name: tiny-tree
estimator: sklearn.tree.DecisionTreeClassifier
params:
  max_depth: {type: int, low: 1, high: 6}
"""

EXPERIMENT = """\
space: SPACE
data: DATA
surrogate: null
ensemble: best
budget: BUDGET
seed: 1
"""


def _experiment(folder: Path, data: str = "{dataset: iris, validation: 3}", budget: int = 2,
                *, storage: str | None = "s.db", space: str = "tiny.space.yaml",
                extra: str = "", name: str = "exp.yaml") -> Path:
    if space == "tiny.space.yaml":
        (folder / space).write_text(SPACE)
    text = (EXPERIMENT.replace("SPACE", space).replace("DATA", data)
            .replace("BUDGET", str(budget)))
    if storage is not None:
        text += f"storage: {storage}\n"
    path = folder / name
    path.write_text(text + extra)
    return path


def _run(path: Path, *options: str) -> int:
    return main(["run", str(path), "--no-progress", *options])


def _trial_count(path: Path) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    finally:
        connection.close()


def _copy_study(source: Path, target: Path) -> None:
    """A consistent copy (the study's trials may still be in its -wal file)."""
    with sqlite3.connect(source) as original, sqlite3.connect(target) as copy:
        original.backup(copy)
    original.close()
    copy.close()


def _warnings(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and text in r.getMessage()]


# --- 3: a final refit that hits a trial limit keeps the search's model ----------------------


def _one_trial_on_iris(tmp_path):
    """A one-trial search on iris (3 folds) whose model is kept: what ``finalize`` reads."""
    from ensembo import spaces
    from ensembo.ml.data_run import prepare
    from ensembo.ml.loop import run_task

    (tmp_path / "tiny.space.yaml").write_text(SPACE)
    space = spaces.load(str(tmp_path / "tiny.space.yaml"))
    prepared = prepare(DataSettings.from_document({"dataset": "iris", "validation": 3}), space,
                       seed=0, loss=None, base_dir=tmp_path)
    task = prepared.task
    study = Study(space, surrogate=None, validation_targets=task.validation_targets(),
                  classes=task.encoded_classes(), task=task.task)
    store = MemoryArtifactStore()
    run_task(study, task, 1, store=store)
    return study, task, store


def test_a_refit_past_the_trial_timeout_keeps_the_searched_model(tmp_path, monkeypatch, caplog):
    study, task, store = _one_trial_on_iris(tmp_path)

    def slow_fit(config):
        time.sleep(3)

    monkeypatch.setattr(task, "fit", slow_fit)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        final = finalize(study, task, store, refit=True, limits=TrialLimits(wall_time=0.5))
    assert time.monotonic() - started < 2.5
    assert final.not_refitted == (0,)
    assert final.best_estimator is store.get(0)  # the model kept from the search
    [warning] = _warnings(caplog, "refitting trial 0")
    assert "time limit (trial_timeout 0.5 s)" in warning
    assert "trials are kept" not in caplog.text


@pytest.mark.parametrize("limits", [NO_LIMITS, TrialLimits(wall_time=30.0)])
def test_a_refit_that_raises_is_an_error_not_a_fallback(tmp_path, monkeypatch, limits):
    """Any failure fell back to the searched model with a warning: a bug in the model
    passed as a model trained on fewer rows, and ``ensembo run`` exited 0."""
    study, task, store = _one_trial_on_iris(tmp_path)

    def broken_fit(config):
        raise AttributeError("'Model' object has no attribute 'coef_'")

    monkeypatch.setattr(task, "fit", broken_fit)
    with pytest.raises(AttributeError, match="coef_") as raised:
        finalize(study, task, store, refit=True, limits=limits)
    assert "while refitting trial 0" in "".join(raised.value.__notes__)


SLOW_ON_ALL_ROWS = """\
import time
from sklearn.tree import DecisionTreeClassifier


class SlowOnAllRows(DecisionTreeClassifier):
    '''Fast on a trial's 67 % of iris's training rows, slow on all of them (the refit).'''

    def fit(self, X, y, **kwargs):
        if len(X) > 100:
            time.sleep(30)
        return super().fit(X, y, **kwargs)
"""


def test_an_in_memory_run_whose_refit_times_out_still_reports(tmp_path, monkeypatch, capsys,
                                                              caplog):
    (tmp_path / "slow_on_all_rows.py").write_text(SLOW_ON_ALL_ROWS)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "slow.space.yaml").write_text(
        SPACE.replace("sklearn.tree.DecisionTreeClassifier", "slow_on_all_rows.SlowOnAllRows"))
    path = _experiment(tmp_path, "{dataset: iris, validation: 0.33}", storage=None,
                       space="slow.space.yaml", extra="execution: {trial_timeout: 1.5}\n")
    with caplog.at_level(logging.WARNING):
        assert _run(path) == 0
    out = capsys.readouterr().out
    assert "best single model (trial" in out
    assert "not refitted (the refit hit a trial limit)" in out
    assert _warnings(caplog, "hit the trials' time limit (trial_timeout 1.5 s)")


# --- 4: a space path relative to the working directory (older studies) ---------------------


def test_a_space_path_found_only_in_the_current_directory_is_used_with_a_warning(
    tmp_path, monkeypatch, caplog
):
    folder = tmp_path / "exps"
    folder.mkdir()
    (tmp_path / "spaces").mkdir()
    (tmp_path / "spaces" / "my.yaml").write_text(SPACE)
    (folder / "e.yaml").write_text("space: spaces/my.yaml\ndata: iris\nbudget: 2\n")
    monkeypatch.chdir(tmp_path)
    experiment = load_experiment(folder / "e.yaml")
    with caplog.at_level(logging.WARNING):
        assert experiment.space_source() == str(tmp_path / "spaces" / "my.yaml")
        experiment.space_source()
    [warning] = _warnings(caplog, "spaces/my.yaml")  # once per experiment
    assert str(folder / "spaces" / "my.yaml") in warning
    assert str(tmp_path / "spaces" / "my.yaml") in warning
    monkeypatch.chdir(folder)  # neither place has it: both are named
    with pytest.raises(ExperimentError, match=(
            rf"^space: spaces/my.yaml: no such space file, looked for "
            rf"{folder / 'spaces' / 'my.yaml'} \(next to the experiment file\) and "
            rf"{folder / 'spaces' / 'my.yaml'} \(in the current directory\)")):
        experiment.space_source()


def test_a_study_whose_space_path_was_read_from_the_current_directory_resumes(
    tmp_path, monkeypatch, caplog
):
    folder = tmp_path / "exps"
    folder.mkdir()
    (folder / "spaces").mkdir()
    path = _experiment(folder, space="spaces/my.yaml")
    (folder / "spaces" / "my.yaml").write_text(SPACE)
    assert _run(path) == 0
    # as the version before the fix left it: the space beside the working directory
    (tmp_path / "spaces").mkdir()
    shutil.move(folder / "spaces" / "my.yaml", tmp_path / "spaces" / "my.yaml")
    monkeypatch.chdir(tmp_path)
    path.write_text(path.read_text().replace("budget: 2", "budget: 3"))
    assert _run(path) == 0
    assert _trial_count(folder / "s.db") == 3
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["resume", str(folder / "s.db"), "--no-progress"]) == 0
    assert _warnings(caplog, "spaces/my.yaml is not next to the experiment file")


# --- 5 and 10: a stored study's unused selection split --------------------------------------

SPLIT = "{dataset: iris, validation: 3, selection_split: 0.2, final: FINAL}"


def _stored_split_study(tmp_path: Path) -> Path:
    """A study with data.selection_split and data.final: argmin, as versions before the
    split was checked stored it."""
    assert _run(_experiment(tmp_path, SPLIT.replace("FINAL", "selection-split"))) == 0
    connection = sqlite3.connect(tmp_path / "s.db")
    with connection:
        (text,) = connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        meta = json.loads(text)
        meta["metadata"]["experiment"]["data"]["final"] = "argmin"
        connection.execute("UPDATE meta SET value = ? WHERE key = 'study'", (json.dumps(meta),))
    connection.close()
    return tmp_path / "s.db"


def test_rerunning_a_stored_study_with_an_unused_split_continues_it(tmp_path, caplog, capsys):
    storage = _stored_split_study(tmp_path)
    caplog.clear()
    path = _experiment(tmp_path, SPLIT.replace("FINAL", "argmin"), budget=3)
    with caplog.at_level(logging.WARNING):
        assert _run(path) == 0, capsys.readouterr().err
    assert _trial_count(storage) == 3
    [warning] = _warnings(caplog, "data.selection_split")
    assert "stay held out for this study, because its trials were scored without them" in warning
    assert "remove" not in warning


def test_the_unused_split_warning_is_given_once_on_resume(tmp_path, caplog):
    storage = _stored_split_study(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["resume", str(storage), "--no-progress"]) == 0
    assert len(_warnings(caplog, "data.selection_split")) == 1


def test_no_split_warning_when_the_split_is_removed(tmp_path, caplog, capsys):
    storage = _stored_split_study(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # its trials were scored without the rows
        assert _run(_experiment(tmp_path, budget=3)) == 2
    assert "data.selection_split 0.2 stored, None given" in capsys.readouterr().err
    assert not _warnings(caplog, "data.selection_split")
    assert _trial_count(storage) == 2


def test_an_unused_split_is_still_refused_for_a_new_or_other_study(tmp_path, capsys):
    assert _run(_experiment(tmp_path, SPLIT.replace("FINAL", "argmin"))) == 2
    assert "or remove data.selection_split" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()
    assert _run(_experiment(tmp_path)) == 0  # a study scored on every training row
    assert _run(_experiment(tmp_path, SPLIT.replace("FINAL", "argmin"), budget=3)) == 2
    assert "or remove data.selection_split" in capsys.readouterr().err


# --- 6: the models folder records the study file that owns it -------------------------------


def test_a_backup_copy_does_not_stop_the_study_and_is_not_opened(tmp_path, capsys):
    path = _experiment(tmp_path)
    assert _run(path) == 0
    shutil.copy(tmp_path / "s.db", tmp_path / "s.bak")
    assert main(["resume", str(tmp_path / "s.db"), "--no-progress"]) == 0
    path.write_text(path.read_text().replace("budget: 2", "budget: 3"))
    assert _run(path) == 0
    assert _trial_count(tmp_path / "s.db") == 3
    assert not list(tmp_path.glob("s.bak-*"))  # no -wal / -shm of the copy
    assert (tmp_path / "s.models" / "owner.txt").read_text().strip() == "s.db"


def test_a_study_file_that_does_not_own_the_folder_is_refused_before_its_search(tmp_path,
                                                                               capsys):
    path = _experiment(tmp_path)
    assert _run(path) == 0
    _copy_study(tmp_path / "s.db", tmp_path / "s.bak")
    path.write_text(path.read_text().replace("budget: 2", "budget: 4"))
    assert _run(path, "--storage", str(tmp_path / "s.bak")) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 's.bak'}: its models would be kept in {tmp_path / 's.models'}" in err
    assert f"the study in {tmp_path / 's.db'}" in err
    assert _trial_count(tmp_path / "s.bak") == 2  # no trial ran
    with pytest.raises(StorageError, match=r"s.sqlite: .*the study in .*s.db"):
        artifact_store_for(tmp_path / "s.sqlite")


def test_a_study_renamed_with_its_models_folder_keeps_it(tmp_path, caplog):
    """The marker named the old file, and the renamed study was refused for good."""
    artifact_store_for(tmp_path / "qs.db").put(0, "model of trial 0")
    (tmp_path / "qs.models").rename(tmp_path / "renamed.models")
    with caplog.at_level(logging.WARNING):
        store = artifact_store_for(tmp_path / "renamed.db")
    assert store.get(0) == "model of trial 0"
    assert "belonged to qs.db, which no longer exists" in caplog.text
    assert (tmp_path / "renamed.models" / "owner.txt").read_text().strip() == "renamed.db"


def test_a_models_folder_without_an_owner_is_adopted(tmp_path):
    folder = tmp_path / "run.models"  # as an older version left it
    folder.mkdir()
    (folder / "trial-00000.joblib").write_bytes(b"")
    (tmp_path / "run.db").touch()  # the owner's study file exists
    artifact_store_for(tmp_path / "run.db")
    assert (folder / "owner.txt").read_text().strip() == "run.db"
    artifact_store_for(tmp_path / "run.db")
    with pytest.raises(StorageError, match="run.sqlite"):
        artifact_store_for(tmp_path / "run.sqlite")


# --- 9: the data digest ----------------------------------------------------------------------


def test_an_in_memory_run_computes_no_data_digest(tmp_path, monkeypatch):
    def refuse(dataset):
        raise AssertionError("digest computed for a study that cannot be continued")

    monkeypatch.setattr("ensembo.cli.data_run.data_digest", refuse)
    assert _run(_experiment(tmp_path, storage=None)) == 0


def test_the_data_digest_copies_no_data_and_is_unchanged():
    # the digest studies stored since the digest was added hold for iris
    assert data_digest(load_dataset("iris")) == (
        "ced373d7d202c1f2840d3c91f06bb158455cfba9a9f671e30d4394cff6a5a864")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 10))
    y = rng.integers(0, 2, len(X))

    def digest_and_peak(X):
        dataset = Dataset(name="d", X=X, y=y, task="classification",
                          feature_names=[str(i) for i in range(10)],
                          categorical_features=[False] * 10)
        tracemalloc.start()
        try:
            return data_digest(dataset), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    digest, peak = digest_and_peak(X)
    assert peak < X.nbytes / 4
    fortran, fortran_peak = digest_and_peak(np.asfortranarray(X))  # as pandas gives it
    assert fortran == digest and fortran_peak < X.nbytes / 4
    float32 = X.astype(np.float32)  # hashed as float64, converted a block at a time
    converted, float32_peak = digest_and_peak(float32)
    assert converted == digest_and_peak(float32.astype(float))[0]
    assert float32_peak < float32.nbytes / 2
