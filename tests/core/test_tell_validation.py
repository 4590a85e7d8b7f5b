"""tell() refuses a result it cannot use, loudly, and leaves the trial running so that
the corrected result can still be told; a NaN loss is a failed evaluation (warned).
Inside optimize an unusable return still fails its trial, with the reason."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from ensembo import Evaluation, Study, TrialState
from ensembo.objective import InvalidResultError

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
TARGETS = np.array([0, 1, 0, 1, 1])


@pytest.mark.parametrize(
    "result",
    ["0.42", {"accuracy": 0.9}, np.array([0.1, 0.2]), None],
    ids=["string", "no-loss-key", "several-losses", "none"],
)
def test_an_unusable_result_is_refused_and_the_trial_can_be_told_again(tmp_path, result):
    """tell(t, "0.42") failed the trial without a word; the corrected tell then raised
    'already failed' and the loss was lost."""
    study = Study(SPACE, surrogate=None, storage=tmp_path / "s.db")
    trial = study.ask()
    with pytest.raises(InvalidResultError, match=f"trial {trial.number} is not usable.*running"):
        study.tell(trial, result)
    assert study.trials[trial.number].state is TrialState.RUNNING
    assert study.tell(trial, 0.42).state is TrialState.COMPLETE
    assert Study.load(tmp_path / "s.db").trials[trial.number].loss == 0.42


def test_predictions_of_the_wrong_shape_are_refused_and_can_be_told_again():
    study = Study(SPACE, surrogate=None, ensemble="posthoc", loss="zero-one",
                  validation_targets=TARGETS, task="classification")
    trial = study.ask()
    probabilities = np.tile([0.3, 0.7], (len(TARGETS), 1))
    with pytest.raises(InvalidResultError, match="do not match the 5 validation targets"):
        study.tell(trial, 0.4, predictions=probabilities.T)  # transposed by mistake
    told = study.tell(trial, 0.4, predictions=probabilities)
    assert told.state is TrialState.COMPLETE and study.ensemble.members == (trial.number,)


def test_a_result_that_cannot_be_stored_is_refused_and_keeps_no_model(tmp_path):
    study = Study(SPACE, surrogate=None, storage=tmp_path / "s.db")
    trial = study.ask()
    with pytest.raises(InvalidResultError, match="cannot be stored"):
        study.tell(trial, Evaluation(loss=0.5, model="m", info={"x": object()}))
    assert trial.number not in study.models
    assert study.trials[trial.number].state is TrialState.RUNNING
    study.tell(trial, Evaluation(loss=0.5, model="m"))
    assert study.models[trial.number] == "m"


def test_a_non_finite_loss_fails_the_trial_with_a_warning(caplog):
    study = Study(SPACE, surrogate=None)
    with caplog.at_level(logging.WARNING, logger="ensembo"):
        told = study.tell(study.ask(), math.nan)
    assert told.state is TrialState.FAILED and "non-finite loss (nan)" in told.error
    assert caplog.messages == ["trial 0 failed: the objective returned a non-finite loss (nan)"]


def test_an_objective_returning_garbage_still_fails_its_trial_in_optimize():
    study = Study(SPACE, surrogate=None).optimize(lambda config: "0.42", n_trials=2)
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    assert "must return a number" in study.trials[0].error


def _callback_failing_once(calls):
    def callback(study, trial):
        calls.append(trial.state.value)
        if len(calls) == 1:
            raise ValueError("bug in my callback")
    return callback


@pytest.mark.parametrize("how", ["tell", "optimize"])
def test_an_observer_error_after_the_record_is_its_own_not_the_results(tmp_path, how):
    """A callback's ValueError was taken for a result the storage refused: tell() said
    "nothing was recorded" of a stored trial, and optimize rewrote it as failed."""
    calls = []
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    study = Study(space, callbacks=[_callback_failing_once(calls)], storage=tmp_path / "s.db")
    with pytest.raises(ValueError, match="bug in my callback") as raised:
        if how == "tell":
            study.tell(study.ask(), 0.25)
        else:
            study.optimize(lambda config: config["x"], n_trials=1)
    assert not isinstance(raised.value, InvalidResultError)
    assert study.trials[0].state is TrialState.COMPLETE and calls == ["complete"]
    assert Study.load(tmp_path / "s.db").trials[0].state is TrialState.COMPLETE


REGRESSION_TARGETS = np.linspace(-1.0, 1.0, 20)
STRATEGIES_SCORING_PREDICTIONS = ["posthoc", "agnostic-bayes", "esmbo", "segor"]


def regression_study(ensemble: str) -> Study:
    return Study(SPACE, surrogate=None, ensemble=ensemble, validation_targets=REGRESSION_TARGETS,
                 task="regression")


@pytest.mark.parametrize("ensemble", STRATEGIES_SCORING_PREDICTIONS)
def test_a_regression_column_is_refused_at_tell_and_breaks_no_later_trial(ensemble):
    """A Keras/torch regressor's (m, 1) output was stored complete; then every tell,
    a well-formed (m,) one included, raised a broadcast or LossInputError."""
    study = regression_study(ensemble)
    trial = study.ask()
    column = (REGRESSION_TARGETS + 0.1)[:, None]
    with pytest.raises(InvalidResultError,
                       match=r"must be 1-D.*got shape \(20, 1\).*predictions\.ravel\(\)"):
        study.tell(trial, Evaluation(loss=0.1, predictions=column))
    assert study.trials[trial.number].state is TrialState.RUNNING
    assert study.tell(trial, Evaluation(loss=0.1, predictions=column.ravel())).state is (
        TrialState.COMPLETE)
    later = study.ask()
    study.tell(later, Evaluation(loss=0.2, predictions=REGRESSION_TARGETS - 0.2))
    assert study.trials[later.number].state is TrialState.COMPLETE
    assert study.ensemble is not None


@pytest.mark.parametrize("ensemble", STRATEGIES_SCORING_PREDICTIONS)
def test_an_objective_returning_a_regression_column_fails_its_trials_alone(ensemble):
    study = regression_study(ensemble)
    study.optimize(lambda c: Evaluation(loss=c["x"], predictions=REGRESSION_TARGETS[:, None]), 2)
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    assert all("got shape (20, 1)" in t.error for t in study.trials)
    study.optimize(lambda c: Evaluation(loss=c["x"], predictions=REGRESSION_TARGETS + c["x"]), 2)
    assert [t.state for t in study.trials][2:] == [TrialState.COMPLETE] * 2
    assert study.ensemble is not None


def _iris_text_labels():
    """Iris split in two, its labels text of dtype object, as a pandas column gives them."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    return X[::2], X[1::2], labels[::2], labels[1::2]


