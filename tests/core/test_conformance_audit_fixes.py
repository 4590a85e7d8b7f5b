"""The conformance kit as the docs state it: fewer than n configurations allowed, the
posterior of ``predict_with_gradients`` and ``predict_samples`` checked, losses scored
per example, a misspelt task reported, no follow-on failures."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ensembo.cli import main, plugins_command
from ensembo.conformance import (
    ConformanceError,
    check_acquisition_optimizer,
    check_ensemble_strategy,
    check_loss,
    check_surrogate,
)
from ensembo.ensemble import Ensemble
from ensembo.errors import ExperimentError
from ensembo.hookspecs import hookimpl
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer
from ensembo.plugins.losses.regression import SquaredError
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.plugins.surrogates.tpe.proposer import TreeParzenProposer
from ensembo.registry import Registry


def _failures(check, component, **options) -> dict[str, str]:
    with pytest.raises(ConformanceError) as caught:
        check(component, **options)
    return dict(caught.value.failures)


# --- finding 4: up to n configurations, at least one, distinct ----------------------------


class ReturnsOne(RandomSearchOptimizer):
    def maximize(self, surface, space, history, n, rng):
        return super().maximize(surface, space, history, n, rng)[:1]


class ReturnsNone(RandomSearchOptimizer):
    def maximize(self, surface, space, history, n, rng):
        return []


class ReturnsMore(RandomSearchOptimizer):
    def maximize(self, surface, space, history, n, rng):
        return super().maximize(surface, space, history, n + 2, rng)


class ProposesOne(TreeParzenProposer):
    def propose(self, space, history, targets, n, rng):
        return super().propose(space, history, targets, n, rng)[:1]


class ProposesRepeats(TreeParzenProposer):
    def propose(self, space, history, targets, n, rng):
        first = super().propose(space, history, targets, n, rng)[0]
        return [first, dict(first)]


def test_fewer_than_n_configurations_pass_as_the_docs_allow():
    assert "up to n distinct valid configurations, best first, flat space" in (
        check_acquisition_optimizer(ReturnsOne))
    assert "proposes up to n distinct valid configurations, flat space" in (
        check_surrogate(ProposesOne))


@pytest.mark.parametrize(
    ("optimizer", "problem"),
    [(ReturnsNone, "maximize returned no configuration when asked for 3"),
     (ReturnsMore, "maximize returned 5 configurations when asked for 3")],
)
def test_none_or_more_than_n_configurations_fail(optimizer, problem):
    failures = _failures(check_acquisition_optimizer, optimizer)
    assert problem in failures["up to n distinct valid configurations, best first, flat space"]


def test_a_proposer_repeating_a_configuration_fails():
    failures = _failures(check_surrogate, ProposesRepeats)
    assert "propose returned repeated configurations" in failures[
        "proposes up to n distinct valid configurations, flat space"]


# --- finding 5 and the suspected predict_samples: the posterior itself is checked ---------


class _Forest(RandomForestSurrogate):
    def __init__(self):
        super().__init__(n_trees=10)


class GradientsOfAnotherMean(_Forest):
    """Gradients of predict (flat between the trees' splits), but a mean of its own."""

    def predict_with_gradients(self, batch):
        mean, variance = self.predict(batch)
        flat = np.zeros_like(batch.values)
        return np.full_like(mean, 7.0), variance, flat, flat


class BadSamples(_Forest):
    def predict_samples(self, batch):
        mean, variance = self.predict(batch)
        return np.stack([mean, mean * np.nan]), -np.stack([variance, variance])

    def predict_samples_with_gradients(self, batch):
        means, variances = self.predict_samples(batch)
        flat = np.zeros((*means.shape, batch.values.shape[1]))
        return means, variances, flat, flat


def test_the_mean_of_predict_with_gradients_must_be_predicts():
    failures = _failures(check_surrogate, GradientsOfAnotherMean)
    assert "predict_with_gradients gave a mean [7. 7. 7. 7. 7.] where predict gives" in (
        failures["gradients match finite differences"])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_non_finite_per_sample_predictions_fail():
    failures = _failures(check_surrogate, BadSamples)
    assert failures["per-sample predictions"] == (
        "AssertionError: predict_samples gave non-finite means or variances")


# --- findings 3 and 6: losses ------------------------------------------------------------


class EnsembleOnlyWithoutEnsembleSide:
    per_example = False

    def __call__(self, y_true, predictions):
        raise NotImplementedError("defined on ensembles only")


class BroadcastMean(SquaredError):
    """One number for every example: the mean squared error, repeated."""

    def __call__(self, y_true, predictions):
        values = super().__call__(y_true, predictions)
        return np.full(len(values), np.mean(values))


def test_an_ensemble_only_loss_without_ensemble_methods_fails_the_ensemble_side():
    failures = _failures(check_loss, EnsembleOnlyWithoutEnsembleSide, task="regression")
    assert list(failures) == ["ensemble side"]
    assert "no contributions() or ensemble_loss()" in failures["ensemble side"]


def test_a_loss_that_is_not_elementwise_fails():
    failures = _failures(check_loss, BroadcastMean, task="regression")
    assert list(failures) == ["an example's loss does not depend on other examples' predictions"]


# --- finding 7: a misspelt task ----------------------------------------------------------


class Best:
    def targets(self, history, context):
        return history.losses()

    def update(self, history, trial, context):
        pass

    def ensemble(self, history, context):
        best = history.best()
        return None if best is None else Ensemble.single(best.number)


class MisspeltTask(Best):
    task = "clasification"


def test_a_misspelt_task_attribute_is_a_failed_check():
    failures = _failures(check_ensemble_strategy, MisspeltTask)
    assert failures == {"fits the task": "AssertionError: its task attribute is "
                        "'clasification', neither 'classification' nor 'regression' (None: both)"}


def test_a_misspelt_task_argument_is_the_callers_error():
    with pytest.raises(ExperimentError, match="valid: classification, regression"):
        check_ensemble_strategy(Best, tasks=("clasification",))
    with pytest.raises(ExperimentError, match="unknown value 'regresion'"):
        check_loss("mse", task="regresion")


class _MisspeltPlugin:
    @hookimpl
    def ensembo_add_ensemble_strategies(self):
        return {"misspelt": MisspeltTask}


@pytest.mark.parametrize("task", [[], ["--task", "regression"]])
def test_the_cli_reports_a_misspelt_task_attribute(monkeypatch, capsys, task):
    reg = Registry.from_plugins({"typo-dist": _MisspeltPlugin()}, builtins=True)
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins", "misspelt", "--check", "--json", *task]) == 1
    (result,) = json.loads(capsys.readouterr().out)
    assert [f["check"] for f in result["failures"]] == ["fits the task"]
    assert "'clasification'" in result["failures"][0]["problem"]


# --- finding 11: no follow-on failure from combining ------------------------------------


class NeverEnsembles(Best):
    def ensemble(self, history, context):
        return None


def test_an_ensemble_of_none_fails_once_per_task_not_again_when_combined():
    failures = _failures(check_ensemble_strategy, NeverEnsembles, tasks=("regression",))
    assert list(failures) == ["targets and ensemble at every step, regression"]
