"""Conformance catches ensemble strategies whose targets are not in the order of
``history.completed()`` (plugin audit F1)."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.conformance import ConformanceError, check_ensemble_strategy
from ensembo.ensemble import Ensemble


class FinishOrder:
    """Keeps the losses as ``update`` sees them (finishing order) and returns them."""

    def __init__(self):
        self.numbers, self.losses = [], []

    def update(self, history, trial, context):
        self.numbers.append(trial.number)
        self.losses.append(trial.loss)

    def targets(self, history, context):
        return np.array(self.losses)

    def ensemble(self, history, context):
        if not self.losses:
            return None
        return Ensemble.single(self.numbers[int(np.argmin(self.losses))])


class ScaledFinishOrder(FinishOrder):
    """Not the losses themselves, still in finishing order."""

    def targets(self, history, context):
        return 2 * np.array(self.losses) + 1


class ScaledInOrder(FinishOrder):
    """Transformed losses, in the order of ``history.completed()``: right."""

    def targets(self, history, context):
        return 2 * history.losses() + 1


class ImprovedAtFinish:
    """Targets in ``history.completed()`` order that depend on the finishing order, with
    two values: 1.0 if the trial did not improve on the best when it finished. Right."""

    def __init__(self):
        self.flag, self.best = {}, np.inf

    def update(self, history, trial, context):
        self.flag[trial.number] = 0.0 if trial.loss < self.best else 1.0
        self.best = min(self.best, trial.loss)

    def targets(self, history, context):
        return np.array([self.flag[t.number] for t in history.completed()])

    def ensemble(self, history, context):
        done = history.completed()
        return Ensemble.single(min(done, key=lambda t: t.loss).number) if done else None


@pytest.mark.parametrize("strategy", [FinishOrder, ScaledFinishOrder])
def test_targets_in_finishing_order_fail(strategy):
    with pytest.raises(ConformanceError) as caught:
        check_ensemble_strategy(strategy, tasks=("regression",))
    assert [check for check, _ in caught.value.failures] == [
        "targets follow history.completed(), regression"
    ]


def test_transformed_targets_in_completed_order_pass():
    passed = check_ensemble_strategy(ScaledInOrder, tasks=("regression",))
    assert "targets follow history.completed(), regression" in passed


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_order_dependent_targets_with_few_values_pass(task):
    """At seed 11 the finishing orders gave the same flags at other positions, which the
    check took for targets kept in finishing order."""
    passed = check_ensemble_strategy(ImprovedAtFinish, tasks=(task,), seed=11)
    assert f"targets follow history.completed(), {task}" in passed


@pytest.mark.parametrize("name", ["best", "posthoc", "agnostic-bayes", "esmbo", "eo", "segor"])
def test_every_builtin_strategy_keeps_its_targets_in_order(name):
    task = ("classification",) if name == "eo" else None
    passed = check_ensemble_strategy(name, tasks=task)
    assert any(check.startswith("targets follow history.completed()") for check in passed)
