"""A data run and an estimator's search (``run_task``) ask ``ensembo_should_stop`` before
each trial and tell ``ensembo_study_finished`` when they end, as ``optimize`` does: the
task loop never asked a stopping plugin, and only the CLI's own progress observers heard
the run end (maintainer audit)."""

from __future__ import annotations

import pytest

import ensembo
from ensembo.ml.loop import run_task
from ensembo.ml.task import Task
from ensembo.study import Study


class StopAfterThree:
    def __init__(self):
        self.finished = 0

    @ensembo.hookimpl
    def ensembo_should_stop(self, study):
        return len(study.trials) >= 3 or None

    @ensembo.hookimpl
    def ensembo_study_finished(self, study):
        self.finished += 1


def _run(space, data, observer, n_trials, **task_options):
    X, y = data
    task = Task(X, y, task="classification", space=space, validation=0.3, **task_options)
    study = Study(space, surrogate=None, validation_targets=task.validation_targets(),
                  loss="zero-one", task="classification", seed=0, callbacks=[observer])
    run_task(study, task, n_trials)
    return study


def test_a_stopping_plugin_stops_the_run_and_hears_it_end(tree_only_space, classification_data):
    observer = StopAfterThree()
    study = _run(tree_only_space, classification_data, observer, 10)
    assert len(study.trials) == 3  # was 10
    assert observer.finished == 1  # was 0


def test_the_run_end_is_heard_when_the_run_fails(tree_only_space, classification_data,
                                                 monkeypatch):
    observer = StopAfterThree()

    def broken_ask(*args, **kwargs):
        raise RuntimeError("ask failed")

    monkeypatch.setattr(Study, "ask", broken_ask)
    with pytest.raises(RuntimeError, match="ask failed"):
        _run(tree_only_space, classification_data, observer, 2)
    assert observer.finished == 1
