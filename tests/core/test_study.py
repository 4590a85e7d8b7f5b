"""Study: ask/tell, determinism, failures, storage and resume."""

from __future__ import annotations

import math
import re
import signal

import numpy as np
import pytest

import ensembo
from ensembo import Evaluation, Study, TrialState
from ensembo.errors import (
    ComponentOptionError,
    ExperimentError,
    StorageError,
    TrialError,
    UnknownComponentError,
)
from ensembo.objective import InvalidResultError
from ensembo.storage.memory import MemoryStorage


def quadratic(config):
    return (config["x"] - 1.0) ** 2 + (config["y"] - 2.0) ** 2


def test_random_search_end_to_end(flat_space):
    study = Study(flat_space, surrogate=None, seed=3).optimize(quadratic, n_trials=50)
    assert len(study.trials) == 50
    assert all(t.state is TrialState.COMPLETE for t in study.trials)
    assert study.best_trial.loss == min(t.loss for t in study.trials)
    assert study.ensemble.members == (study.best_trial.number,)


def test_same_seed_same_configs_different_seed_different(tree_space):
    def configs(seed):
        study = Study(tree_space, surrogate=None, seed=seed)
        study.optimize(lambda c: c["shared"], n_trials=15)
        return [t.config for t in study.trials]

    assert configs(7) == configs(7)
    assert configs(7) != configs(8)


def test_configs_hold_only_active_hyperparameters(tree_space):
    study = Study(tree_space, surrogate=None, seed=0).optimize(lambda c: 0.0, n_trials=30)
    for trial in study.trials:
        has_b_params = {"only_b", "steps"} <= set(trial.config)
        assert has_b_params == (trial.config["branch"] == "b")


def test_failures_are_recorded_and_the_run_continues(flat_space):
    def sometimes_bad(config):
        if config["x"] < 0:
            raise ValueError("negative x not supported")
        if config["y"] > 12:
            return math.nan
        return config["x"]

    study = Study(flat_space, surrogate=None, seed=1).optimize(sometimes_bad, n_trials=40)
    failed = study.history.in_state(TrialState.FAILED)
    assert failed and len(study.history.completed()) + len(failed) == 40
    errors = {t.error for t in failed}
    assert any("negative x not supported" in e for e in errors)
    assert any("non-finite" in e for e in errors)


