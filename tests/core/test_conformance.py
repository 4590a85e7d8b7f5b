"""``ensembo.conformance``: the built-in components pass, broken ones are caught by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ensembo.cli import main, plugins_command
from ensembo.conformance import (
    ConformanceError,
    ConformanceNote,
    check_acquisition,
    check_acquisition_optimizer,
    check_ensemble_strategy,
    check_initial_design,
    check_loss,
    check_surrogate,
)
from ensembo.ensemble import Ensemble
from ensembo.errors import PluginContractError, UnknownComponentError
from ensembo.hookspecs import hookimpl
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.plugins.losses.regression import SquaredError
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.registry import Registry


@pytest.mark.parametrize("surrogate", ["gp", "gp-cond", "rf", "tpe", {"name": "gp", "samples": 4}])
def test_built_in_surrogates_pass(surrogate):
    passed = check_surrogate(surrogate)
    assert "in a study, conditional space" in passed


def test_the_gp_is_checked_for_gradients_and_resume():
    passed = check_surrogate("gp")
    assert {"gradients match finite differences",
            "state and restore continue the same fits"} <= set(passed)


@pytest.mark.parametrize("strategy", ["best", "posthoc", "agnostic-bayes", "esmbo", "eo", "segor"])
def test_built_in_strategies_pass(strategy):
    passed = check_ensemble_strategy(strategy)
    assert any(name.startswith("a replay gives the same ensemble") for name in passed)


@pytest.mark.parametrize(
    ("loss", "task"),
    [("zero-one", "classification"), ("log-loss", "classification"),
     ("squared-margin", "classification"), ("sigmoid-margin", "classification"),
     ("mse", "regression"), ("mae", "regression"), ("huber", "regression"),
     ("tukey", "regression")],
)
def test_built_in_losses_pass(loss, task):
    assert "a one-member ensemble scores as its member" in check_loss(loss, task=task)


def test_the_c_bound_is_checked_as_an_ensemble_loss_only():
    passed = check_loss("c-bound", task="classification")  # it declares per_example = False
    assert passed == ["protocol", "fits the task", "ensemble loss of a batch of candidates",
                      "a perfect ensemble loses least"]
    with pytest.raises(ConformanceError, match="one finite loss per example: LossInputError"):
        check_loss("c-bound", task="classification", per_example=True)


class _Forest(RandomForestSurrogate):
    def __init__(self):
        super().__init__(n_trees=10)


class NegativeVariance(_Forest):
    def predict(self, batch):
        mean, variance = super().predict(batch)
        return mean, variance - 10.0


class GlobalRandomness(_Forest):
    def fit(self, batch, y, rng):
        super().fit(batch, y, np.random.default_rng())  # ignores the seed it was given


class ScalesTargetsInPlace(_Forest):
    def fit(self, batch, y, rng):
        y /= 2.0
        super().fit(batch, y, rng)


@pytest.mark.parametrize(
    ("surrogate", "check"),
    [(NegativeVariance, ("fit and predict, flat space, 2 points: AssertionError: predict "
                         "gave a negative variance")),
     (GlobalRandomness, "same seed, same predictions, flat space"),
     (ScalesTargetsInPlace, "inputs left unchanged, flat space")],
)
def test_a_broken_surrogate_fails_the_check_it_breaks(surrogate, check):
    with pytest.raises(ConformanceError, match=f"surrogate {surrogate.__name__} failed") as caught:
        check_surrogate(surrogate)
    assert check in str(caught.value)
    assert isinstance(caught.value, PluginContractError)


class WrongGradient(RandomForestSurrogate):
    """Claims gradients (so L-BFGS would use them) that are not the model's."""

    def predict_with_gradients(self, batch):
        mean, variance = self.predict(batch)
        ones = np.ones_like(batch.values)
        return mean, variance, ones, ones


def test_gradients_are_compared_with_finite_differences():
    with pytest.raises(ConformanceError) as caught:
        check_surrogate(WrongGradient)
    failures = dict(caught.value.failures)
    assert list(failures) == ["gradients match finite differences"]
    assert "d mean/dx[0] differs from finite differences" in failures[
        "gradients match finite differences"]


class EnsemblesRunningTrials:
    """Puts every trial it has seen into the ensemble, finished or not."""

    def targets(self, history, context):
        return np.array([t.loss for t in history.completed()])

    def update(self, history, trial, context):
        pass

    def ensemble(self, history, context):
        return Ensemble.from_counts({t.number: 1.0 for t in history}) if len(history) else None


class NoisyTargets(EnsemblesRunningTrials):
    def targets(self, history, context):
        losses = np.array([t.loss for t in history.completed()])
        return losses + np.random.default_rng().normal(size=len(losses))

    def ensemble(self, history, context):
        best = history.best()
        return None if best is None else Ensemble.single(best.number)


