"""A failing plugin method is named in the error, and the strategy's ``update``
sees every completed trial once, also across a resume and after it raised."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ensembo
from ensembo import Study
from ensembo.ensemble import Ensemble
from ensembo.errors import ExperimentError, PluginContractError
from ensembo.plugins.ensembles.best import BestSingle as BestStrategy
from ensembo.plugins.surrogates.rf import RandomForestSurrogate


def loss(config):
    return (config["x"] - 1.0) ** 2 + (config["y"] - 2.0) ** 2


class FitFails(RandomForestSurrogate):
    def fit(self, batch, y, rng):
        raise RuntimeError("boom in fit")


class PredictsOnlyTheMean(RandomForestSurrogate):
    def predict(self, batch):
        return super().predict(batch)[0]


@pytest.mark.parametrize(
    ("surrogate", "message"),
    [
        (FitFails(), r"while calling fit\(\) of surrogate .*test_plugin_attribution\.FitFails"),
        (
            PredictsOnlyTheMean(),
            (
                r"while calling predict\(\) of surrogate .*PredictsOnlyTheMean; "
                r"it must return \(mean, variance\)"
            ),
        ),
    ],
)
def test_a_failing_surrogate_is_named_in_the_error(flat_space, surrogate, message):
    study = Study(flat_space, surrogate=surrogate, acquisition_optimizer="random", n_initial=3)
    with pytest.raises(Exception) as raised:  # the plugin's own exception, kept as is
        study.optimize(loss, n_trials=5)
    assert any(re.search(message, note) for note in raised.value.__notes__)
    assert len(study.history.completed()) == 3  # what was recorded stays


class Remembers(BestStrategy):
    """Keeps its own list of seen trials: wrong unless ``update`` sees every one."""

    def __init__(self, fail_on: int | None = None):
        self.seen: list[int] = []
        self.fail_on = fail_on

    def update(self, history, trial, context):
        if trial.number == self.fail_on:
            self.fail_on = None
            raise RuntimeError("update failed once")
        self.seen.append(trial.number)


def test_a_resumed_study_replays_stored_trials_to_update(flat_space, tmp_path):
    path = tmp_path / "study.db"
    first = Remembers()
    Study(flat_space, surrogate=None, ensemble=first, storage=path).optimize(loss, n_trials=4)
    assert first.seen == [0, 1, 2, 3]
    again = Remembers()
    resumed = Study.load(path, ensemble=again)
    assert again.seen == [0, 1, 2, 3]
    resumed.optimize(loss, n_trials=2)
    assert again.seen == [0, 1, 2, 3, 4, 5]


def test_a_trial_whose_update_raised_is_offered_again(flat_space):
    strategy = Remembers(fail_on=1)
    study = Study(flat_space, surrogate=None, ensemble=strategy)
    for _ in range(3):
        trial = study.ask()
        if trial.number == 1:
            with pytest.raises(RuntimeError) as raised:
                study.tell(trial, loss(trial.config))
            assert "while calling update() of ensemble strategy" in raised.value.__notes__[0]
        else:
            study.tell(trial, loss(trial.config))
    assert study.history[1].loss is not None
    assert strategy.seen == [0, 1, 2]


class NamesAGhost(BestStrategy):
    def ensemble(self, history, context):
        return Ensemble.single(999) if history.completed() else None


def test_an_ensemble_of_unknown_trials_is_refused_at_once(flat_space):
    study = Study(flat_space, surrogate=None, ensemble=NamesAGhost())
    trial = study.ask()
    with pytest.raises(PluginContractError, match=r"NamesAGhost built an ensemble of trials"):
        study.tell(trial, 1.0)
    assert study.history[0].loss == pytest.approx(1.0)


def test_targets_of_the_wrong_shape_name_the_strategy(flat_space):
    class ShortTargets(BestStrategy):
        def targets(self, history, context):
            return np.zeros(1)

    study = Study(flat_space, surrogate="rf", ensemble=ShortTargets(), n_initial=2)
    with pytest.raises(PluginContractError, match=r"ShortTargets returned targets of shape \(1,\)"):
        study.optimize(loss, n_trials=4)


def test_a_callback_with_a_misspelt_hook_is_refused(flat_space):
    import ensembo

    class Observer:
        @ensembo.hookimpl
        def ensembo_trial_finish(self, study, trial):  # the hook is ensembo_trial_finished
            raise AssertionError("never called")

    with pytest.raises(TypeError, match=r"Observer\.ensembo_trial_finish would never run: "
                       r"unknown hook 'ensembo_trial_finish' \(did you mean "
                       r"'ensembo_trial_finished'\?\)"):
        Study(flat_space, surrogate=None, callbacks=[Observer()])


def test_a_result_without_usable_predictions_is_refused_alone(flat_space, tmp_path):
    """Stored as complete, it would break every later ensemble and the resume; tell()
    refuses it (the trial stays running) and the study goes on."""
    from ensembo import Evaluation, TrialState
    from ensembo.objective import InvalidResultError

    y_valid = np.array([0, 1, 1, 0, 1])
    path = tmp_path / "study.db"
    study = Study(flat_space, surrogate=None, ensemble="posthoc", validation_targets=y_valid,
                  loss="zero-one", task="classification", storage=path)
    results = [
        Evaluation(loss=0.4, predictions=np.array([0, 1, 0, 0, 1])),
        Evaluation(loss=0.2),  # forgot the predictions
        Evaluation(loss=0.2, predictions=np.zeros(3, dtype=int)),  # on another split
        Evaluation(loss=0.2, predictions=np.full((5, 3), 1 / 3)),  # three classes, not two
        Evaluation(loss=0.2, predictions=np.full((5, 2), np.nan)),  # a diverged model
        Evaluation(loss=0.2, predictions=np.array([0, 1, 7, 7, 9])),  # labels of no class
    ]
    assert study.tell(study.ask(), results[0]).state is TrialState.COMPLETE
    refusals = []
    for result in results[1:]:
        trial = study.ask()
        with pytest.raises(InvalidResultError) as refused:
            study.tell(trial, result)
        refusals.append(str(refused.value))
        study.tell(trial, state="failed", error="refused")
    assert "ensemble strategy 'posthoc' needs validation predictions" in refusals[0]
    assert "do not match the 5 validation targets" in refusals[1]
    assert "3 class columns but the task has 2 classes" in refusals[2]
    assert "predictions hold 10 NaN or infinite values" in refusals[3]
    assert "predicted labels [7, 9] are not among the task's classes [0, 1]" in refusals[4]
    study.close()
    assert Study.load(path).ensemble.members == (0,)


def test_a_plain_function_callback_is_called_when_each_trial_finishes(flat_space):
    """Optuna-style callbacks (study, trial) were registered as plugins with no hooks,
    and never called, without a word."""
    seen = []

    def record(study, trial):
        seen.append((trial.number, trial.state.value, len(study.trials)))

    study = Study(flat_space, surrogate=None, seed=0, callbacks=[record])
    study.optimize(lambda config: config["x"], n_trials=3)
    assert seen == [(0, "complete", 1), (1, "complete", 2), (2, "complete", 3)]


class _WrongArguments:
    @ensembo.hookimpl
    def ensembo_trial_finished(self, trial, extra):
        pass


@pytest.mark.parametrize(
    ("callbacks", "message"),
    [(5, "callbacks must be a list of observers or functions, got int object"),
     (print, "got print; wrap a single one in a list"),
     ([object()], ("callback object object is neither callable as (study, trial) nor has "
                  "@ensembo.hookimpl methods")),
     ([_WrongArguments()], "callback _WrongArguments object: Plugin")],
)
def test_callbacks_that_cannot_work_are_refused_by_name(flat_space, callbacks, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        Study(flat_space, surrogate=None, callbacks=callbacks)


# --- what a plugin returns is checked where it is returned (plugin-author audit) ----------


class _Mean:
    """A surrogate predicting the mean target everywhere, with variance 1."""

    def fit(self, batch, y, rng):
        self.mean = float(np.mean(y))

    def predict(self, batch):
        return np.full(len(batch), self.mean), np.ones(len(batch))


class _ColumnPredictions(_Mean):
    def predict(self, batch):
        mean, variance = super().predict(batch)
        return mean[:, None], variance[:, None]


class _NegativeVariance(_Mean):
    def predict(self, batch):
        mean, variance = super().predict(batch)
        return mean, variance - 2.0


class _ArrayState(_Mean):
    def state(self):
        return {"w": np.arange(2.0)}

    def restore(self, state):
        pass


@pytest.mark.parametrize(
    ("surrogate", "message"),
    [(_ColumnPredictions(), r"predict returned shapes \(\d+, 1\) and \(\d+, 1\) for \d+ "),
     (_NegativeVariance(), r"predict returned a negative variance \(-1\)")],
)
def test_unusable_predictions_are_refused_naming_the_surrogate(flat_space, surrogate, message):
    """They failed inside the acquisition optimizer (blaming it), or made every
    acquisition value NaN so that the search silently stopped using the model."""
    study = Study(flat_space, surrogate=surrogate, acquisition_optimizer="random", n_initial=2)
    with pytest.raises(PluginContractError, match=message) as caught:
        study.optimize(loss, n_trials=3, catch=())
    assert any(type(surrogate).__name__ in note for note in caught.value.__notes__)


def test_a_state_that_is_not_json_is_refused_naming_the_surrogate(flat_space, tmp_path):
    """A numpy array in state() crashed with 'truth value of an array is ambiguous'."""
    study = Study(flat_space, surrogate=_ArrayState(), acquisition_optimizer="random",
                  n_initial=2, storage=tmp_path / "study.db")
    with pytest.raises(PluginContractError, match="state\\(\\) must return JSON values") as caught:
        study.optimize(loss, n_trials=3, catch=())
    assert any("_ArrayState" in note for note in caught.value.__notes__)


class _GradientsWithoutColumns(_Mean):
    """d mean/dx of shape (n,) instead of (n, d)."""

    def predict_with_gradients(self, batch):
        mean, variance = self.predict(batch)
        return mean, variance, np.zeros(len(batch)), np.zeros(len(batch))


class _NaNGradients(_Mean):
    def predict_with_gradients(self, batch):
        mean, variance = self.predict(batch)
        return mean, variance, np.full(batch.values.shape, np.nan), np.zeros(batch.values.shape)


@pytest.mark.parametrize(
    ("surrogate", "message"),
    [(_GradientsWithoutColumns(),
      (r"predict_with_gradients returned shapes \(\d+,\), \(\d+,\), \(\d+,\), \(\d+,\) "
       r"for \d+ configurations of 2 dimensions; expected .*\(\d+, 2\)")),
     (_NaNGradients(), "predict_with_gradients returned NaN or infinite")],
)
def test_unusable_gradients_are_refused_naming_the_surrogate(flat_space, surrogate, message):
    """A wrong shape failed in numpy's matmul, blamed on the lbfgs optimizer; NaN
    gradients were followed silently and the study ran on."""
    study = Study(flat_space, surrogate=surrogate, acquisition_optimizer="lbfgs", n_initial=2)
    with pytest.raises(PluginContractError, match=message) as caught:
        study.optimize(loss, n_trials=3, catch=())
    assert caught.value.__notes__[0].startswith(
        f"while calling predict_with_gradients() of surrogate {__name__}.{type(surrogate).__name__}"
    )


class _NaNTargets(BestStrategy):
    def targets(self, history, context):
        return np.full(len(history.completed()), np.nan)


class _ListEnsemble(BestStrategy):
    def ensemble(self, history, context):
        return [t.number for t in history.completed()]


@pytest.mark.parametrize(
    ("strategy", "message"),
    [(_NaNTargets(), "_NaNTargets returned NaN or infinite targets"),
     (_ListEnsemble(), "ensemble\\(\\) must return an ensembo.Ensemble or None, got list")],
)
def test_unusable_strategy_results_are_refused_naming_the_strategy(flat_space, strategy, message):
    """A broken contract is the plugin's bug (exit 1), noted with the method it broke; as a
    TrialError the command line took it for a mistake in the experiment file (exit 2)."""
    with pytest.raises(PluginContractError, match=message) as caught:
        Study(flat_space, surrogate="rf", ensemble=strategy, n_initial=2).optimize(
            loss, n_trials=4, catch=())
    assert any(note.startswith("while calling ") for note in caught.value.__notes__)


def test_a_strategy_that_scores_predictions_needs_validation_targets_up_front(flat_space,
                                                                             tmp_path):
    """It failed at the first ensemble, after the first trial was spent."""
    path = tmp_path / "study.db"
    with pytest.raises(ExperimentError, match="scores the trials' validation predictions: "
                       "give the study validation_targets="):
        Study(flat_space, surrogate=None, ensemble="posthoc", storage=path)
    assert not path.exists()


class _RaisingFactory:
    @ensembo.hookimpl
    def ensembo_add_surrogates(self):
        def broken(**options):
            raise RuntimeError("boom in factory")
        return {"broken": broken}


def test_a_factory_raising_any_error_is_attributed_to_its_distribution(flat_space):
    from ensembo.registry import Registry

    registry = Registry.from_plugins({"some-dist": _RaisingFactory()}, builtins=True)
    with pytest.raises(RuntimeError, match="boom in factory") as caught:
        Study(flat_space, surrogate="broken", registry=registry)
    assert "while building surrogate 'broken' (from some-dist)" in caught.value.__notes__


@pytest.mark.parametrize(
    ("ensemble", "task", "targets", "message"),
    [("segor", "classification", [0, 1, 1], ("ensemble strategy 'segor' is for regression, but "
                                            "this study's task is classification")),
     # named by its class path, ensembo.plugins.ensembles.eo.EnsembleOptimization
     ("eo", "regression", [0.1, 0.7],
      "ensemble strategy 'eo' is for classification, but this study's task is regression"),
     ({"name": "esmbo", "loss": "zero-one"}, "regression", [0.1, 0.7],
      "ensemble.loss: loss 'zero-one' does not fit a regression task"),
     ({"name": "eo", "loss": "mse"}, "classification", [0, 1, 2],
      "ensemble.loss: loss 'mse' does not fit a classification task")],
)
def test_a_strategy_for_the_other_task_or_with_such_a_loss_is_refused_up_front(
    flat_space, tmp_path, ensemble, task, targets, message
):
    """They failed after the first trial (the CLI called it a bug), or, for esmbo with
    zero-one on regression, built a meaningless ensemble of every trial without a word."""
    path = tmp_path / "study.db"
    with pytest.raises(ExperimentError, match=re.escape(message)):
        Study(flat_space, surrogate=None, ensemble=ensemble, task=task,
              validation_targets=np.array(targets), storage=path)
    assert not path.exists()
