"""What a study file holds after a crash between two writes, and what memory holds."""

from __future__ import annotations

import numpy as np

from ensembo import Study
from ensembo.experiment import parse_experiment
from ensembo.storage.sqlite import SQLiteStorage
from ensembo.stored_study import ModelState
from ensembo.trials import Evaluation

SPACE = {"params": {"x": {"type": "float", "low": -5.0, "high": 5.0}}}


class Chain:
    """A proposer whose next fit depends on the last one (a Markov chain's position)."""

    def __init__(self, position=None):
        self.position = position

    def state(self):
        return self.position

    def restore(self, state):
        self.position = state


def test_a_resume_after_the_state_was_stored_but_not_its_trial_starts_one_fit_earlier(tmp_path):
    # The state is stored before the trial it proposed, in another write; a crash in
    # between left the chain one step ahead of the file, and every later proposal moved.
    storage = SQLiteStorage(tmp_path / "study.db")
    storage.write_meta({})
    kept = ModelState(storage, surrogate="gp")
    kept.save(Chain(1.0), for_trial=5)
    kept.save(Chain(2.0), for_trial=6)
    resumed = Chain()
    ModelState(storage, surrogate="gp").restore(resumed, stored_trials=6)  # no trial 6
    assert resumed.position == 1.0
    ModelState(storage, surrogate="gp").restore(resumed, stored_trials=7)
    assert resumed.position == 2.0
    first = Chain()
    storage.write_meta({})
    kept = ModelState(storage, surrogate="gp")
    kept.save(Chain(1.0), for_trial=5)
    ModelState(storage, surrogate="gp").restore(first, stored_trials=5)
    assert first.position is None  # nothing before the first fit: start afresh
    storage.close()


def test_a_run_that_died_while_queueing_its_entries_queues_the_rest(tmp_path):
    experiment = parse_experiment({"space": SPACE, "objective": "math:fabs", "budget": 5,
                                   "enqueue": [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}]})
    path = tmp_path / "study.db"
    study = Study(SPACE, storage=path, seed=0)
    study.enqueue({"x": 1.0})  # the process died here
    study.close()
    resumed = Study.load(path)
    experiment.queue_into(resumed)
    assert [t.config["x"] for t in resumed.trials] == [1.0, 2.0, 3.0]
    experiment.queue_into(resumed)  # all there: nothing again
    for _ in range(4):  # the queue, then one of the proposer's
        resumed.tell(resumed.ask(), 1.0)
    experiment.queue_into(resumed)
    assert len(resumed.trials) == 4
    resumed.close()


def test_trials_keep_their_own_predictions_when_the_caller_reuses_its_buffer():
    study = Study(SPACE, seed=0)
    buffer = np.zeros(3)
    for value in (1.0, 2.0):
        trial = study.ask()
        buffer[:] = value
        study.tell(trial, Evaluation(loss=value, predictions=buffer))
    assert [t.predictions.tolist() for t in study.trials] == [[1.0] * 3, [2.0] * 3]
    assert not study.trials[0].predictions.flags.writeable


def test_a_read_only_view_of_the_callers_buffer_is_copied_too():
    study = Study(SPACE, seed=0)
    buffer = np.zeros(3)
    view = buffer.view()
    view.setflags(write=False)  # a memory map opened "r" is such a view
    for value in (1.0, 2.0):
        trial = study.ask()
        buffer[:] = value
        study.tell(trial, Evaluation(loss=value, predictions=view))
    assert [t.predictions.tolist() for t in study.trials] == [[1.0] * 3, [2.0] * 3]


def test_finish_times_never_go_back_so_a_resume_replays_trials_in_the_order_told(
        tmp_path, monkeypatch):
    import itertools
    import time

    calls = itertools.count()
    # a clock that is set back by 500 s after its eighth reading (an NTP step)
    monkeypatch.setattr(time, "time", lambda: (n := next(calls)) + (1000.0 if n < 8 else 500.0))
    path = tmp_path / "study.db"
    study = Study(SPACE, seed=0, storage=path)
    for value in (1.0, 2.0, 3.0, 4.0, 5.0):
        study.tell(study.ask(), value)
    finished = [t.finished_at for t in study.trials]
    assert finished == sorted(finished) and len(set(finished)) == 5
    study.close()
    resumed = Study.load(path)
    resumed.tell(resumed.ask(), 6.0)  # continues after the last stored finish
    assert resumed.trials[5].finished_at > finished[-1]
    resumed.close()


