"""A study file is never silently damaged: one writer at a time, other programs'
databases left alone, damaged files and live components named clearly."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

import ensembo
from ensembo import components
from ensembo.errors import ComponentOptionError, StorageError
from ensembo.objective import InvalidResultError
from ensembo.trials import TrialState

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def quadratic(config):
    return (config["x"] - 0.3) ** 2


def open_in_another_process(path) -> subprocess.CompletedProcess:
    script = textwrap.dedent(f"""
        import ensembo
        ensembo.Study({SPACE!r}, surrogate=None, storage={str(path)!r})
    """)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_a_second_process_is_refused_while_a_study_writes_the_file(tmp_path):
    """Both numbered new trials from their own history and INSERT OR REPLACE'd each
    other's results; opening the file also marked the live run's trials interrupted."""
    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 2)
    running = study.ask()
    refused = open_in_another_process(path)
    assert refused.returncode != 0
    assert f"{path}: in use by pid " in refused.stderr
    assert "choose another storage path" in refused.stderr
    assert study.trials[running.number].state is TrialState.RUNNING
    study.storage.close()
    assert open_in_another_process(path).returncode == 0


def test_study_objects_of_one_process_share_the_file(tmp_path):
    path = tmp_path / "study.db"
    first = ensembo.Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 2)
    again = ensembo.Study.load(path).optimize(quadratic, 1)
    assert len(again.trials) == 3 and len(first.trials) == 2


def test_another_programs_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "optuna.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE trials (trial_id INTEGER, number INTEGER)")
    with pytest.raises(StorageError, match="holds another program's database .*trials"):
        ensembo.Study(SPACE, storage=path)
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("trials",)]


def test_a_damaged_study_file_is_named(tmp_path):
    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 30)
    study.storage.close()
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a page of the trials table
    path.write_bytes(bytes(data))
    with pytest.raises(StorageError, match=rf"{path}: the study file is damaged"):
        ensembo.Study.load(path)


def test_a_folder_that_is_a_file_is_named(tmp_path):
    (tmp_path / "runs").write_text("")
    with pytest.raises(StorageError, match="runs/study.db: cannot create its folder"):
        ensembo.Study(SPACE, storage=tmp_path / "runs" / "study.db")


def test_a_live_surrogate_is_not_resumed_as_random_search(tmp_path):
    """A live surrogate was stored as None, which is random search: the resumed study
    silently stopped modelling. A live initial design failed with a NoneType message."""
    path = tmp_path / "study.db"
    forest = components.build("surrogate", "rf")
    ensembo.Study(SPACE, surrogate=forest, storage=path).optimize(quadratic, 3).storage.close()
    named = r"surrogate \(RandomForestSurrogate\).*surrogate=\.\.\."
    with pytest.raises(StorageError, match=named):
        ensembo.Study.load(path)
    resumed = ensembo.Study.load(path, surrogate=forest)
    assert resumed.proposer.surrogate is forest


def test_a_loss_beyond_the_float_range_fails_its_trial_and_the_run_goes_on():
    """float(10**400) raised OverflowError out of the loop, and the trial was re-run
    (and crashed again) on every resume."""
    study = ensembo.Study(SPACE, surrogate=None)
    study.optimize(lambda config: 10**400 if config["x"] > 0.5 else config["x"], 8)
    states = [trial.state for trial in study.trials]
    assert TrialState.FAILED in states and TrialState.COMPLETE in states
    failed = next(t for t in study.trials if t.state is TrialState.FAILED)
    assert "too large for a float" in failed.error


def test_a_rerun_that_changes_the_search_says_so(tmp_path, caplog):
    """A rerun with another surrogate or budget continued silently (INFO only)."""
    path = tmp_path / "study.db"
    ensembo.Study(SPACE, surrogate=None, budget=4, storage=path).optimize(quadratic, 2)
    with caplog.at_level("WARNING", logger="ensembo"):
        ensembo.Study(SPACE, surrogate=None, budget=4, storage=path, metadata={"run": 2})
        assert not caplog.records  # metadata and environments are not the search
        ensembo.Study(SPACE, surrogate="rf", budget=6, storage=path)
    assert caplog.messages == [
        (f"continuing {path} with changed settings: acquisition_optimizer auto -> local-search; "
        "surrogate null -> rf; budget 4 -> 6")
    ]


def test_forked_workers_do_not_keep_the_file_locked(tmp_path):
    """A fork-based process pool's workers inherited the lock: closing the study did not
    release it until the pool shut down."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    path = tmp_path / "study.db"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        study = ensembo.Study(SPACE, surrogate=None, storage=path)
        study.optimize(quadratic, 4, executor=pool)
        study.close()
        assert open_in_another_process(path).returncode == 0  # the workers still live


