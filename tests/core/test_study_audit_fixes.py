"""Defects of the study core found by an audit: each test fails on the code before the fix."""

from __future__ import annotations

import datetime
import json
import os
import pathlib

import numpy as np
import pytest

import ensembo
from ensembo import Study, TrialState
from ensembo.errors import StorageError, TrialError
from ensembo.objective import InvalidResultError
from ensembo.storage import MemoryStorage
from ensembo.storage.sqlite import SQLiteStorage
from ensembo.trials import Trial

UNDECODABLE = os.fsdecode(b"data-\xff.csv")  # a lone surrogate, as os.listdir gives it


# 1 -------------------------------------------------------------------------------------


def test_changing_the_config_of_an_asked_trial_leaves_the_history_and_file_intact(
    flat_space, tmp_path
):
    path = tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, seed=0, storage=path)
    trial = study.ask()
    asked = dict(trial.config)
    trial.config["n_jobs"] = 4  # the common "params = trial.config" pattern
    assert study.trials[0].config == asked
    with pytest.raises(TrialError, match="changed trial.config after ask"):
        study.tell(trial, 0.5)
    assert study.trials[0].state is TrialState.RUNNING  # refused, nothing lost
    told = study.tell(trial.number, 0.5)
    assert told.state is TrialState.COMPLETE and study.best_trial.number == 0
    study.close()
    assert Study.load(path).trials[0].config == asked


def test_a_history_replaces_a_trial_whose_config_was_changed_in_place(flat_space):
    history = ensembo.trials.History()
    trial = Trial(number=0, config={"x": 1.0})
    history.put(trial)
    with pytest.raises(TypeError, match="read-only"):  # the history's own record
        history[0].config["x"] = 2.0
    dict.__setitem__(history[0].config, "x", 2.0)  # changed in place all the same
    history.put(Trial(number=0, config={"x": 1.0}, state=TrialState.RUNNING))
    assert history.in_state(TrialState.RUNNING)[0].number == 0
    assert history.in_state(TrialState.PENDING) == []


# 2 / 3 -----------------------------------------------------------------------------------


def test_an_objective_error_with_undecodable_text_fails_its_trial_only(flat_space, tmp_path):
    path = tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, seed=0, storage=path)

    def objective(config):
        raise ValueError(f"cannot parse {UNDECODABLE}")

    study.optimize(objective, n_trials=2)
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    study.close()
    errors = [t.error for t in Study.load(path).trials]
    assert errors == ["ValueError: cannot parse data-\\udcff.csv"] * 2


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
@pytest.mark.parametrize(
    ("error", "stored"),
    [(RuntimeError("CUDA out of memory"), "RuntimeError: CUDA out of memory"),
     (f"cannot read {UNDECODABLE}", "cannot read data-\\udcff.csv")],
    ids=["exception", "surrogate"],
)
def test_tell_failed_stores_an_exception_or_undecodable_text_as_text(
    flat_space, tmp_path, storage, error, stored
):
    target = None if storage == "memory" else tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, storage=target)
    told = study.tell(study.ask(), state="failed", error=error)
    assert told.error == stored and study.trials[0].error == stored


def test_tell_refuses_an_error_that_is_not_text_and_keeps_the_trial_running(flat_space):
    study = Study(flat_space, surrogate=None)
    trial = study.ask()
    with pytest.raises(TypeError, match="error= takes text or an exception, got int"):
        study.tell(trial, state="failed", error=42)
    assert study.trials[0].state is TrialState.RUNNING


def test_sqlite_names_the_trial_whose_text_is_not_utf8(tmp_path):
    storage = SQLiteStorage(tmp_path / "s.db")
    trial = Trial(number=3, config={}, state=TrialState.FAILED, error=UNDECODABLE)
    with pytest.raises(ValueError, match="trial 3: its error text is not valid UTF-8"):
        storage.put_trial(trial)
    assert storage.trials() == []


# 4 -------------------------------------------------------------------------------------


class FailsOnce:
    calls = 0

    @ensembo.hookimpl
    def ensembo_trial_started(self, study, trial):
        FailsOnce.calls += 1
        if FailsOnce.calls == 1:
            raise ConnectionError("tracking server unreachable")


def test_an_observer_failing_in_ask_loses_no_queued_or_new_trial(flat_space):
    FailsOnce.calls = 0
    study = Study(flat_space, surrogate=None, seed=0, callbacks=[FailsOnce()])
    study.enqueue({"x": 0.5, "y": 1.0})
    with pytest.raises(ConnectionError):
        study.ask_batch(2)
    assert [t.state for t in study.trials] == [TrialState.PENDING, TrialState.INTERRUPTED]
    again = study.ask_batch(2)
    assert [t.number for t in again] == [1, 0]  # interrupted first, then queued
    assert study.trials[0].config == {"x": 0.5, "y": 1.0}


# 6 -------------------------------------------------------------------------------------


