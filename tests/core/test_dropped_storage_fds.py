"""A study (or storage) dropped without ``close()`` lets go of its SQLite file at once,
not at the next cyclic garbage collection (leak audit, finding 6: sqlite3 keeps a
connection in a reference cycle, so each dropped study kept the ``.db``, ``-wal`` and
``-shm`` descriptors open until ``gc`` ran, for ever with ``gc`` disabled)."""

from __future__ import annotations

import contextlib
import gc
import os

import pytest

import ensembo
from ensembo.storage.sqlite import SQLiteStorage

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc")


@contextlib.contextmanager
def _gc_disabled():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run_and_drop(path) -> None:
    study = ensembo.Study(SPACE, surrogate=None, storage=path)
    study.optimize(lambda c: c["x"], n_trials=2)  # and no close()


def test_a_dropped_study_closes_its_file_without_a_garbage_collection(tmp_path, open_files_under):
    with _gc_disabled():
        for n in range(5):
            _run_and_drop(tmp_path / f"s{n}.db")
            assert open_files_under(tmp_path) == []
        for n in range(5):
            ensembo.Study.load(tmp_path / f"s{n}.db")  # dropped at once
        assert open_files_under(tmp_path) == []


def test_a_dropped_read_only_storage_closes_its_connection(tmp_path, open_files_under):
    _run_and_drop(tmp_path / "s.db")
    with _gc_disabled():
        storage = SQLiteStorage.existing(tmp_path / "s.db", read_only=True)
        assert storage.trials() and open_files_under(tmp_path)
        del storage
        assert open_files_under(tmp_path) == []


def test_close_still_closes_and_releases_the_file_and_a_later_drop_is_harmless(
    tmp_path, open_files_under
):
    study = ensembo.Study(SPACE, surrogate=None, storage=tmp_path / "s.db")
    study.optimize(lambda c: c["x"], n_trials=2)
    study.close()
    assert not [n for n in open_files_under(tmp_path) if not n.endswith(".lock")]
    other = ensembo.Study.load(tmp_path / "s.db")  # the writer lock is let go of too
    other.optimize(lambda c: c["x"], n_trials=1)
    del study
    assert len(other.trials) == 3
    other.close()