def test_a_symlink_to_a_study_in_use_is_refused(tmp_path):
    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path)
    (tmp_path / "link.db").symlink_to(path)
    assert "in use by pid" in open_in_another_process(tmp_path / "link.db").stderr
    study.close()


def test_a_filesystem_without_locks_warns_and_works(tmp_path, monkeypatch, caplog):
    """flock's ENOLCK (NFS without lockd) escaped as a raw OSError: no study could open."""
    import errno

    from ensembo.storage import writer_lock

    def no_locks(handle, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(writer_lock.fcntl, "flock", no_locks)
    with caplog.at_level("WARNING", logger="ensembo"):
        study = ensembo.Study(SPACE, surrogate=None, storage=tmp_path / "s.db")
    study.optimize(quadratic, 2)
    assert "cannot lock the study (No locks available)" in caplog.text


def test_a_refused_study_lets_go_of_the_file(tmp_path):
    """A construction refused after the claim (another seed) kept the file locked for as
    long as its exception lived (a notebook keeps the last one)."""
    path = tmp_path / "study.db"
    ensembo.Study(SPACE, surrogate=None, seed=0, storage=path).close()
    with pytest.raises(StorageError, match="seed 0 \\(given 1\\)") as refused:
        ensembo.Study(SPACE, surrogate=None, seed=1, storage=path)
    assert refused.value is not None  # still alive here
    assert open_in_another_process(path).returncode == 0


def test_with_closes_the_study():
    with ensembo.Study(SPACE, surrogate=None) as study:
        study.optimize(quadratic, 2)
    assert len(study.trials) == 2


def test_a_folder_or_file_without_permission_is_not_called_damaged(tmp_path, monkeypatch):
    """sqlite3 says "unable to open database file" or "attempt to write a readonly
    database" for a folder or file the process may not write; the study said "not a
    usable ensembo study file", as for a damaged one."""
    from ensembo.storage import sqlite as sqlite_storage

    refused = sqlite3.OperationalError("unable to open database file")
    monkeypatch.setattr(sqlite_storage.os, "access", lambda path, mode: path != tmp_path)
    message = sqlite_storage._cannot_open(tmp_path / "x.db", refused)
    assert message.startswith(f"cannot write in its folder {tmp_path} (permission denied)")
    study_file = tmp_path / "y.db"
    study_file.write_bytes(b"")
    monkeypatch.setattr(sqlite_storage.os, "access", lambda path, mode: path != study_file)
    assert "cannot read and write this file (permission denied)" in (
        sqlite_storage._cannot_open(study_file, refused))
    monkeypatch.undo()
    read_only = sqlite3.OperationalError("attempt to write a readonly database")
    assert "read-only" in sqlite_storage._cannot_open(study_file, read_only)
    assert "not a usable" in sqlite_storage._cannot_open(
        study_file, sqlite3.DatabaseError("file is not a database"))


def test_a_study_file_cut_short_is_called_damaged_with_a_way_to_salvage_it(tmp_path):
    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 40)
    study.storage.close()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # an interrupted copy
    with pytest.raises(StorageError, match=rf"{path}: the study file is damaged .*\.recover"):
        ensembo.Study.load(path)


def test_an_empty_predictions_value_is_called_damaged(tmp_path):
    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path)
    trial = study.ask()
    study.tell(trial, ensembo.Evaluation(loss=1.0, predictions=[0.5, 0.5]))
    study.close()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE trials SET predictions = X'' WHERE number = 0")
    with pytest.raises(StorageError, match="trial 0 cannot be read .*EOFError.* damaged"):
        ensembo.Study.load(path)  # was a bare EOFError, which the command line calls a bug


