"""The SQLite storage under interrupts: nothing written is lost, nothing is left stuck."""

from __future__ import annotations

import pytest

from ensembo.storage.sqlite import SQLiteStorage
from ensembo.trials import Trial, TrialState


def trial(number: int, state: TrialState = TrialState.RUNNING) -> Trial:
    return Trial(number=number, config={"x": 0.5}, state=state)


def test_a_transaction_an_interrupt_left_open_does_not_block_later_writes(tmp_path):
    storage = SQLiteStorage(tmp_path / "s.db")
    storage._connection.execute("BEGIN IMMEDIATE")  # Ctrl-C right after BEGIN
    storage._connection.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('study', '{\"seed\": 3}')"
    )
    storage.put_trial(trial(0))
    assert [t.number for t in SQLiteStorage(tmp_path / "s.db").trials()] == [0]
    assert SQLiteStorage(tmp_path / "s.db").read_meta() == {"seed": 3}


def test_a_write_interrupted_before_its_commit_is_kept(tmp_path):
    storage = SQLiteStorage(tmp_path / "s.db")
    with pytest.raises(KeyboardInterrupt), storage._transaction():
        storage._connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('study', '{}')"
        )
        raise KeyboardInterrupt  # between the statement and the commit
    assert SQLiteStorage(tmp_path / "s.db").read_meta() == {}
    storage.put_trial(trial(1, TrialState.INTERRUPTED))
    assert [t.state for t in storage.trials()] == [TrialState.INTERRUPTED]


def _damaged_copy(tmp_path, statement):
    """A stored 4-trial study with one row changed by hand, as a disk error or an edit
    might leave it."""
    import sqlite3

    import ensembo

    path = tmp_path / "study.db"
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    with ensembo.Study(space, surrogate=None, storage=path, seed=0) as study:
        study.optimize(lambda config: config["x"], n_trials=4)
    with sqlite3.connect(path) as connection:
        connection.execute(statement)
    connection.close()
    return path


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("UPDATE meta SET value = '{not json'", "its settings (table meta) cannot be read"),
        ("UPDATE meta SET value = '[1, 2]'", "its settings (table meta) cannot be read"),
        ("UPDATE meta SET value = '{\"format\": 1}'", "the stored settings lack n_initial"),
        ("UPDATE trials SET state = 'done' WHERE number = 2", "trial 2 cannot be read"),
        ("UPDATE trials SET config = '{x' WHERE number = 2", "trial 2 cannot be read"),
        ("UPDATE trials SET loss = NULL WHERE number = 2", "trial 2 cannot be read"),
        ("UPDATE trials SET predictions = x'00112233' WHERE number = 2", "trial 2 cannot be read"),
        ("DELETE FROM trials WHERE number = 1", "the stored trials are not numbered 0, 1, 2"),
    ],
    ids=["meta-json", "meta-list", "meta-keys", "state", "config", "loss", "predictions", "gap"],
)
def test_a_damaged_row_names_the_file_and_the_row(tmp_path, statement, named):
    """These raised a bare JSONDecodeError, KeyError('n_initial') or ValueError that named
    neither the file nor the trial."""
    import ensembo
    from ensembo.errors import StorageError

    path = _damaged_copy(tmp_path, statement)
    with pytest.raises(StorageError) as refused:
        ensembo.Study.load(path)
    assert str(path) in str(refused.value) and named in str(refused.value)