def test_text_labels_of_dtype_object_are_kept_in_a_study_file_as_in_memory(tmp_path):
    """A classifier fitted on object labels predicts object arrays, which a study file
    could not keep: every trial failed with a file and completed in memory."""
    from sklearn.tree import DecisionTreeClassifier

    X_train, X_valid, y_train, y_valid = _iris_text_labels()

    def objective(config):
        model = DecisionTreeClassifier(max_depth=config["depth"], random_state=0)
        predictions = model.fit(X_train, y_train).predict(X_valid)
        assert predictions.dtype == object
        return Evaluation(loss=float(np.mean(predictions != y_valid)), predictions=predictions)

    def ensemble(storage):
        study = Study({"params": {"depth": {"type": "int", "low": 1, "high": 5}}},
                      surrogate=None, ensemble="posthoc", loss="zero-one",
                      validation_targets=y_valid, task="classification", seed=0,
                      storage=storage)
        study.optimize(objective, n_trials=4)
        assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 4
        return study.ensemble

    assert ensemble(tmp_path / "s.db") == ensemble(None)
    assert Study.load(tmp_path / "s.db").ensemble == ensemble(None)


@pytest.mark.parametrize("in_a_file", [False, True], ids=["in-memory", "in-a-file"])
def test_predictions_that_stay_of_dtype_object_are_refused_in_memory_as_in_a_file(
    tmp_path, in_a_file
):
    """Labels that are not plain values (here Decimal) were accepted in memory and
    refused by a study file: the same objective behaved differently in the two."""
    from decimal import Decimal

    study = Study(SPACE, surrogate=None, ensemble="posthoc", loss="zero-one",
                  validation_targets=TARGETS, task="classification",
                  storage=tmp_path / "s.db" if in_a_file else None)
    predictions = np.array([Decimal(int(label)) for label in TARGETS], dtype=object)
    trial = study.ask()
    with pytest.raises(InvalidResultError, match="predictions of dtype object cannot be kept"):
        study.tell(trial, 0.0, predictions=predictions)
    assert study.tell(trial, 0.0, predictions=TARGETS).state is TrialState.COMPLETE
    study.optimize(lambda config: Evaluation(loss=0.1, predictions=predictions), n_trials=1)
    assert "predictions of dtype object" in study.trials[-1].error


def test_more_class_columns_than_the_validation_targets_hold_points_to_classes():
    """The holdout lacks class 1, so the study took classes [0, 2]; the refusal blamed
    predictions that were right, and did not name classes=, which fixes it."""
    targets = np.array([0, 2, 2, 0, 2])
    probabilities = np.full((5, 3), 0.2)
    probabilities[np.arange(5), targets] = 0.6
    study = Study(SPACE, surrogate=None, ensemble="posthoc", loss="zero-one",
                  validation_targets=targets, task="classification")
    trial = study.ask()
    refusal = (r"ensemble strategy 'posthoc' needs validation predictions: predictions have 3 "
               r"class columns .* give the study classes= \(all training classes, sorted\)")
    with pytest.raises(InvalidResultError, match=refusal):
        study.tell(trial, 0.0, predictions=probabilities)
    told = Study(SPACE, surrogate=None, ensemble="posthoc", loss="zero-one",
                 validation_targets=targets, classes=[0, 1, 2], task="classification")
    assert told.tell(told.ask(), 0.0, predictions=probabilities).state is TrialState.COMPLETE


def test_a_decimal_loss_is_a_number():
    """A database query's average is a Decimal: it was refused as "not a number" while
    a Fraction was taken."""
    from decimal import Decimal

    study = Study(SPACE, surrogate=None)
    assert study.tell(study.ask(), Decimal("0.25")).loss == 0.25
    assert study.tell(study.ask(), {"loss": Decimal("0.5")}).loss == 0.5
    assert study.tell(study.ask(), Decimal("NaN")).state is TrialState.FAILED
