"""A study shared by threads that each ask and tell."""

from __future__ import annotations

import threading
import time

import pytest

from ensembo import Study, TrialState


@pytest.mark.parametrize("stored", [False, True])
def test_threads_asking_and_telling_get_distinct_trials(flat_space, tmp_path, stored):
    study = Study(flat_space, surrogate=None, storage=tmp_path / "s.db" if stored else None)
    errors: list[BaseException] = []

    def worker():
        try:
            for _ in range(5):
                trial = study.ask()
                time.sleep(0.005)
                study.tell(trial, trial.config["x"] ** 2)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [t.number for t in study.trials] == list(range(20))
    assert all(t.state is TrialState.COMPLETE for t in study.trials)
    if stored:
        assert len(Study.load(tmp_path / "s.db").trials) == 20
