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


def test_it_is_asked_before_each_trial_of_a_parallel_batch(tree_only_space,
                                                         classification_data):
    """It was asked once per batch: n_jobs=2 ran 4 trials where optimize ran 3."""
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    study = Study(tree_only_space, surrogate=None, validation_targets=task.validation_targets(),
                  loss="zero-one", task="classification", seed=0, callbacks=[StopAfterThree()])
    run_task(study, task, 10, n_jobs=2)
    assert len(study.trials) == 3


class StopAlways:
    @ensembo.hookimpl
    def ensembo_should_stop(self, study):
        return True


def test_a_search_runs_its_first_trial_whatever_a_plugin_says(tree_only_space,
                                                             classification_data):
    """A stop before any trial left a data run with nothing to select, reported as a
    mistake in the experiment file (exit 2): like the timeout, it lets the first trial
    run, so the search has a model."""
    study = _run(tree_only_space, classification_data, StopAlways(), 5)
    assert len(study.trials) == 1


def test_the_run_end_is_heard_when_the_run_fails(tree_only_space, classification_data,
                                                 monkeypatch):
    observer = StopAfterThree()

    def broken_ask(*args, **kwargs):
        raise RuntimeError("ask failed")

    monkeypatch.setattr(Study, "ask", broken_ask)
    with pytest.raises(RuntimeError, match="ask failed"):
        _run(tree_only_space, classification_data, observer, 2)
    assert observer.finished == 1
