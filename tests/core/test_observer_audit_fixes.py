"""Callbacks named right when they raise, refused when they cannot work, and a
``study_finished`` observer that raises hides neither the run's error nor its bar."""

from __future__ import annotations

import logging

import pytest

from ensembo import Study, hookimpl, observers
from ensembo.progress import ProgressBar


def _quadratic(config):
    return config["x"] ** 2


def good_callback(study, trial):
    pass


def bad_callback(study, trial):
    raise RuntimeError("callback boom")


def test_the_note_names_the_plain_callback_that_raised_not_the_last_listed(flat_space):
    study = Study(flat_space, surrogate=None, callbacks=[bad_callback, good_callback])
    with pytest.raises(RuntimeError) as raised:
        study.optimize(_quadratic, n_trials=2)
    assert raised.value.__notes__ == [
        "in the ensembo_trial_finished hook of callback bad_callback"]


class Named:
    def __init__(self, fails: bool):
        self.fails = fails

    @hookimpl
    def ensembo_trial_finished(self, study, trial):
        if self.fails:
            raise RuntimeError("observer boom")


def test_of_two_instances_of_one_class_the_raising_one_is_found(flat_space):
    raising, quiet = Named(fails=True), Named(fails=False)
    study = Study(flat_space, surrogate=None, callbacks=[raising, quiet])
    caller = study._observer_manager.hook.ensembo_trial_finished
    with pytest.raises(RuntimeError) as raised:
        caller(study=study, trial=None)
    found = observers._raising_implementation(caller.get_hookimpls(), raised.value)
    assert found.plugin is raising


class Observer:
    @hookimpl
    def ensembo_trial_finished(self, study, trial):
        pass


def test_an_observer_class_instead_of_an_instance_is_refused_at_construction(flat_space):
    with pytest.raises(TypeError, match=r"callback Observer is a class with hook methods; "
                                        r"pass an instance: Observer\(\)"):
        Study(flat_space, surrogate=None, callbacks=[Observer])


def test_one_observer_listed_twice_is_refused_by_name(flat_space):
    observer = Observer()
    with pytest.raises(TypeError, match="callback Observer object is listed twice") as raised:
        Study(flat_space, surrogate=None, callbacks=[observer, observer])
    assert "Plugin name already registered" not in str(raised.value)


class CallableWithUndecoratedHook:
    def __init__(self):
        self.calls = 0

    def __call__(self, study, trial):
        self.calls += 1

    def ensembo_should_stop(self, study):  # no @hookimpl: pluggy ignores it
        return True


def test_a_callable_with_an_undecorated_hook_is_still_called_per_trial(flat_space, caplog):
    callback = CallableWithUndecoratedHook()
    with caplog.at_level(logging.WARNING, logger="ensembo.observers"):
        study = Study(flat_space, surrogate=None, callbacks=[callback])
    study.optimize(_quadratic, n_trials=3)
    assert callback.calls == 3
    assert "defines ensembo_should_stop without @ensembo.hookimpl" in caplog.text
    assert "only its __call__(study, trial) is used" in caplog.text


class FinishedRaises:
    @hookimpl
    def ensembo_study_finished(self, study):
        raise ValueError("finished-hook bug")


def _objective_error(config):
    raise KeyError("objective error")


def test_a_raising_study_finished_is_noted_on_the_runs_own_error(flat_space, caplog):
    study = Study(flat_space, surrogate=None, callbacks=[FinishedRaises()])
    with caplog.at_level(logging.ERROR, logger="ensembo.observers"), \
            pytest.raises(KeyError, match="objective error") as raised:
        study.optimize(_objective_error, n_trials=2, catch=())
    assert raised.value.__notes__ == [(
        "then ensembo_study_finished raised ValueError: finished-hook bug (in the "
        "ensembo_study_finished hook of callback FinishedRaises object)")]
    assert "ensembo_study_finished raised after the run failed" in caplog.text


def test_a_raising_study_finished_after_a_good_run_raises_and_unregisters_the_bar(flat_space):
    study = Study(flat_space, surrogate=None, callbacks=[FinishedRaises()])
    with pytest.raises(ValueError, match="finished-hook bug"):
        study.optimize(_quadratic, n_trials=2, show_progress=True)
    with pytest.raises(KeyError):
        study.optimize(_objective_error, n_trials=1, catch=(), show_progress=True)
    plugins = study._observer_manager.get_plugins()
    assert not any(isinstance(plugin, ProgressBar) for plugin in plugins)
