"""Two Study objects of one process on one file: one writes at a time. The newer takes
the file over, and the older one's writes are refused; a newer one that wrote nothing
hands the file back."""

from __future__ import annotations

import contextlib
import gc
import sqlite3

import pytest

from ensembo import Study, TrialState
from ensembo.errors import StorageError

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def quadratic(config):
    return (config["x"] - 0.3) ** 2


def stored_trials(path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT number, state, loss FROM trials").fetchall()


def test_the_older_object_cannot_tell_a_trial_the_newer_one_handed_out_again(tmp_path):
    """Both handed out trial 3 (the second marked the first's running trial interrupted)
    and each overwrote the other's results."""
    path = tmp_path / "study.db"
    first = Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 3)
    running = first.ask()
    again = Study.load(path)
    rerun = again.ask()
    assert rerun.number == running.number == 3 and rerun.attempts == 2
    with pytest.raises(StorageError, match=rf"^{path}: another Study object .* opened this"):
        first.tell(running, 1.0)
    again.tell(rerun, 2.0)
    again.tell(again.ask(), 5.0)
    assert stored_trials(path)[3:] == [(3, "complete", 2.0), (4, "complete", 5.0)]
    assert [t.loss for t in again.trials][3:] == [2.0, 5.0]


def test_a_newer_object_takes_over_and_the_older_one_cannot_overwrite_it(tmp_path):
    path = tmp_path / "study.db"
    first = Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 2)
    again = Study.load(path).optimize(quadratic, 1)
    with pytest.raises(StorageError, match="has opened this file since"):
        first.optimize(quadratic, 1)
    assert len(first.trials) == 2  # nothing asked, nothing marked
    again.optimize(quadratic, 1)
    assert [row[:2] for row in stored_trials(path)] == [(n, "complete") for n in range(4)]


def test_a_newer_object_that_wrote_nothing_hands_the_file_back(tmp_path):
    path = tmp_path / "study.db"
    first = Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 2)
    with pytest.raises(StorageError, match="seed 0 \\(given 1\\)"):
        Study(SPACE, surrogate=None, seed=1, storage=path)
    Study.load(path).close()
    first.optimize(quadratic, 1)
    assert len(stored_trials(path)) == 3


@pytest.mark.parametrize("let_go", ["close", "garbage-collect"])
def test_a_closed_or_collected_study_releases_the_file(tmp_path, let_go):
    path = tmp_path / "study.db"
    first = Study(SPACE, surrogate=None, storage=path)
    first.ask()
    if let_go == "close":
        first.close()
    else:
        del first
        gc.collect()
    resumed = Study.load(path)
    assert resumed.trials[0].state is TrialState.INTERRUPTED
    assert resumed.ask().number == 0


def test_two_studies_handed_one_storage_object_do_not_overwrite_each_other(tmp_path):
    """They shared the object's one claim: both wrote trial 0, and the file kept the
    second's. The newer study writes; the older one is refused, as for a file."""
    from ensembo.storage import MemoryStorage, SQLiteStorage

    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    for storage in (SQLiteStorage(tmp_path / "s.db"), MemoryStorage()):
        older = Study(space, storage=storage)
        newer = Study.load(storage)
        newer.add({"x": 0.2}, 0.2)
        with pytest.raises(StorageError, match="another Study has opened this storage object"):
            older.add({"x": 0.1}, 0.1)
        assert [t.config["x"] for t in storage.trials()] == [0.2]
        storage_close = getattr(storage, "close", None)
        if storage_close:
            storage_close()