def test_ask_tell_and_evaluation_records(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    assert trial.state is TrialState.RUNNING
    predictions = np.arange(4.0)
    told = study.tell(
        trial, Evaluation(loss=0.5, predictions=predictions, model="m", info={"test_loss": 0.6})
    )
    assert told.loss == 0.5 and told.info["test_loss"] == 0.6
    np.testing.assert_array_equal(told.predictions, predictions)
    assert study.models[trial.number] == "m"
    with pytest.raises(TrialError, match="cannot be told twice"):
        study.tell(trial, 0.1)
    with pytest.raises(TrialError, match="never asked"):
        study.tell(5, 0.1)


def test_observer_callbacks_see_lifecycle(flat_space):
    seen = []

    class Observer:
        @ensembo.hookimpl
        def ensembo_trial_finished(self, trial):
            seen.append(trial.number)

        @ensembo.hookimpl
        def ensembo_should_stop(self, study):
            return True if len(study.history.completed()) >= 4 else None

    Study(flat_space, surrogate=None, callbacks=[Observer()]).optimize(quadratic, n_trials=10)
    assert seen == [0, 1, 2, 3]


def test_sqlite_storage_round_trip_and_resume(flat_space, tmp_path):
    path = tmp_path / "study.db"
    first = Study(flat_space, surrogate=None, seed=4, storage=path)
    first.optimize(quadratic, n_trials=5)
    first.tell(first.ask(), Evaluation(loss=1.0, predictions=np.eye(3)))
    dangling = first.ask()  # never told: the process "dies" here
    first.close()

    resumed = Study.load(path)
    assert len(resumed.trials) == 7
    np.testing.assert_array_equal(resumed.trials[5].predictions, np.eye(3))
    assert resumed.trials[6].state is TrialState.INTERRUPTED
    rerun = resumed.ask()
    assert (
        rerun.number == dangling.number and rerun.config == dangling.config and rerun.attempts == 2
    )
    resumed.tell(rerun, 0.0)
    resumed.optimize(quadratic, n_trials=3)
    assert [t.number for t in resumed.trials] == list(range(10))


def test_resume_continues_the_same_sequence(flat_space, tmp_path):
    straight = Study(flat_space, surrogate=None, seed=9).optimize(quadratic, n_trials=12)
    path = tmp_path / "s.db"
    Study(flat_space, surrogate=None, seed=9, storage=path).optimize(quadratic, n_trials=5)
    resumed = Study.load(path).optimize(quadratic, n_trials=7)
    assert [t.config for t in resumed.trials] == [t.config for t in straight.trials]


@pytest.mark.parametrize(
    "surrogate",
    ["gp", {"name": "gp", "hyperparameters": "mcmc", "samples": 2, "burn_in": 4}],
    ids=["ml2", "mcmc"],
)
def test_a_resumed_gp_study_repeats_the_uninterrupted_one_exactly(flat_space, tmp_path,
                                                                   surrogate):
    # the GP's fits start from its last fit (warm start, chain): the study keeps that state
    options = {"surrogate": surrogate, "n_initial": 3, "seed": 2}
    straight = Study(flat_space, **options).optimize(quadratic, n_trials=9)
    path = tmp_path / "gp.db"
    Study(flat_space, storage=path, **options).optimize(quadratic, n_trials=6)
    resumed = Study.load(path).optimize(quadratic, n_trials=3)
    assert [t.config for t in resumed.trials] == [t.config for t in straight.trials]


def test_a_study_resumed_with_another_surrogate_starts_it_afresh(flat_space, tmp_path):
    path = tmp_path / "gp.db"
    Study(flat_space, surrogate="gp", n_initial=3, storage=path).optimize(quadratic, n_trials=5)
    other = {"name": "gp", "restarts": 2}
    with Study(flat_space, surrogate=other, n_initial=3, storage=path) as resumed:
        assert resumed.proposer.surrogate.state() is None  # the first GP's optimum not restored
    assert Study.load(path, surrogate="gp").proposer.surrogate.state() is not None
    resumed = Study(flat_space, surrogate=other, n_initial=3, storage=path)
    resumed.optimize(quadratic, n_trials=2)
    assert len(resumed.trials) == 7


def test_storage_of_another_study_is_refused(flat_space, tmp_path):
    path = tmp_path / "s.db"
    Study(flat_space, surrogate=None, seed=1, storage=path)
    with pytest.raises(StorageError, match=rf"{path} holds another study: seed 1 \(given 2\)\. "
                       r"Resume it as stored with Study.load\(path\) or 'ensembo resume PATH'"):
        Study(flat_space, surrogate=None, seed=2, storage=path)
    with pytest.raises(StorageError, match="holds another study: another space"):
        Study({"params": {"z": {"type": "float", "low": 0, "high": 1}}}, seed=1, storage=path)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seed": -1}, "seed: must be an integer >= 0, got -1"),
        ({"seed": 1.5}, "seed: must be an integer >= 0, got 1.5"),
        ({"n_initial": -1}, "n_initial: must be an integer >= 0, got -1"),
        ({"budget": 0}, "budget: must be an integer >= 1, got 0"),
        ({"task": "ranking"}, "task: unknown value 'ranking'"),
        ({"loss": "nope"}, "Unknown loss 'nope'"),
        ({"ensemble": {"name": "eo", "size": 0}}, "'eo' (from ensembo) rejected options"),
    ],
)
def test_bad_arguments_are_named_and_leave_no_storage_file(flat_space, tmp_path, options, message):
    path = tmp_path / "s.db"
    with pytest.raises(ensembo.EnsemboError, match=re.escape(message)):
        Study(flat_space, surrogate=None, storage=path, **options)
    assert not path.exists()