@pytest.mark.parametrize("name", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_sqlites_in_memory_names_keep_the_study_in_memory(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    first = ensembo.Study(SPACE, surrogate=None, storage=name)
    second = ensembo.Study(SPACE, surrogate=None, storage=name)  # refused each other
    first.tell(first.ask(), 1.0)
    second.tell(second.ask(), 2.0)
    assert list(tmp_path.iterdir()) == []  # no ":memory:.lock", no file "sqlite:"


@pytest.mark.parametrize("given", ["runs/", "", "folder"])
def test_a_folder_or_empty_storage_is_refused_by_name(tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    with pytest.raises(StorageError, match=f"storage '{given}' is .*give a file path"):
        ensembo.Study(SPACE, storage=given)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]  # no file "runs"


def test_metadata_a_study_file_cannot_keep_is_named_before_the_file_is_made(tmp_path):
    import datetime

    path = tmp_path / "study.db"
    when = {"runs": [{"when": datetime.date(2024, 1, 1)}]}
    with pytest.raises(TypeError, match=r"cannot keep metadata\['runs'\]\[0\]\['when'\] "
                                        r"\(a date: datetime.date\(2024, 1, 1\)\)"):
        ensembo.Study(SPACE, storage=path, metadata=when)
    assert not path.exists()
    assert ensembo.Study(SPACE, metadata=when).metadata == when  # in memory it is kept


def test_info_a_study_file_cannot_keep_is_named_by_its_place(tmp_path):
    import datetime

    study = ensembo.Study(SPACE, surrogate=None, storage=tmp_path / "study.db")
    trial = study.ask()
    info = {"metrics": {"fold3": {"when": datetime.datetime(2024, 1, 1)}}}
    with pytest.raises(InvalidResultError,
                       match=r"trial 0's info\['metrics'\]\['fold3'\]\['when'\] \(a datetime"):
        study.tell(trial, ensembo.Evaluation(loss=1.0, info=info))
    assert study.trials[0].state is TrialState.RUNNING  # nothing recorded


def test_a_reader_opens_a_study_for_reading_only_while_its_writer_runs(tmp_path):
    from ensembo.storage import open_existing_storage

    path = tmp_path / "study.db"
    study = ensembo.Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 3)
    reader = open_existing_storage(path, read_only=True)  # a report of an archived study
    assert [t.number for t in reader.trials()] == [0, 1, 2]
    with pytest.raises(StorageError, match="read-only"):
        reader.write_meta({})
    reader.close()
    study.optimize(quadratic, 1)  # the writer goes on
    study.close()


def test_a_stored_option_a_newer_rule_refuses_says_how_to_resume(tmp_path):
    path = tmp_path / "study.db"
    ensembo.Study(SPACE, storage=path, acquisition_optimizer={"name": "lbfgs"}).close()
    with sqlite3.connect(path) as connection:  # stored before n_sobol had to be a power of 2
        (meta,) = connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        meta = meta.replace('"name": "lbfgs"', '"n_sobol": 100, "name": "lbfgs"')
        connection.execute("UPDATE meta SET value = ? WHERE key = 'study'", (meta,))
    with pytest.raises(ComponentOptionError) as refused:
        ensembo.Study.load(path)
    assert "give the component anew to Study.load" in "\n".join(refused.value.__notes__)
    resumed = ensembo.Study.load(path, acquisition_optimizer={"name": "lbfgs", "n_sobol": 128})
    resumed.close()


@pytest.mark.parametrize("content", [b"x", b"notes about the run\n"])
def test_a_file_that_is_no_database_is_refused_and_left_untouched(tmp_path, content):
    path = tmp_path / "study.db"
    path.write_bytes(content)  # SQLite took a 1-byte file for an empty database
    with pytest.raises(StorageError, match="is not a SQLite database"):
        ensembo.Study(SPACE, storage=path)
    assert path.read_bytes() == content
