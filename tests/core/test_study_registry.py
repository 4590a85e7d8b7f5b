"""A study given ``registry=`` (a plugin under test, docs/plugin-authoring.md) takes its
components from it, and names the plugin when one of them fails."""

from __future__ import annotations

import numpy as np
import pytest

import ensembo
from ensembo.registry import Registry
from ensembo.study import Study
from ensembo.trials import Evaluation


def one_hot_objective(y):
    """Class labels as one-hot probabilities, wrong on the examples ``x`` says."""
    def objective(config):
        labels = np.where(np.arange(len(y)) < config["x"] * len(y), (y + 1) % 3, y)
        return Evaluation(loss=float(np.mean(labels != y)), predictions=np.eye(3)[labels])
    return objective


def test_a_plugin_under_test_is_used_by_name_from_the_studys_registry():
    """The route plugin-authoring.md gives for testing, Registry.from_plugins(...): the
    strategies built their losses, and the study its named space, from the installed
    plugins instead, so a plugin's loss failed after the trials had run."""
    zero_one = Registry.from_plugins({}, builtins=True).factory("loss", "zero-one")
    line = {"name": "line", "params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}

    class Hooks:
        @ensembo.hookimpl
        def ensembo_add_losses(self):
            return {"my-zero-one": zero_one}

        @ensembo.hookimpl
        def ensembo_add_spaces(self):
            return {"my-line": lambda: line}

    registry = Registry.from_plugins({"my-plugin": Hooks()}, builtins=True)
    y = np.arange(30) % 3
    study = Study("my-line", surrogate=None, registry=registry, seed=0, task="classification",
                  loss="my-zero-one", ensemble={"name": "posthoc", "loss": "my-zero-one"},
                  validation_targets=y)
    study.optimize(one_hot_objective(y), n_trials=5, catch=())
    assert study.space.name == "line" and study.ensemble is not None


def test_a_space_library_entry_that_raises_is_named_with_its_distribution():
    """It surfaced as a bare RuntimeError naming neither the entry nor its plugin."""
    class Hooks:
        @ensembo.hookimpl
        def ensembo_add_spaces(self):
            def broken():
                raise RuntimeError("space factory boom")

            return {"raise-space": broken}

    registry = Registry.from_plugins({"ens-badspace": Hooks()}, builtins=True)
    with pytest.raises(RuntimeError, match="space factory boom") as caught:
        Study("raise-space", surrogate=None, registry=registry)
    assert "while building space 'raise-space' (from ens-badspace)" in caught.value.__notes__
