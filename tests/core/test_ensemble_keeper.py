"""The keeper holds a strategy to its contract: what ``ensemble()`` returns, and losses
it can use, checked before the first trial."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import Study, hookimpl
from ensembo.errors import ExperimentError, PluginContractError
from ensembo.plugins.ensembles.best import BestSingle
from ensembo.registry import Registry


class ReturnsAnArray(BestSingle):
    def ensemble(self, history, context):
        return np.array([0.5, 0.5]) if history.completed() else None


def test_an_array_in_place_of_an_ensemble_is_refused_naming_the_strategy(flat_space):
    """``==`` on an array raised numpy's "truth value is ambiguous" instead."""
    study = Study(flat_space, surrogate=None, ensemble=ReturnsAnArray())
    with pytest.raises(PluginContractError, match=r"ReturnsAnArray: ensemble\(\) must return an "
                                         r"ensembo\.Ensemble or None, got ndarray"):
        study.tell(study.ask(), 1.0)
    assert len(study.history.completed()) == 1  # the result is kept


class PerExampleOnly:
    """A loss with only the per-example side of the protocol."""

    def __call__(self, y_true, predictions):
        return (np.asarray(predictions, dtype=float) - y_true) ** 2


class RegistersTheLoss:
    @hookimpl
    def ensembo_add_losses(self):
        return {"per-example-only": PerExampleOnly}


@pytest.mark.parametrize(
    ("ensemble", "where"),
    [("posthoc", "loss"),
     ({"name": "agnostic-bayes", "rho": "tune"}, "loss"),
     ({"name": "segor", "post": True, "post_loss": "per-example-only"}, "ensemble.post_loss")],
)
def test_a_loss_that_cannot_score_an_ensemble_is_refused_before_any_trial(
    flat_space, ensemble, where
):
    """It was accepted, and the first result failed after its trial was spent."""
    registry = Registry.from_plugins({"acme-losses": RegistersTheLoss()}, builtins=True)
    loss = None if where.startswith("ensemble.") else "per-example-only"
    with pytest.raises(ExperimentError, match=rf"^{where}: .* scores combinations of models, "
                       r"but loss 'per-example-only' only scores one model"):
        Study(flat_space, surrogate=None, ensemble=ensemble, loss=loss, task="regression",
              validation_targets=np.zeros(4), registry=registry)


@pytest.mark.parametrize("ensemble", ["best", "esmbo", "agnostic-bayes"])
def test_strategies_that_score_single_models_take_such_a_loss(flat_space, ensemble):
    registry = Registry.from_plugins({"acme-losses": RegistersTheLoss()}, builtins=True)
    Study(flat_space, surrogate=None, ensemble=ensemble, loss="per-example-only",
          task="regression", validation_targets=np.zeros(4), registry=registry, budget=10)


def test_eo_without_its_own_loss_needs_a_study_loss_that_scores_an_ensemble(flat_space):
    registry = Registry.from_plugins({"acme-losses": RegistersTheLoss()}, builtins=True)
    with pytest.raises(ExperimentError, match="^loss: ensemble strategy 'segor' scores"):
        Study(flat_space, surrogate=None, ensemble={"name": "segor", "loss": None},
              loss="per-example-only", task="regression", validation_targets=np.zeros(4),
              registry=registry)


@pytest.mark.parametrize("loss", ["log-loss", {"name": "log-loss", "eps": 1e-6}])
def test_labels_under_log_loss_are_said_once_to_count_as_one_hot(flat_space, caplog, loss):
    """Also for the loss as a mapping, which the estimators now pass as given."""
    y = np.array([0, 1, 0, 1])
    study = Study(flat_space, surrogate=None, ensemble="posthoc", loss=loss,
                  validation_targets=y)
    with caplog.at_level("WARNING", logger="ensembo.ensemble_keeper"):
        for labels in ([0, 1, 1, 1], [0, 1, 0, 0]):
            study.tell(study.ask(), {"loss": 1.0, "predictions": np.array(labels)})
        study.tell(study.ask(), {"loss": 0.5, "predictions": np.eye(2)[y] * 0.8 + 0.1})
    said = [r.message for r in caplog.records if "count as one-hot" in r.message]
    assert len(said) == 1 and "predict_proba" in said[0]
    assert [t.state.value for t in study.trials] == ["complete"] * 3
