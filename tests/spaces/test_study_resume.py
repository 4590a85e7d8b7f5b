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
