"""A study in a folder this process cannot write is read whole, write-ahead log
included: SQLite's immutable reading there ignored the trials still in ``X.db-wal``
(a killed run copied with its log), and the report showed 5 trials of 12, or "no study
stored here" when all were in the log."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

import ensembo
from ensembo.errors import StorageError
from ensembo.report.data import compute_report
from ensembo.storage import open_existing_storage
from ensembo.storage import private_copy as private_copy_module

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def first_coordinate(config):
    return config["x"]


def archive_with_log(tmp_path, checkpointed: int, in_log: int):
    """A study's file and write-ahead log copied while its study was open (as after a
    kill): ``checkpointed`` trials in the file, ``in_log`` more only in the log."""
    source = tmp_path / "run" / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, seed=0, storage=source)
    if checkpointed:
        study.optimize(first_coordinate, n_trials=checkpointed)
        with contextlib.closing(sqlite3.connect(source)) as other:
            other.execute("PRAGMA wal_checkpoint(FULL)")
    study.optimize(first_coordinate, n_trials=in_log)
    archive = tmp_path / "archive"
    archive.mkdir()
    for name in ("study.db", "study.db-wal"):
        shutil.copyfile(source.with_name(name), archive / name)
    study.close()
    assert (archive / "study.db-wal").stat().st_size > 0
    return archive / "study.db"


@contextlib.contextmanager
def unwritable(folder):
    """``folder`` made read-only for this process: chmod does not bind root, the
    immutable attribute does."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: no read-only folder to test in")
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
            pytest.skip("this file system takes no immutable attribute")
        undo = ["chattr", "-i", str(folder)]
    else:
        folder.chmod(0o555)
        undo = ["chmod", "755", str(folder)]
    try:
        with contextlib.suppress(OSError):
            (folder / "probe").touch()
            pytest.skip("the folder stayed writable")
        yield folder
    finally:
        subprocess.run(undo, check=True)


@pytest.fixture
def private_temp(tmp_path, monkeypatch):
    """The folder private copies are made in, to see that they are removed."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def test_a_report_in_a_read_only_folder_shows_the_trials_in_the_log(tmp_path, private_temp):
    path = archive_with_log(tmp_path, checkpointed=5, in_log=7)
    with unwritable(path.parent):
        data = compute_report(path)
    assert [t.number for t in data.trials] == list(range(12))
    assert list(private_temp.iterdir()) == []  # the copy went with its connection


def test_a_report_through_a_symbolic_link_shows_the_trials_in_the_log(tmp_path, private_temp):
    """The log was looked for beside the link, where there is none, and the file was
    read as immutable: 5 of 12 trials, without a word (review)."""
    path = archive_with_log(tmp_path, checkpointed=5, in_log=7)
    link = tmp_path / "mine.db"
    link.symlink_to(path)
    with unwritable(path.parent):
        data = compute_report(link)
    assert [t.number for t in data.trials] == list(range(12))


def test_a_study_all_in_its_log_is_found_in_a_read_only_folder(tmp_path, private_temp):
    path = archive_with_log(tmp_path, checkpointed=0, in_log=4)
    with unwritable(path.parent):
        storage = open_existing_storage(path, read_only=True)
        try:
            assert len(storage.trials()) == 4
            with pytest.raises(StorageError, match="read-only"):
                storage.write_meta({})
        finally:
            storage.close()
        with pytest.raises(StorageError, match="cannot write in its folder"):
            ensembo.Study.load(path)  # continuing needs a writable folder, and says so
    assert list(private_temp.iterdir()) == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["study.db", "study.db-wal"]


def test_a_log_that_cannot_be_copied_is_refused_naming_it(tmp_path, private_temp, monkeypatch):
    path = archive_with_log(tmp_path, checkpointed=2, in_log=3)

    def no_space(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(private_copy_module.shutil, "copyfile", no_space)
    with unwritable(path.parent), pytest.raises(StorageError) as refused:
        compute_report(path)
    message = str(refused.value)
    assert f"{path}-wal" in message and "No space left on device" in message
    assert "copy the study (study.db and study.db-wal) to a writable folder" in message
    assert list(private_temp.iterdir()) == []


def test_a_read_only_folder_without_a_log_is_read_in_place(tmp_path, private_temp):
    path = tmp_path / "archive" / "study.db"
    ensembo.Study(SPACE, surrogate=None, seed=0, storage=path).optimize(
        first_coordinate, n_trials=3).close()  # a study that ended merges its log
    (tmp_path / "archive" / "study.db.lock").unlink(missing_ok=True)
    with unwritable(path.parent):
        storage = open_existing_storage(path, read_only=True)
        assert not isinstance(storage._connection, private_copy_module.PrivateCopyConnection)
        assert len(storage.trials()) == 3
        storage.close()


def test_a_log_a_running_study_keeps_changing_is_refused(tmp_path, private_temp, monkeypatch):
    path = archive_with_log(tmp_path, checkpointed=0, in_log=2)
    stamps = iter(range(1000))
    monkeypatch.setattr(private_copy_module, "_signature", lambda file: (next(stamps), 0))
    with unwritable(path.parent), pytest.raises(StorageError, match="changed while it was"):
        open_existing_storage(path, read_only=True)
    assert list(private_temp.iterdir()) == []
