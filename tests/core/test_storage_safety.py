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
from ensembo.errors import StorageError
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