def test_tell_names_a_bad_trial_or_state(flat_space):
    study = Study(flat_space, surrogate=None)
    trial = study.ask()
    with pytest.raises(TrialError, match="takes a Trial from ask\\(\\) or its number, got str"):
        study.tell("0", 1.0)
    with pytest.raises(TrialError, match="unknown trial state 'done'; valid: pending"):
        study.tell(trial, 1.0, state="done")
    assert study.tell(np.int64(trial.number), 1.0).state is TrialState.COMPLETE


def test_tell_refuses_a_trial_asked_by_another_study(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    study.ask()
    stranger = Study(flat_space, surrogate=None, seed=1).ask()
    with pytest.raises(TrialError, match="trial 0 given to tell\\(\\) was not asked by this study"):
        study.tell(stranger, 1.0)
    assert study.history[0].state is TrialState.RUNNING


def test_a_result_the_storage_cannot_hold_fails_its_trial_only(flat_space, tmp_path):
    def objective(config):
        if config["x"] > 0:
            return {"loss": 1.0, "info": {"model": object()}}
        return config["y"]

    path = tmp_path / "s.db"
    study = Study(flat_space, surrogate=None, storage=path).optimize(objective, n_trials=8)
    failed = study.history.in_state(TrialState.FAILED)
    assert failed and all("cannot be stored" in t.error for t in failed)
    stored = Study.load(path).history
    assert [t.state for t in stored] == [t.state for t in study.history]
    assert len(stored.completed()) == 8 - len(failed) > 0


def test_a_refused_result_keeps_no_model_in_memory(flat_space, tmp_path):
    study = Study(flat_space, surrogate=None, storage=tmp_path / "s.db")
    trial = study.ask()
    with pytest.raises(InvalidResultError, match="cannot be stored"):
        study.tell(trial, Evaluation(loss=0.5, model="m", info={"x": object()}))
    assert study.trials[trial.number].state is TrialState.RUNNING
    assert trial.number not in study.models


def test_load_never_creates_a_file(tmp_path):
    path = tmp_path / "typo.db"
    with pytest.raises(StorageError, match="no such study file"):
        Study.load(path)
    assert not path.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_trials": -1}, "n_trials: must be an integer >= 1, got -1"),
        ({"n_trials": 2, "trial_timeout": -1}, "trial_timeout: must be a finite positive number"),
        ({"timeout": "soon"}, "timeout: must be a finite positive number of seconds, got 'soon'"),
    ],
)
def test_optimize_names_a_bad_argument(flat_space, options, message):
    with pytest.raises(ensembo.EnsemboError, match=re.escape(message)):
        Study(flat_space, surrogate=None).optimize(quadratic, **options)


def test_optimize_refuses_an_objective_that_is_not_callable(flat_space):
    study = Study(flat_space, surrogate=None)
    with pytest.raises(TypeError, match="objective must be callable"):
        study.optimize(5, n_trials=2)
    assert len(study.trials) == 0


@pytest.mark.parametrize("surrogate", [None, "tpe"])
def test_acquisition_parts_a_proposer_will_not_use_are_still_checked(flat_space, surrogate):
    with pytest.raises(UnknownComponentError, match="eii"):
        Study(flat_space, surrogate=surrogate, acquisition="eii")
    with pytest.raises(ComponentOptionError, match="lbfgs"):
        Study(flat_space, surrogate=surrogate,
              acquisition_optimizer={"name": "lbfgs", "n_starts": -3})
    Study(flat_space, surrogate=surrogate)  # the defaults are fine


