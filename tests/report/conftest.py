"""A small stored study with predictions, shared by the report tests."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float

from ensembo import Evaluation, Study


def _space() -> ConfigurationSpace:
    space = ConfigurationSpace(name="toy-cash")
    learner = Categorical("learner", ["ridge", "tree"])
    alpha = Float("alpha", (1e-6, 10.0), log=True)
    depth = Float("depth", (1.0, 10.0))
    space.add([learner, alpha, depth])
    space.add([EqualsCondition(alpha, learner, "ridge"), EqualsCondition(depth, learner, "tree")])
    return space


def make_objective(y_true: np.ndarray):
    """Each configuration 'predicts' y with its own noise; the loss spans decades."""

    def objective(config):
        if config["learner"] == "ridge":
            scale = 0.02 + abs(np.log10(config["alpha"]) + 3) / 2
        else:
            scale = 0.1 + 0.1 * abs(config["depth"] - 6)
        seed = int(abs(hash(tuple(sorted(config.items())))) % 2**32)
        predictions = y_true + scale * np.random.default_rng(seed).normal(size=y_true.size)
        loss = float(np.mean((predictions - y_true) ** 2))
        return Evaluation(loss=loss, predictions=predictions, info={"test_loss": 1.1 * loss})

    return objective


@pytest.fixture(scope="session")
def stored_study(tmp_path_factory):
    """20 random-search trials, 'best' strategy, validation targets and test losses."""
    path = tmp_path_factory.mktemp("study") / "toy.db"
    y_true = np.random.default_rng(0).normal(size=80)
    study = Study(
        _space(),
        surrogate=None,
        storage=path,
        validation_targets=y_true,
        loss="mse",
        task="regression",
        budget=20,
        seed=5,
    )
    study.optimize(make_objective(y_true), n_trials=20)
    failed = study.ask()
    study.tell(failed, state="failed", error="ValueError: diverged")
    return path, study


@pytest.fixture
def short_eo_study(tmp_path):
    """An eo study whose budget (10) is too short for its 12 slots, so that eo advises
    a longer one at run time (checked here: the run must keep warning)."""
    path = tmp_path / "eo.db"
    y = np.random.default_rng(0).integers(0, 2, 40)

    def objective(config):
        rows = np.random.default_rng(int(1e6 * config["x"])).dirichlet(np.ones(2), size=y.size)
        rows[np.arange(y.size), y] += 0.3
        rows /= rows.sum(axis=1, keepdims=True)
        return Evaluation(loss=float(np.mean(rows.argmax(axis=1) != y)), predictions=rows)

    with pytest.warns(UserWarning, match="use a budget of at least 60"):
        Study({"params": {"x": {"type": "float", "low": 0, "high": 1}}}, surrogate=None,
              ensemble="eo", validation_targets=y, loss="zero-one", seed=0, storage=path,
              budget=10).optimize(objective, n_trials=10)
    return path
