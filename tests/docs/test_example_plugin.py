"""The example third-party plugin in docs/examples/ installs with pip and works.

The package is copied to a temporary folder (so the build leaves nothing in the
tree), pip-installed into the running environment without dependencies or build
isolation, exercised through the CLI and the Python API, and uninstalled.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo import Evaluation, Study
from ensembo.errors import EnsemboError
from ensembo.registry import Registry, reload_registry
from ensembo.report.scoring import ensemble_loss
from ensembo.spaces import Space

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "ensembo-plugin-example"
DISTRIBUTION = "ensembo-plugin-example"


def _pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def example_source(tmp_path_factory):
    source = tmp_path_factory.mktemp("example") / EXAMPLE.name
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.db", "*.db-*")
    shutil.copytree(EXAMPLE, source, ignore=ignore)
    return source


@pytest.fixture(scope="module")
def example(example_source):
    _pip("install", "--no-deps", "--no-build-isolation", str(example_source))
    reload_registry()  # this process's cached registry predates the install
    try:
        yield importlib.import_module("ensembo_plugin_example")
    finally:
        _pip("uninstall", "-y", DISTRIBUTION)
        reload_registry()


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ensembo.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_plugins_command_lists_the_example(example):
    finished = _cli("plugins", "--json")
    assert finished.returncode == 0, finished.stderr
    listing = json.loads(finished.stdout)
    assert {"kind": "surrogate", "name": "knn", "distribution": DISTRIBUTION} in listing["plugins"]
    assert {
        "kind": "ensemble_strategy",
        "name": "stacking",
        "distribution": DISTRIBUTION,
    } in listing["plugins"]
    assert not [f for f in listing["failures"] if f["distribution"] == DISTRIBUTION]


def test_plugins_text_listing_in_process(example, capsys):
    from ensembo.cli import main

    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split() == ["knn", DISTRIBUTION] for line in lines)
    assert any(line.split() == ["stacking", DISTRIBUTION] for line in lines)


def test_the_shipped_experiment_runs_to_the_end(example, example_source):
    """``example/experiment.yaml`` names ``knn`` and ``stacking``, as the README says."""
    folder = example_source / "example"
    finished = _cli("run", "--json", "--no-progress", "experiment.yaml", cwd=folder)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads(finished.stdout)
    assert summary["complete"] == 20 and summary["failed"] == 0
    stored = Study.load(folder / "branin.db")
    assert stored.components()["surrogate"] == {"name": "knn", "k": 4}
    assert stored.components()["ensemble_strategy"] == {"name": "stacking", "alpha": 0.01}
    assert stored.best_trial.loss < 5.0  # Branin's minimum is 0.398; random points average ~50


def test_knn_interpolates_and_grows_uncertain_away_from_data(example):
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    configs = space.sample(30, 0)
    y = np.array([c["x"] + 2 * c["y"] for c in configs])
    surrogate = Registry.from_entry_points().create("surrogate", "knn", k=3)
    surrogate.fit(space.encode(configs), y, np.random.default_rng(0))
    mean, variance = surrogate.predict(space.encode(configs))
    np.testing.assert_allclose(mean, y, atol=1e-3)  # inverse-distance weights ~ interpolation
    near, far = space.encode([configs[0]]), space.encode([{"x": 0.999, "y": 0.999}])
    far_mean, far_variance = surrogate.predict(far)
    assert far_variance[0] > surrogate.predict(near)[1][0]
    assert abs(far_mean[0] - 3.0) < 1.0


def test_knn_keeps_branches_apart(example, tree_space):
    from ensembo_plugin_example.knn import branch_aware_distances

    space = Space(tree_space)
    a = {"branch": "a", "shared": 0.1}
    b = {"branch": "b", "shared": 0.1, "only_b": 0.5, "steps": 5}
    distances = branch_aware_distances(space.encode([a]), space.encode([a, b]))
    assert distances[0, 0] == 0.0
    assert distances[0, 1] > np.sqrt(2)  # branch column + two dimensions active on one side


def test_options_are_checked_with_the_plugin_named(example):
    reg = Registry.from_entry_points()
    with pytest.raises(
        EnsemboError, match="surrogate 'knn': option 'k' must be an integer >= 1, got 0"
    ):
        reg.create("surrogate", "knn", k=0)
    with pytest.raises(ValueError, match="'stacking': option 'alpha'"):
        reg.create("ensemble_strategy", "stacking", alpha=-1)


def _noisy_models_objective(y_true: np.ndarray):
    """Each configuration is a 'model' whose predictions carry their own noise."""

    def objective(config):
        noise = np.random.default_rng(round(config["x"] * 1e9)).normal(size=y_true.size)
        predictions = y_true * (1 - abs(config["x"] - 0.3)) + 0.5 * noise
        return Evaluation(loss=float(np.mean((predictions - y_true) ** 2)), predictions=predictions)

    return objective


def test_stacking_beats_the_best_single_trial_when_errors_are_independent(example):
    y_true = np.random.default_rng(0).normal(size=300)
    study = Study(
        ConfigurationSpace(space={"x": (0.0, 1.0)}),
        surrogate=None,
        ensemble="stacking",
        validation_targets=y_true,
        loss="mse",
        task="regression",
        seed=3,
    )
    study.optimize(_noisy_models_objective(y_true), n_trials=15)
    assert len(study.ensemble) > 1
    stacked = ensemble_loss(study.history, study.ensemble, study.context)
    assert stacked < 0.5 * study.best_trial.loss


def test_stacking_on_class_probabilities(example):
    from ensembo.ensemble import EnsembleContext
    from ensembo.trials import History, Trial

    y_true = np.array([0, 1, 1, 0, 1, 0])
    good = np.eye(2)[y_true] * 0.9 + 0.05
    useless = np.full((6, 2), 0.5)
    history = History(
        [
            Trial(number=0, config={}, state="complete", loss=0.2, predictions=good),
            Trial(number=1, config={}, state="complete", loss=0.7, predictions=useless),
        ]
    )
    context = EnsembleContext(
        y_true=y_true, loss="log-loss", task="classification", classes=np.array([0, 1])
    )
    ensemble = example.Stacking(alpha=0.0).ensemble(history, context)
    assert ensemble.members[0] == 0 and ensemble.weights[0] > 0.8


def test_stacking_without_predictions_is_the_best_trial(example):
    study = Study(ConfigurationSpace(space={"x": (0.0, 1.0)}), surrogate=None, ensemble="stacking")
    study.optimize(lambda c: (c["x"] - 0.4) ** 2, n_trials=6)
    assert study.ensemble.members == (study.best_trial.number,)


def test_the_example_passes_the_conformance_checks(example):
    from ensembo.conformance import check_ensemble_strategy, check_surrogate

    assert "in a study, conditional space" in check_surrogate("knn")
    passed = check_ensemble_strategy("stacking")
    assert {"a replay gives the same ensemble, classification",
            "a replay gives the same ensemble, regression"} <= set(passed)