def test_a_study_reopened_with_other_components_is_resumed_with_them(flat_space, tmp_path):
    path = tmp_path / "s.db"
    Study(flat_space, surrogate=None, budget=3, storage=path).optimize(
        lambda c: c["y"], n_trials=2)
    Study(flat_space, surrogate="rf", budget=5, storage=path)  # e.g. an edited experiment file
    resumed = Study.load(path)
    assert resumed.components()["surrogate"] == {"name": "rf"}
    assert resumed.context.budget == 5 and len(resumed.history) == 2


def test_a_space_whose_clauses_reorder_in_storage_is_resumed(tmp_path):
    """The storage sorts keys; a multi-key forbidden or `when` must still match."""
    space = {
        "params": {
            "scaling": {"type": "choice", "options": {"none": {}, "standard": {}}},
            "classifier": {"type": "choice", "options": {"forest": {}, "knn": {}}},
            "b": {"type": "categorical", "choices": ["x", "y"]},
            "a": {"type": "int", "low": 0, "high": 5},
            "k": {"type": "int", "low": 0, "high": 5, "when": {"b": "x", "a": {"gt": 1}}},
        },
        "forbidden": [{"scaling": "none", "classifier": "knn"}],
    }
    path = tmp_path / "study.db"
    Study(space, surrogate=None, storage=path).optimize(lambda c: 1.0, n_trials=3)
    assert len(Study.load(path).trials) == 3
    assert len(Study(space, surrogate=None, storage=path).trials) == 3


def test_a_storage_scored_on_other_validation_targets_is_refused(flat_space, tmp_path):
    path = tmp_path / "study.db"
    Study(flat_space, surrogate=None, validation_targets=np.array([0, 1, 1]), storage=path)
    with pytest.raises(StorageError, match=r"other validation targets \(3 stored, 3 given\)"):
        Study(flat_space, surrogate=None, validation_targets=np.array([1, 1, 0]), storage=path)
    assert len(Study.load(path).trials) == 0  # what was stored is still readable


def test_reopening_a_study_without_its_targets_is_refused_and_keeps_them(flat_space, tmp_path):
    """Reopened "to look" without validation_targets, the stored targets were replaced by
    None: the study lost its ensembles for good."""
    path = tmp_path / "study.db"
    targets = np.array([0, 1, 1])
    Study(flat_space, surrogate=None, ensemble="posthoc", loss="zero-one",
          task="classification", validation_targets=targets, storage=path)
    with pytest.raises(StorageError, match="scored on 3 validation targets, which were not "
                       "given; pass validation_targets= again"):
        Study(flat_space, surrogate=None, storage=path)
    resumed = Study.load(path)
    np.testing.assert_array_equal(resumed.context.y_true, targets)
    assert resumed.components()["ensemble_strategy"] == {"name": "posthoc"}


def test_classes_absent_from_the_validation_targets_keep_their_column(flat_space, tmp_path):
    """A holdout may lack a training class; its column is still in every prediction."""
    path = tmp_path / "study.db"
    targets = np.array([0, 1, 1, 0])
    study = Study(flat_space, surrogate=None, ensemble="posthoc", loss="zero-one",
                  task="classification", validation_targets=targets, classes=[0, 1, 2],
                  storage=path)
    probabilities = np.array([[0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.2, 0.5, 0.3], [1, 0, 0]])
    trial = study.add({"x": 1.0, "y": 1.0}, 0.0, predictions=probabilities)
    assert trial.state is TrialState.COMPLETE and study.ensemble is not None
    study.close()
    np.testing.assert_array_equal(Study.load(path).context.classes, [0, 1, 2])
    reopened = Study(flat_space, surrogate=None, ensemble="posthoc", loss="zero-one",
                     task="classification", validation_targets=targets, storage=path)
    np.testing.assert_array_equal(reopened.context.classes, [0, 1, 2])  # not [0, 1]
    assert reopened.ensemble is not None
    reopened.close()
    with pytest.raises(StorageError, match=r"classes \[0, 1, 2\] \(given \[0, 1, 3\]\)"):
        Study(flat_space, surrogate=None, task="classification", validation_targets=targets,
              classes=[0, 1, 3], storage=path)