def test_add_skip_if_known_tells_an_interrupted_trial(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    study.tell(trial, state="interrupted")
    added = study.add(trial.config, 0.25, skip_if_known=True)
    assert (added.number, added.state, added.loss) == (0, TrialState.COMPLETE, 0.25)
    assert study.best_trial.number == 0 and len(study.trials) == 1


def test_add_skip_if_known_leaves_a_running_trial_to_whoever_asked_it(flat_space, caplog):
    # review of 28 Nov, finding 1: add() told the running trial, and its owner's tell
    # then failed with "already complete"
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    with caplog.at_level("WARNING", logger="ensembo.study"):
        added = study.add(dict(trial.config), 0.25, skip_if_known=True)
    assert (added.number, added.state, added.loss) == (0, TrialState.RUNNING, None)
    assert "trial 0" in caplog.text and "not recorded" in caplog.text
    assert len(study.trials) == 1 and study.trials[0].state is TrialState.RUNNING
    told = study.tell(trial, 0.7)  # the owner's tell is not refused
    assert (told.state, told.loss) == (TrialState.COMPLETE, 0.7)


def test_optimize_survives_an_add_of_the_config_it_is_evaluating(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)

    def objective(config):  # a result for this config arrives from elsewhere meanwhile
        study.add(dict(config), 0.01, skip_if_known=True)
        return 0.5

    study.optimize(objective, n_trials=2)
    assert [(t.state, t.loss) for t in study.trials] == [(TrialState.COMPLETE, 0.5)] * 2


def test_add_skip_if_known_returns_a_finished_trial_unchanged(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    study.tell(trial, 0.5)
    assert study.add(trial.config, 0.1, skip_if_known=True).loss == 0.5


# 7 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["ask", "optimize", "enqueue"])
def test_using_a_closed_study_says_it_was_closed(flat_space, tmp_path, call):
    path = tmp_path / "s.db"
    with Study(flat_space, surrogate=None, seed=0, storage=path) as study:
        study.optimize(lambda c: c["x"], n_trials=1)
    calls = {"ask": study.ask, "enqueue": lambda: study.enqueue({"x": 1.0}),
             "optimize": lambda: study.optimize(lambda c: c["x"], n_trials=1)}
    with pytest.raises(StorageError, match=rf"^{path}: this study was closed; Study.load"):
        calls[call]()
    assert [t.state for t in Study.load(path).trials] == [TrialState.COMPLETE]


# 9 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("space", "info"), [({"x": (0.0, 1.0)}, {"number": 3}), ({"number": (1, 10)}, {})],
    ids=["metric", "hyperparameter"],
)
def test_trials_dataframe_takes_a_column_named_number(space, info):
    pytest.importorskip("pandas")
    from ConfigSpace import ConfigurationSpace

    study = Study(ConfigurationSpace(space=space), surrogate=None, seed=0)
    study.tell(study.ask(), {"loss": 0.5, **info})
    table = study.trials_dataframe()
    assert table.index.name == "number" and list(table.index) == [0]
    assert "number" in table.columns and table["loss"].dtype == "float64"


# 10 ------------------------------------------------------------------------------------


def test_tell_without_a_result_says_a_loss_is_missing(flat_space):
    study = Study(flat_space, surrogate=None)
    trial = study.ask()
    with pytest.raises(InvalidResultError, match="trial 0 is not usable: none was given") as info:
        study.tell(trial)
    assert "objective" not in str(info.value)
    assert study.trials[0].state is TrialState.RUNNING


def test_a_failed_trial_refuses_predictions(flat_space):
    study = Study(flat_space, surrogate=None)
    trial = study.ask()
    with pytest.raises(TrialError, match="without predictions="):
        study.tell(trial, predictions=[1, 2], state="failed")
    assert study.trials[0].state is TrialState.RUNNING


# 11 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_info_is_kept_in_the_form_a_resumed_study_reads(flat_space, tmp_path, storage):
    target = MemoryStorage() if storage == "memory" else tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, storage=target)
    info = {"per_class": {1: 0.1}, "n": np.int64(3), "f": np.float32(0.5)}
    told = study.tell(study.ask(), {"loss": 0.2, **info})
    expected = {"per_class": {"1": 0.1}, "n": 3, "f": 0.5}
    assert told.info == expected and type(told.info["n"]) is int
    assert Study.load(target).trials[0].info == study.trials[0].info == expected
    assert json.dumps(told.info)


NOT_JSON = {"finished": datetime.datetime(2024, 1, 1), "tags": {"a"},
            "path": pathlib.Path("/tmp/a"), "pair": (1, 2), "net": object()}


def test_info_with_no_json_form_is_kept_as_given_in_memory(flat_space):
    # review of 28 Nov, finding 2: in-memory studies refused it, and optimize failed
    # every trial ("the result cannot be stored")
    study = Study(flat_space, surrogate=None)
    told = study.tell(study.ask(), ensembo.Evaluation(loss=0.2, info=NOT_JSON))
    assert told.state is TrialState.COMPLETE and told.info == NOT_JSON
    assert study.trials[0].info == NOT_JSON
    study.optimize(lambda c: ensembo.Evaluation(loss=c["x"], info=NOT_JSON), n_trials=2)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 3
    assert study.trials[2].info["finished"] == datetime.datetime(2024, 1, 1)


def test_info_with_no_json_form_is_refused_by_a_study_file(flat_space, tmp_path):
    study = Study(flat_space, surrogate=None, storage=tmp_path / "s.db")
    trial = study.ask()
    with pytest.raises(InvalidResultError, match="cannot be stored"):
        study.tell(trial, {"loss": 0.2, "net": object()})
    assert study.trials[0].state is TrialState.RUNNING
    study.optimize(lambda c: ensembo.Evaluation(loss=c["x"], info=NOT_JSON), n_trials=1)
    assert study.trials[1].state is TrialState.FAILED  # 0: asked above, still running
    assert study.trials[1].error.startswith("the result cannot be stored: a study file cannot keep "
                                            "trial 1's info['finished']")