def test_a_strategy_that_ensembles_running_trials_is_caught_at_its_first_step():
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(EnsemblesRunningTrials, tasks=("regression",))
    failure = dict(caught.value.failures)["targets and ensemble at every step, regression"]
    assert "after 1 finished trial(s): members [" in failure
    assert "are not completed trials" in failure


def test_a_strategy_whose_replay_differs_breaks_resume():
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(NoisyTargets, tasks=("classification",))
    assert [name for name, _ in caught.value.failures] == [
        "a replay gives the same ensemble, classification",
        "a resumed study ends with the same ensemble, classification"]
    assert "a resumed study would change its ensemble" in str(caught.value)


class CountsTargetCalls(EnsemblesRunningTrials):
    """Deterministic, but its ensemble depends on how often targets() was called: the
    same in every replay, different after a resume (which calls targets less)."""

    def __init__(self):
        self.calls = 0

    def targets(self, history, context):
        self.calls += 1
        return super().targets(history, context)

    def ensemble(self, history, context):
        ranked = sorted(history.completed(), key=lambda t: t.loss)
        kept = ranked[: 1 + self.calls % 4]
        return Ensemble.from_counts({t.number: 1.0 for t in kept}) if kept else None


def test_state_kept_in_targets_is_caught_by_the_resume_check():
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(CountsTargetCalls, tasks=("regression",))
    assert [name for name, _ in caught.value.failures] == [
        "a resumed study ends with the same ensemble, regression"]
    assert "keep state in update, not in targets or ensemble" in str(caught.value)


class UpsideDown(SquaredError):
    """Rewards errors: a loss to maximize, registered as one to minimize."""

    def __call__(self, y_true, predictions):
        return -super().__call__(y_true, predictions)


class EnsembleLossOfAnotherScale(SquaredError):
    def ensemble_loss(self, y_true, totals, size):
        return 2.0 * super().ensemble_loss(y_true, totals, size)


def test_broken_losses_fail_their_checks():
    with pytest.raises(ConformanceError, match="perfect predictions lose least"):
        check_loss(UpsideDown, task="regression")
    with pytest.raises(ConformanceError) as caught:
        check_loss(EnsembleLossOfAnotherScale, task="regression")
    assert [name for name, _ in caught.value.failures] == [
        "a one-member ensemble scores as its member"]


class PerExampleOnly:
    """A loss that scores single models only: absolute error without the ensemble side."""

    def __call__(self, y_true, predictions):
        return np.abs(np.asarray(y_true) - np.asarray(predictions))


class HalfAnEnsembleSide(PerExampleOnly):
    def contributions(self, predictions):
        return np.asarray(predictions)


def test_a_loss_without_ensemble_side_passes_with_a_note_naming_who_refuses_it():
    with pytest.warns(ConformanceNote, match="'posthoc', 'eo', 'segor'"):
        passed = check_loss(PerExampleOnly, task="regression")
    assert "one finite loss per example" in passed


def test_half_an_ensemble_side_fails_naming_the_missing_method():
    with pytest.raises(ConformanceError) as caught:
        check_loss(HalfAnEnsembleSide, task="regression")
    ((check, problem),) = caught.value.failures
    assert check == "ensemble side" and "not ensemble_loss()" in problem


class _PerExampleLossPlugin:
    @hookimpl
    def ensembo_add_losses(self):
        return {"abs-only": PerExampleOnly}