@pytest.mark.parametrize(
    ("classes", "message"),
    [([0, 2], r"validation targets \[1\] are not among \[0, 2\]"),
     ([0, 1, 1], "labels are listed twice"),
     ([1, 0], r"must be in sorted order, as the columns of class probabilities are")],
)
def test_classes_that_do_not_fit_the_targets_are_refused(flat_space, classes, message):
    with pytest.raises(ValueError, match=f"classes: {message}"):
        Study(flat_space, surrogate=None, task="classification",
              validation_targets=np.array([0, 1, 1]), classes=classes)


@pytest.mark.parametrize("surrogate", ["gp", "tpe"])
def test_failed_trials_steer_the_search_away(flat_space, surrogate):
    """Failures count as the worst target; left out, the GP re-proposed a failing
    configuration in 10 of 11 model-based trials."""

    def objective(config):
        if config["x"] > 5:
            raise RuntimeError("boom")
        return math.nan if config["x"] < -2 else quadratic(config)

    study = Study(flat_space, surrogate=surrogate, n_initial=5, seed=0)
    study.optimize(objective, n_trials=16)
    failed = [t for t in study.trials[5:] if t.state is TrialState.FAILED]
    assert len(failed) <= 5


class CtrlCDuringWrite(MemoryStorage):
    """A real SIGINT arriving while a trial is written: before the row is stored (a
    large predictions array being serialised) or just after."""

    when: str | None = None

    def put_trial(self, trial):
        if self.when == "before":
            signal.raise_signal(signal.SIGINT)
        super().put_trial(trial)
        if self.when == "after":
            signal.raise_signal(signal.SIGINT)
        self.when = None


@pytest.mark.parametrize("when", ["before", "after"])
def test_ctrl_c_during_a_write_leaves_memory_and_file_agreeing(flat_space, when):
    storage = CtrlCDuringWrite()
    study = Study(flat_space, surrogate=None, storage=storage)
    trial = study.ask()
    storage.when = when
    with pytest.raises(KeyboardInterrupt):  # raised once the write is done
        study.tell(trial, 1.5)
    # before, a Ctrl-C ahead of the write left the result unwritten but counted in memory
    assert [(t.state, t.loss) for t in storage.trials()] == [(TrialState.COMPLETE, 1.5)]
    assert [(t.state, t.loss) for t in study.trials] == [(TrialState.COMPLETE, 1.5)]
    assert study.ensemble.members == (0,)  # announced before the Ctrl-C is raised
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize(
    ("loss", "task", "targets", "message"),
    [("mse", "classification", [0, 1, 1],
      ("loss 'mse' does not fit a classification task, whose predictions are class "
      "probabilities")),
     ("zero-one", "regression", [0.5, 1.2], "loss 'zero-one' does not fit a regression task")],
)
def test_a_loss_of_the_other_task_is_refused_before_any_trial(flat_space, tmp_path, loss, task,
                                                              targets, message):
    """Accepted, mse on class probabilities failed at the first ensemble and left a
    storage that Study.load could not open."""
    path = tmp_path / "study.db"
    with pytest.raises(ExperimentError, match=re.escape(message)):
        Study(flat_space, surrogate=None, ensemble="posthoc", loss=loss, task=task,
              validation_targets=np.array(targets), storage=path)
    assert not path.exists()
    Study(flat_space, surrogate=None, ensemble="posthoc", loss="log-loss",
          task="classification", validation_targets=np.array(["b", "a", "b"]))  # labels fine


