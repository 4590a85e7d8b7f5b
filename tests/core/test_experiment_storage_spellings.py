"""``storage:`` and ``--storage`` read SQLite's spellings as ``Study(storage=...)`` does:
they were taken as plain paths, so ``:memory:`` made a file of that name next to the
experiment, ``sqlite:///runs/a.db`` a folder ``sqlite:``, and ``sqlite://`` (since the
trailing-slash check) was refused as 'names a folder (.../sqlite:)'."""

from __future__ import annotations

import pytest

from ensembo.cli import main
from ensembo.experiment import load_experiment

HEAD = "space: svm\nobjective: math:fabs\nbudget: 2\n"


def _experiment(tmp_path, storage: str | None = None):
    path = tmp_path / "exp.yaml"
    path.write_text(HEAD + (f"storage: '{storage}'\n" if storage else ""), encoding="utf-8")
    return load_experiment(path)


@pytest.mark.parametrize("storage", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_name_keeps_the_study_in_memory(tmp_path, storage):
    assert _experiment(tmp_path, storage).storage_path() is None
    assert _experiment(tmp_path).storage_path(storage) is None


def test_a_sqlite_url_names_its_path_relative_to_the_experiment_file(tmp_path):
    experiment = _experiment(tmp_path, "sqlite:///runs/a.db")
    assert experiment.storage_path() == tmp_path / "runs" / "a.db"
    absolute = tmp_path / "b.db"
    assert _experiment(tmp_path).storage_path(f"sqlite:///{absolute}") == absolute


def test_running_with_an_in_memory_name_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "exp.yaml"
    path.write_text(  # len(config) is a loss: an objective that needs no module
        "objective: builtins:len\nbudget: 2\nstorage: ':memory:'\n"
        "space:\n  params:\n    x: {type: float, low: -1, high: 1}\n",
        encoding="utf-8",
    )
    assert main(["run", str(path), "--no-progress"]) == 0
    assert main(["run", str(path), "--no-progress", "--storage", "sqlite://"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp.yaml"]