_BATCH_RUN = """
import os, sys
from ensembo import Study

path, die_at = sys.argv[1], int(sys.argv[2])
space = {"params": {"x": {"type": "float", "low": -5.0, "high": 5.0},
                    "y": {"type": "float", "low": -5.0, "high": 5.0}}}
study = Study(space, storage=path, seed=3, n_initial=3, surrogate="gp")


class DiesOnATrialWrite:
    # The process is killed (no clean-up, no commit) as it writes its die_at-th trial row.
    def __init__(self, connection):
        self._connection, self._rows = connection, 0

    def execute(self, sql, *args):
        if sql.startswith("INSERT OR REPLACE INTO trials"):
            self._rows += 1
            if self._rows == die_at:
                os._exit(17)
        return self._connection.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._connection, name)


if die_at:
    study.storage._connection = DiesOnATrialWrite(study.storage._connection)
while len(study.trials) < 9:
    for trial in study.ask_batch(3):
        study.tell(trial, (trial.config["x"] - 1.0) ** 2 + (trial.config["y"] + 2.0) ** 2)
"""


def test_a_batch_ask_killed_between_its_trial_writes_resumes_as_the_uninterrupted_run(
    tmp_path,
):
    # Rows 1-6 are the initial batch, asked then told; row 8 is the second trial of the
    # first model-based batch. Written one by one, the batch resumed with its first
    # trial only, and its proposer's state (stored for the whole batch) moved the rest.
    import subprocess
    import sys

    def run(path, die_at):
        return subprocess.run([sys.executable, "-c", _BATCH_RUN, str(path), str(die_at)],
                              capture_output=True, text=True, timeout=300)

    whole, cut = tmp_path / "whole.db", tmp_path / "cut.db"
    uninterrupted, killed = run(whole, 0), run(cut, 8)
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    assert killed.returncode == 17, killed.stderr
    assert [t.state.value for t in Study.load(cut).trials] == ["complete"] * 3  # none of it
    finished = run(cut, 0)
    assert finished.returncode == 0, finished.stderr
    assert ([t.config for t in Study.load(cut).trials]
            == [t.config for t in Study.load(whole).trials])


def test_an_interrupt_between_two_rows_of_a_batch_writes_none_of_it(tmp_path):
    # SystemExit from a SIGTERM handler is not held back like Ctrl-C: between two rows
    # it committed the first, and the resumed run went another way.
    from ensembo.trials import Trial

    storage = SQLiteStorage(tmp_path / "study.db")
    storage.write_meta({})

    class ExitsOnTheSecondRow:
        def __init__(self, connection):
            self._connection, self._rows = connection, 0

        def execute(self, sql, *args):
            if sql.startswith("INSERT OR REPLACE INTO trials"):
                self._rows += 1
                if self._rows == 2:
                    raise SystemExit(143)
            return self._connection.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._connection, name)

    storage._connection = ExitsOnTheSecondRow(storage._connection)
    batch = [Trial(number=n, config={"x": float(n)}) for n in range(3)]
    try:
        storage.put_trials(batch)
    except SystemExit:
        pass
    assert storage.trials() == []
    storage.put_trial(batch[0])  # the next write is not blocked by a transaction left open
    assert [t.number for t in storage.trials()] == [0]
    storage.close()


def test_a_batch_a_second_interrupt_left_open_is_rolled_back_by_the_next_write(tmp_path):
    # A second interrupt during the rollback left the transaction open; the next write
    # committed it, half batch included ([0, 7] instead of [7]).
    from ensembo.trials import Trial

    storage = SQLiteStorage(tmp_path / "study.db")
    storage.write_meta({})

    class InterruptedTwice:
        def __init__(self, connection):
            self._connection, self._rows, self._rollbacks = connection, 0, 0

        def execute(self, sql, *args):
            if sql.startswith("INSERT OR REPLACE INTO trials"):
                self._rows += 1
                if self._rows == 2:
                    raise SystemExit(143)
            if sql == "ROLLBACK" and not self._rollbacks:
                self._rollbacks += 1
                raise KeyboardInterrupt
            return self._connection.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._connection, name)

    storage._connection = InterruptedTwice(storage._connection)
    try:
        storage.put_trials([Trial(number=n, config={"x": float(n)}) for n in range(3)])
    except KeyboardInterrupt:
        pass
    assert storage._connection.in_transaction  # left open
    storage.put_trial(Trial(number=7, config={"x": 7.0}))
    assert [t.number for t in storage.trials()] == [7]
    storage.close()
