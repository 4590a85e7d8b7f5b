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