def test_a_result_mapping_keeps_extra_keys_in_info_and_names_a_bad_loss(flat_space):
    """Hyperopt-style results ({"loss": ..., "status": "ok"}) failed every trial with
    "Evaluation.__init__() got an unexpected keyword argument 'status'"."""
    study = Study(flat_space, surrogate=None, seed=0)
    results = iter([{"loss": 0.5, "status": "ok", "accuracy": 0.9, "info": {"fold": 1}},
                    {"loss": None}, {"loss": "abc"}, {"loss": np.array([0.25])}])
    study.optimize(lambda config: next(results), n_trials=4)
    first, none, text, array = study.trials
    assert first.state is TrialState.COMPLETE
    assert first.info == {"status": "ok", "accuracy": 0.9, "fold": 1}
    assert none.error == "the objective's 'loss' must be a number, got NoneType: None"
    assert text.error == "the objective's 'loss' must be a number, got str: 'abc'"
    assert array.loss == 0.25


def test_tell_takes_only_finishing_states_and_no_result_with_a_failure(flat_space):
    """tell(state="running") recorded a running trial with a finish time, and
    tell(trial, 0.9, state="failed") dropped the 0.9 silently."""
    study = Study(flat_space, surrogate=None, seed=0)
    trial = study.ask()
    for state in ("running", "pending"):
        with pytest.raises(TrialError, match=rf"one of \['complete', 'failed', 'interrupted'\], "
                           rf"not '{state}'"):
            study.tell(trial, 0.3, state=state)
    with pytest.raises(TrialError, match="a failed trial has no result; tell it without one"):
        study.tell(trial, 0.9, state="failed")
    assert study.trials[0].state is TrialState.RUNNING  # nothing recorded
    assert study.tell(trial, state="failed", error="diverged").error == "diverged"


def test_metadata_scoring_must_match_to_continue_a_study(flat_space, tmp_path):
    path = tmp_path / "study.db"
    scoring = {"data": {"dataset": "iris", "validation": 3}, "loss": None}
    Study(flat_space, surrogate=None, storage=path, metadata={"scoring": scoring})
    other = {"data": {"dataset": "iris", "validation": 10}, "loss": "log-loss"}
    with pytest.raises(StorageError, match=re.escape(
            "scored otherwise (data.validation.folds 3 stored, 10 given; loss None stored, "
            "'log-loss' given)")):
        Study(flat_space, surrogate=None, storage=path, metadata={"scoring": other})
    Study(flat_space, surrogate=None, storage=path, metadata={"scoring": scoring})
    Study(flat_space, surrogate=None, storage=path)  # a study that says nothing is not checked


def test_a_loss_without_a_task_tells_the_study_its_task(flat_space):
    """Without task=, label predictions were read as regression values: posthoc
    averaged class indices and reported an MSE next to zero-one losses."""
    targets = np.array([0, 1, 2, 1, 0, 2])
    study = Study(flat_space, surrogate=None, ensemble="posthoc", loss="zero-one",
                  validation_targets=targets, seed=0)
    assert study.context.task == "classification"
    rng = np.random.default_rng(0)
    for _ in range(6):
        labels = np.where(rng.random(6) < 0.7, targets, (targets + 1) % 3)
        study.tell(study.ask(), Evaluation(loss=float(np.mean(labels != targets)),
                                           predictions=labels))
    from ensembo.report.scoring import ensemble_loss

    scored = ensemble_loss(study.history, study.ensemble, study.context)
    assert round(scored * 6, 9) == int(round(scored * 6))  # a zero-one rate, not an MSE
    assert Study(flat_space, surrogate=None, loss="mse",
                 validation_targets=np.array([0.5, 1.5])).context.task == "regression"