def test_the_cli_prints_the_note_and_keeps_it_in_json(monkeypatch, capsys):
    reg = Registry.from_plugins({"loss-dist": _PerExampleLossPlugin()}, builtins=True)
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins", "abs-only", "--check", "--task", "regression"]) == 0
    out = capsys.readouterr().out
    assert "checks passed" in out and "  note: no contributions()/ensemble_loss()" in out
    assert main(["plugins", "abs-only", "--check", "--task", "regression", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert result["failures"] == [] and "'posthoc'" in result["notes"][0]


def test_a_component_instance_is_refused_with_what_to_pass():
    with pytest.raises(TypeError, match="zero-argument factory"):
        check_surrogate(RandomForestSurrogate())


class _BrokenPlugin:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"negative": NegativeVariance}

    @hookimpl
    def ensembo_add_ensemble_strategies(self):
        return {"greedy-for-running": EnsemblesRunningTrials}


def test_plugins_check_runs_the_checks_and_exits_1_on_a_failure(monkeypatch, capsys):
    reg = Registry.from_plugins({"broken-dist": _BrokenPlugin()}, builtins=True)
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins", "rf", "--check"]) == 0
    assert capsys.readouterr().out == "surrogate 'rf' (from ensembo): 12 checks passed\n"
    assert main(["plugins", "negative", "--check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("surrogate 'negative' (from broken-dist): ")
    assert "  FAIL fit and predict, flat space, 2 points: AssertionError: predict gave a " in out
    assert main(["plugins", "greedy-for-running", "--check", "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)
    assert result["kind"] == "ensemble_strategy" and result["distribution"] == "broken-dist"
    assert "are not completed trials" in result["failures"][0]["problem"]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [(["--check"], "--check needs the NAME"),
     (["mse", "--check"], "loss 'mse': give --task classification or --task regression"),
     (["svm", "--check"], ("'svm' is a space; conformance checks exist for every plugin kind "
                          "but estimators and spaces")),
     (["rff", "--check"], "no registered component is called 'rff'; did you mean 'rf'")],
)
def test_plugins_check_refuses_what_it_cannot_check(arguments, error, capsys):
    assert main(["plugins", *arguments]) == 2
    assert error in capsys.readouterr().err


@pytest.mark.parametrize(
    ("check", "names"),
    [(check_acquisition, ["ei", "log-ei", "pi", "lcb"]),
     (check_acquisition_optimizer, ["lbfgs", "local-search", "random"]),
     (check_initial_design, ["default", "lhs", "random", "sobol"])],
    ids=["acquisitions", "acquisition-optimizers", "initial-designs"],
)
def test_built_in_search_components_pass(check, names):
    for name in names:
        assert check(name)[0] == "protocol"


class EIWithWrongGradient(ExpectedImprovement):
    def gradient(self, mean, variance, best):
        by_mean, by_variance = super().gradient(mean, variance, best)
        return by_mean, 2 * by_variance


class HighMeansPreferred(ExpectedImprovement):
    def __call__(self, mean, variance, best):
        return super().__call__(-np.asarray(mean), variance, best)


class NormalizedByTheBatch(ExpectedImprovement):
    def __call__(self, mean, variance, best):
        values = super().__call__(mean, variance, best)
        return values / values.max()


@pytest.mark.parametrize(
    ("acquisition", "failed"),
    [(EIWithWrongGradient, "gradients match finite differences"),
     (HighMeansPreferred, "a lower mean is at least as good"),
     (NormalizedByTheBatch, "the same values point by point")],
)
def test_a_broken_acquisition_fails_the_check_it_breaks(acquisition, failed):
    with pytest.raises(ConformanceError) as caught:
        check_acquisition(acquisition)
    assert failed in [name for name, _ in caught.value.failures]


class WorstFirst(RandomSearchOptimizer):
    def maximize(self, surface, space, history, n, rng):
        return super().maximize(surface, space, history, n, rng)[::-1]


class SeedIgnored(RandomDesign):
    def configs(self, space, n, rng):
        return super().configs(space, n, np.random.default_rng())


def test_broken_search_components_fail_their_checks():
    with pytest.raises(ConformanceError, match="the first is not the best: scores"):
        check_acquisition_optimizer(WorstFirst)
    with pytest.raises(ConformanceError) as caught:
        check_initial_design(SeedIgnored)
    assert [name for name, _ in caught.value.failures] == [
        "same seed, same design, flat space", "same seed, same design, conditional space"]


# --- findings, not crashes or false failures (plugin-author audit, defect 8) ---------------


class PredictsOneArray(_Forest):
    """Returns (n, 2): one array instead of the pair (mean, variance)."""

    def predict(self, batch):
        return np.column_stack(super().predict(batch))


class PredictsNaN(_Forest):
    def predict(self, batch):
        mean, variance = super().predict(batch)
        return np.full_like(mean, np.nan), variance


def test_one_array_from_predict_is_a_finding_not_a_crash_of_the_check():
    """The check unpacked it into _posterior_problem(): 'takes 3 positional arguments'."""
    with pytest.raises(ConformanceError) as caught:
        check_surrogate(PredictsOneArray)
    failures = dict(caught.value.failures)
    assert failures["fit and predict, flat space, 2 points"] == (
        "AssertionError: predict gave an array of shape (7, 2), expected (mean, variance)")
    assert "positional arguments" not in str(caught.value)


def test_nan_predictions_do_not_also_fail_the_seeding_checks():
    with pytest.raises(ConformanceError) as caught:
        check_surrogate(PredictsNaN)
    failed = [name for name, _ in caught.value.failures]
    assert "fit and predict, flat space, 2 points" in failed
    assert not [name for name in failed if name.startswith("same seed")]


class NaNTargets(EnsemblesRunningTrials):
    def targets(self, history, context):
        return np.full(len(history.completed()), np.nan)

    def ensemble(self, history, context):
        best = history.best()
        return None if best is None else Ensemble.single(best.number)


def test_nan_targets_fail_only_the_step_check_not_the_replay_checks():
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(NaNTargets, tasks=("regression",))
    assert [name for name, _ in caught.value.failures] == [
        "targets and ensemble at every step, regression",
        "trials without validation predictions (needs_predictions not declared)"]
    assert "non-finite targets" in str(caught.value)


class NaNEnsembleLoss(SquaredError):
    def ensemble_loss(self, y_true, totals, size):
        return np.full(np.shape(totals)[:-1], np.nan)


def test_nan_ensemble_losses_are_reported_as_such_not_as_a_batching_difference():
    with pytest.raises(ConformanceError) as caught:
        check_loss(NaNEnsembleLoss, task="regression")
    failure = dict(caught.value.failures)["ensemble loss of a batch of candidates"]
    assert failure.startswith("AssertionError: non-finite ensemble losses")


class NoPredict:
    def fit(self, batch, y, rng):
        pass


class _MissingMethodPlugin:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"nopredict": NoPredict}


def test_a_registered_component_missing_a_method_fails_the_protocol_check(monkeypatch, capsys):
    """The registry's protocol check raised before any check ran: ``--check --json``
    printed plain text and exited 2, and check_surrogate raised a bare PluginContractError."""
    reg = Registry.from_plugins({"broken-dist": _MissingMethodPlugin()}, builtins=True)
    with pytest.raises(ConformanceError) as caught:
        check_surrogate("nopredict", registry=reg)
    ((check, problem),) = caught.value.failures
    assert check == "protocol" and "missing predict" in problem
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins", "nopredict", "--check", "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)
    assert result["distribution"] == "broken-dist" and result["passed"] == []
    assert [f["check"] for f in result["failures"]] == ["protocol"]
    assert main(["plugins", "nopredict", "--check"]) == 1
    assert "  FAIL protocol: PluginContractError: " in capsys.readouterr().out


class UsesPredictions:
    """Reads ``context.y_true`` but forgot ``needs_predictions = True``."""

    def targets(self, history, context):
        return history.losses()

    def update(self, history, trial, context):
        pass

    def ensemble(self, history, context):
        best = history.best()
        if best is None:
            return None
        len(context.y_true)
        return Ensemble.single(best.number)


class DeclaresPredictions(UsesPredictions):
    needs_predictions = True


def test_a_strategy_reading_predictions_undeclared_fails_the_no_predictions_check():
    """It passed every check (they always supplied predictions), then crashed the first
    study whose objective returns only a loss."""
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(UsesPredictions)
    ((check, problem),) = caught.value.failures
    assert check == "trials without validation predictions (needs_predictions not declared)"
    assert problem.startswith("AssertionError: raised TypeError: ")
    assert "must declare needs_predictions = True" in problem
    passed = check_ensemble_strategy(DeclaresPredictions)
    assert not [name for name in passed if "without validation predictions" in name]


def test_the_built_in_best_is_also_checked_without_predictions():
    assert ("trials without validation predictions (needs_predictions not declared)"
            in check_ensemble_strategy("best"))


class _Raises:
    def __init__(self, k: int = 3):
        raise ValueError("could not parse internal table")


def _divides_by_zero():
    return 1 / 0


class _RaisingFactories:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"broken": _Raises, "boom": _divides_by_zero}


def test_a_factory_that_raises_is_a_failed_build_check_not_an_escaped_error():
    """A ValueError escaped as 'rejected options {}' (options never given, and exit 2 as
    a user mistake); any other error escaped --check with no report and no JSON."""
    reg = Registry.from_plugins({"my-dist": _RaisingFactories()}, builtins=True)
    with pytest.raises(ConformanceError) as caught:
        check_surrogate("broken", registry=reg)
    assert caught.value.failures == [(
        "build", ("ValueError: could not parse internal table "
                  "(while building surrogate 'broken' (from my-dist))"))]
    assert "rejected options" not in str(caught.value)


def test_plugins_check_reports_a_factory_that_raises_in_text_and_json(monkeypatch, capsys):
    reg = Registry.from_plugins({"my-dist": _RaisingFactories()}, builtins=True)
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins", "boom", "--check", "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)
    assert result["distribution"] == "my-dist" and result["passed"] == []
    assert result["failures"] == [{"check": "build", "problem": (
        "ZeroDivisionError: division by zero (while building surrogate 'boom' (from my-dist))")}]
    assert main(["plugins", "broken", "--check"]) == 1
    assert capsys.readouterr().out == (
        "surrogate 'broken' (from my-dist): 1 check(s) failed\n"
        "  FAIL build: ValueError: could not parse internal table "
        "(while building surrogate 'broken' (from my-dist))\n")


def test_a_spec_that_is_no_factory_and_an_unknown_name_are_still_the_callers_mistake():
    with pytest.raises(TypeError, match="zero-argument factory"):
        check_surrogate(RandomForestSurrogate())
    with pytest.raises(UnknownComponentError):
        check_surrogate("no-such-surrogate")
