"""``data.groups`` in experiment files: whole groups (patients) are held out for the test
and for validation, and the group column is never a feature."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

import ensembo.cli.data_run as cli_data_run
import ensembo.ml.data_run as data_run
from ensembo import Study, TrialState, spaces
from ensembo.cli import main
from ensembo.errors import ExperimentError
from ensembo.ml.data_run import DataSettings, prepare

pytest.importorskip("pandas")

PATIENTS, ROWS_PER_PATIENT = 30, 4
FEATURES = ("x1", "x2", "x3")

SPACE = {
    "name": "tiny-tree",
    "estimator": "sklearn.tree.DecisionTreeClassifier",
    "params": {"max_depth": {"type": "int", "low": 1, "high": 4}},
}

EXPERIMENT = """
space:
  name: tiny-tree
  estimator: sklearn.tree.DecisionTreeClassifier
  params:
    max_depth: {type: int, low: 1, high: 4}
data:
  dataset: patients.csv
  target: label
  groups: patient
  validation: {scheme: group-kfold, folds: 3}
surrogate: null
ensemble: posthoc
budget: 3
seed: 2
"""


def _write_patients(path, *, blank_group_row=None, blank_target_rows=()):
    """30 patients x 4 rows; the patient column sits between features, the label
    depends on the features. Returns {feature row: patient} to tell rows apart."""
    rng = np.random.default_rng(0)
    lines, patient_of = ["x1,patient,x2,x3,label"], {}
    for row in range(PATIENTS * ROWS_PER_PATIENT):
        x1, x2, x3 = (round(float(v), 6) for v in rng.normal(size=3))
        patient = f"p{row // ROWS_PER_PATIENT:02d}"
        label = "" if row in blank_target_rows else ("yes" if x1 + x2 > 0 else "no")
        group = "" if row == blank_group_row else patient
        lines.append(f"{x1},{group},{x2},{x3},{label}")
        patient_of[(x1, x2, x3)] = patient
    path.write_text("\n".join(lines) + "\n")
    return patient_of


def _patients(patient_of, X):
    return [patient_of[tuple(float(v) for v in row)] for row in X]


@pytest.fixture
def recorded(monkeypatch):
    """Every PreparedData the CLI builds, for run and resume alike."""
    prepared = []

    def spy(*args, **kwargs):
        prepared.append(data_run.prepare(*args, **kwargs))
        return prepared[-1]

    monkeypatch.setattr(cli_data_run, "prepare", spy)
    return prepared


def _run(tmp_path):
    experiment = tmp_path / "grouped.yaml"
    experiment.write_text(textwrap.dedent(EXPERIMENT))
    storage = tmp_path / "grouped.db"
    return main(["run", str(experiment), "--storage", str(storage), "--no-progress"]), storage


def test_a_grouped_run_keeps_each_patient_on_one_side_of_every_split(
    tmp_path, recorded, capsys
):
    patient_of = _write_patients(tmp_path / "patients.csv")
    code, storage = _run(tmp_path)
    assert code == 0, capsys.readouterr().err
    assert "trials: 3 (3 complete, 0 failed)" in capsys.readouterr().out
    (prepared,) = recorded
    task = prepared.task
    # (a) the group column is no feature
    assert prepared.dataset.feature_names == FEATURES
    assert task.X.shape[1] == len(FEATURES)
    # (b) the test holds out whole patients
    trained = _patients(patient_of, task.X_all)
    tested = _patients(patient_of, prepared.X_test)
    assert len(trained) + len(tested) == PATIENTS * ROWS_PER_PATIENT
    assert set(trained).isdisjoint(tested) and tested
    assert list(task.groups_all) == trained  # the task's groups are its rows' patients
    # (c) every validation fold holds whole patients, and each patient is validated
    splits = task.splits(0)
    assert len(splits) == 3
    validated = []
    for split in splits:
        fold = {trained[row] for row in split.validation}
        assert fold.isdisjoint(trained[row] for row in split.train)
        validated.extend(fold)
    assert sorted(validated) == sorted(set(trained))
    assert len(Study.load(storage).trials) == 3


def test_the_seed_decides_the_grouped_splits(tmp_path):
    _write_patients(tmp_path / "patients.csv")
    document = {
        "dataset": "patients.csv", "target": "label", "groups": "patient",
        "validation": {"scheme": "group-holdout", "ratio": 0.3},
    }
    settings = DataSettings.from_document(document)

    def held_out(seed):
        prepared = prepare(settings, spaces.load(SPACE), seed=seed, loss=None,
                           base_dir=tmp_path)
        (split,) = prepared.task.splits(0)
        assert set(prepared.task.groups[split.validation]).isdisjoint(
            prepared.task.groups[split.train])
        assert prepared.task.splits(5)[0].validation.tolist() == split.validation.tolist()
        return prepared.test_rows.tolist(), split.validation.tolist()

    assert held_out(0) == held_out(0)
    assert held_out(0) != held_out(1)


def test_rows_without_a_target_are_dropped_with_their_group(tmp_path):
    _write_patients(tmp_path / "patients.csv", blank_group_row=5, blank_target_rows=(5, 9))
    dataset = prepare(
        DataSettings.from_document({
            "dataset": "patients.csv", "target": "label", "groups": "patient",
            "validation": {"scheme": "group-kfold", "folds": 3},
        }),
        spaces.load(SPACE), seed=0, loss=None, base_dir=tmp_path,
    ).dataset
    assert len(dataset.groups) == len(dataset.y) == PATIENTS * ROWS_PER_PATIENT - 2
    assert list(dataset.groups[:8]) == ["p00"] * 4 + ["p01"] * 3 + ["p02"]


GROUPED = {"dataset": "patients.csv", "target": "label", "groups": "patient"}
GROUP_KFOLD = {"scheme": "group-kfold", "folds": 3}
SUGGESTION = "use {scheme: group-kfold, folds: 5}"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {**GROUPED, "validation": 3},
            "data.validation: 3 does not keep the groups of data.groups together, so rows of "
            "one group would be both trained on and validated (the loss leaks across groups): "
            + SUGGESTION,
        ),
        (GROUPED, "data.validation: 0.33 (the default) does not keep the groups of data.groups"),
        ({**GROUPED, "validation": {"scheme": "holdout", "ratio": 0.2}}, SUGGESTION),
        ({**GROUPED, "validation": {"scheme": "kfold", "folds": 4}}, SUGGESTION),
        (
            {"dataset": "patients.csv", "target": "label", "validation": GROUP_KFOLD},
            ("data.validation: {'scheme': 'group-kfold', 'folds': 3} splits by groups, and "
             "there are none: give data.groups"),
        ),
        (
            {"dataset": "iris", "validation": {"scheme": "group-holdout", "ratio": 0.3}},
            "splits by groups, and there are none: give data.groups",
        ),
        (
            {**GROUPED, "groups": "label", "validation": GROUP_KFOLD},
            "data.groups: 'label' is the target column (data.target)",
        ),
        (
            {**GROUPED, "groups": 3, "validation": GROUP_KFOLD},
            "data.groups: a column name (text), got 3",
        ),
        (
            {**GROUPED, "validation": {"scheme": "loo"}},
            ("data.validation.scheme: unknown scheme 'loo'; valid: holdout, kfold, "
             "group-kfold, group-holdout"),
        ),
        (
            {**GROUPED, "validation": {"scheme": "group-kfold", "folds": 1}},
            "data.validation.folds: a whole number >= 2, got 1",
        ),
    ],
)
def test_groups_and_validation_that_do_not_fit_are_refused_before_loading(document, message):
    with pytest.raises(ExperimentError, match=re.escape(message)):
        DataSettings.from_document(document)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {**GROUPED, "groups": "patients"},
            ("data.groups: patients.csv: no column 'patients'; columns: x1, patient, x2, x3, "
             "label"),
        ),
        (
            {"dataset": "iris", "groups": "patient"},
            "data.groups: iris has no group column; 'groups' names a column of a table",
        ),
        (
            {"dataset": "keel:yeast1", "groups": "patient"},
            "data.groups: keel:yeast1 has no group column",
        ),
        (
            GROUPED,
            ("data.groups: patients.csv: row 6 (counted from 0 below the header) has no group "
             "in column 'patient'; every row needs one"),
        ),
    ],
)
def test_bad_group_columns_name_data_groups(tmp_path, document, message):
    _write_patients(tmp_path / "patients.csv", blank_group_row=6)
    settings = DataSettings.from_document({**document, "validation": GROUP_KFOLD})
    with pytest.raises(ExperimentError, match=re.escape(message)):
        prepare(settings, spaces.load(SPACE), seed=0, loss=None, base_dir=tmp_path)


def test_too_few_patients_for_the_test_or_the_folds_are_named(tmp_path):
    path = tmp_path / "patients.csv"
    path.write_text("x1,patient,label\n" + "".join(
        f"{row},p{row // 4},{row % 2}\n" for row in range(12)))  # 3 patients
    space = spaces.load(SPACE)
    document = {**GROUPED, "validation": {"scheme": "group-kfold", "folds": 5}}
    with pytest.raises(ExperimentError, match=re.escape(
            "validation.folds: 5 folds of whole groups need at least 5 groups, got 2")):
        prepare(DataSettings.from_document(document), space, seed=0, loss=None,
                base_dir=tmp_path)
    path.write_text("x1,patient,label\n1,p0,0\n2,p0,1\n")
    with pytest.raises(ExperimentError, match="data.test: cannot hold out whole groups"):
        prepare(DataSettings.from_document(document), space, seed=0, loss=None,
                base_dir=tmp_path)


def test_resume_of_a_grouped_run_continues_with_the_same_task(
    tmp_path, recorded, monkeypatch, capsys
):
    _write_patients(tmp_path / "patients.csv")
    real_run_task = data_run.run_task

    def interrupted_after_two(study, task, n_trials, **options):
        real_run_task(study, task, 2, **options)
        raise KeyboardInterrupt

    monkeypatch.setattr(data_run, "run_task", interrupted_after_two)
    code, storage = _run(tmp_path)
    assert code == 130, capsys.readouterr().err
    monkeypatch.setattr(data_run, "run_task", real_run_task)
    assert main(["resume", str(storage), "--no-progress"]) == 0, capsys.readouterr().err
    assert "trials: 3 (3 complete, 0 failed)" in capsys.readouterr().out
    trials = Study.load(storage).trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 3
    first, resumed = (prepared.task for prepared in recorded)
    assert resumed.groups_all is not None
    np.testing.assert_array_equal(resumed.groups_all, first.groups_all)
    np.testing.assert_array_equal(recorded[1].test_rows, recorded[0].test_rows)
    for before, after in zip(first.splits(0), resumed.splits(0), strict=True):
        np.testing.assert_array_equal(before.validation, after.validation)
