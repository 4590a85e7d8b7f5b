"""A study over a DSL space resumes from SQLite: the stored definition (JSON with sorted
keys) rebuilds the same space, imputation rules and estimators included."""

from __future__ import annotations

from ensembo import spaces
from ensembo.study import Study


def loss(config):
    return float(config["C"]) if config["kernel"] == "linear" else 1.0 / (1.0 + config["C"])


def test_resume_keeps_the_dsl_space(tmp_path):
    space = spaces.load("svm-kernels", impute={"gamma": "lower"})
    storage = tmp_path / "study.db"
    study = Study(space, storage=storage, surrogate=None, seed=4)
    study.optimize(loss, n_trials=3)
    resumed = Study.load(storage, surrogate=None)
    assert resumed.space.definition() == space.definition()
    assert resumed.space.imputation_rule("gamma") == "lower"
    assert resumed.space.is_executable
    resumed.optimize(loss, n_trials=2)
    assert len(resumed.history) == 5


def test_resume_keeps_a_space_file_that_has_no_name(tmp_path):
    path = tmp_path / "branin.yaml"
    path.write_text("params:\n  x: {type: float, low: -5.0, high: 10.0}\n"
                    "  y: {type: float, low: 0.0, high: 15.0}\n")
    space = spaces.load(path)
    assert space.name == "branin.yaml"
    storage = tmp_path / "study.db"
    Study(space, storage=storage, surrogate=None, seed=1).optimize(
        lambda c: c["x"] ** 2 + c["y"], n_trials=2)
    resumed = Study.load(storage, surrogate=None)  # the stored name must survive the trip
    assert resumed.space.definition() == space.definition()
    assert Study(spaces.load(path), storage=storage, surrogate=None, seed=1).space.name == (
        "branin.yaml")