def test_resuming_without_the_stored_plugin_says_the_study_needs_it(flat_space, tmp_path,
                                                                    monkeypatch):
    """It said only "Unknown surrogate", with a hint about an unrelated distribution."""
    from ensembo.registry import Registry

    class Plugin:
        @ensembo.hookimpl
        def ensembo_add_surrogates(self):
            from ensembo.plugins.surrogates.rf import RandomForestSurrogate
            return {"my-forest": RandomForestSurrogate}

    path = tmp_path / "study.db"
    with_plugin = Registry.from_plugins({"my-dist": Plugin()}, builtins=True)
    Study(flat_space, surrogate="my-forest", registry=with_plugin, storage=path)
    monkeypatch.setenv("ENSEMBO_BLOCK_PLUGINS", "my-dist")
    with pytest.raises(UnknownComponentError) as caught:
        Study.load(path, registry=Registry.from_plugins({}, builtins=True))
    message = str(caught.value)
    assert message.startswith("Unknown surrogate 'my-forest'")
    assert "ENSEMBO_BLOCK_PLUGINS skips my-dist" in message
    assert "the stored study uses surrogate 'my-forest': install the plugin" in message


@pytest.mark.parametrize("argument, kind, spec", [
    ("ensemble", "ensemble_strategy", "best"),
    ("surrogate", "surrogate", "rf"),
])
def test_a_stateful_component_object_serves_one_study_and_its_resumes(
    flat_space, tmp_path, argument, kind, spec
):
    """A strategy's per-trial caches or a surrogate's last fit belong to the study it
    serves: a second study given the object is refused by the argument's name; the same
    study file continued with it is not (it is the same study)."""
    import threading

    from ensembo import components

    component = components.build(kind, spec)
    component.lock = threading.Lock()  # used as given: no copy is made
    path = tmp_path / "study.db"
    first = Study(flat_space, storage=path, **{argument: component})
    held = first.strategy if argument == "ensemble" else first.proposer.surrogate
    assert held is component
    first.close()
    Study.load(path, **{argument: component}).close()
    with pytest.raises(ExperimentError, match=rf"^{argument}: this \w+ object already served "
                                              r"another study \(.*study\.db\).*own instance"):
        Study(flat_space, **{argument: component})
    Study(flat_space, **{argument: components.build(kind, spec)})  # a fresh one serves


def test_a_loss_object_is_refused_by_a_study_file_naming_loss(flat_space, tmp_path):
    """A file records the loss by name, for a resume; an object failed after the file
    was made, with 'cannot store LogLoss in a trial record'."""
    from ensembo.plugins.losses.classification import LogLoss

    path = tmp_path / "s.db"
    with pytest.raises(ExperimentError, match=r"^loss: a study file cannot keep a loss "
                                              r"object \(LogLoss\)"):
        Study(flat_space, loss=LogLoss(), validation_targets=[0, 1, 1], storage=path)
    assert not path.exists()
    in_memory = Study(flat_space, loss=LogLoss(), validation_targets=[0, 1, 1])
    assert in_memory.context.task == "classification"


def test_resumes_by_any_spelling_of_the_file_keep_the_object_and_a_new_file_does_not(
    flat_space, tmp_path, monkeypatch
):
    """``~/t.db`` was refused its own resume (the key never expanded ``~``); a study file
    deleted and made anew at the same path took the object with the old study's state."""
    from ensembo import components
    from ensembo.storage import MemoryStorage

    monkeypatch.setenv("HOME", str(tmp_path))
    strategy = components.build("ensemble_strategy", "best")
    Study(flat_space, storage="~/t.db", ensemble=strategy).close()
    Study.load("~/t.db", ensemble=strategy).close()
    Study.load(f"sqlite:///{tmp_path}/t.db", ensemble=strategy).close()
    (tmp_path / "t.db").unlink()
    with pytest.raises(ExperimentError, match="already served another study"):
        Study(flat_space, storage="~/t.db", ensemble=strategy)
    memory, kept = MemoryStorage(), components.build("ensemble_strategy", "best")
    Study(flat_space, storage=memory, ensemble=kept)
    Study.load(memory, ensemble=kept)  # the same storage object holds the same study
