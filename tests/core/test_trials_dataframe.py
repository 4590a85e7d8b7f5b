"""``Study.trials_dataframe``: the trials as a table, as a report's trials.csv has them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ensembo.ensemble import Ensemble
from ensembo.study import Study
from ensembo.trials import Evaluation

pandas = pytest.importorskip("pandas")


TARGETS = np.linspace(0.0, 1.0, 10)
NOISE = np.random.default_rng(0).normal(size=10)


def _objective(config):
    if config["shared"] > 0.5:
        raise ValueError("too large")
    predictions = TARGETS + config["shared"] * NOISE
    loss = float(np.mean((predictions - TARGETS) ** 2))
    return Evaluation(loss=loss, predictions=predictions, info={"test_error": 2 * loss})


@pytest.fixture
def finished(tree_space, tmp_path):
    study = Study(tree_space, surrogate=None, ensemble="posthoc", seed=3, task="regression",
                  loss="mse", validation_targets=TARGETS, storage=tmp_path / "study.db")
    return study.optimize(_objective, n_trials=12)


def test_one_row_per_trial_with_hyperparameters_metrics_and_weights(finished):
    table = finished.trials_dataframe()
    assert list(table.columns) == [
        "state", "loss", "best_so_far", "weight", "branch", "shared", "only_b", "steps",
        "test_error", "duration_s", "attempts", "error",
    ]
    assert list(table.index) == list(range(12))
    for trial in finished.trials:
        row = table.loc[trial.number]
        assert row["state"] == trial.state.value
        assert row["branch"] == trial.config["branch"]
        assert pandas.isna(row["steps"]) == ("steps" not in trial.config)  # inactive: empty
        if trial.state.value == "failed":
            assert pandas.isna(row["loss"]) and row["error"] == "ValueError: too large"
        else:
            assert row["test_error"] == pytest.approx(2 * trial.loss)
    complete = table[table["state"] == "complete"]
    assert 0 < len(complete) < 12  # both kinds of trial are in the table
    expected_best = np.fmin.accumulate(table["loss"].to_numpy())
    np.testing.assert_allclose(table["best_so_far"], expected_best)
    ensemble = finished.ensemble
    members = table["weight"].dropna()
    expected = dict(zip(ensemble.members, ensemble.weights, strict=True))
    assert dict(members) == pytest.approx(expected)
    assert members.sum() == pytest.approx(1.0)


class _BestTwice:
    """An ensemble listing the best trial twice: a valid weighted multiset."""

    def targets(self, history, context):
        return history.losses()

    def update(self, history, trial, context):
        pass

    def ensemble(self, history, context):
        best = history.best()
        return None if best is None else Ensemble(members=[best.number] * 2, weights=[0.5, 0.5])


def test_a_trial_listed_twice_in_the_ensemble_shows_its_summed_weight():
    """A dict of (member, weight) pairs kept one of the two halves: weight 0.5."""
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    study = Study(space, surrogate=None, ensemble=_BestTwice(), seed=0)
    study.optimize(lambda config: config["x"], n_trials=3)
    weights = study.trials_dataframe()["weight"]
    assert weights.dropna().to_dict() == {study.best_trial.number: pytest.approx(1.0)}


def test_a_resumed_study_gives_the_same_table(finished, tmp_path):
    before = finished.trials_dataframe().drop(columns="weight")
    after = Study.load(tmp_path / "study.db").trials_dataframe().drop(columns="weight")
    pandas.testing.assert_frame_equal(before, after)


def test_without_pandas_the_error_says_what_to_install(finished, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"needs the 'pandas' package.*ensembo\[data\]"):
        finished.trials_dataframe()


NUMERIC_DTYPES = {
    "loss": "float64", "best_so_far": "float64", "weight": "float64",
    "duration_s": "float64", "attempts": "int64",
}


def _fail(config):
    raise ValueError("boom")


def _numeric_dtypes(table) -> dict[str, str]:
    return {name: str(table[name].dtype) for name in NUMERIC_DTYPES}


@pytest.mark.parametrize(
    ("objective", "n_trials"),
    [(None, 0), (_fail, 3), (lambda config: config["x"], 3)],
    ids=["no-trials", "all-failed", "complete"],
)
def test_the_numeric_columns_have_one_dtype_whatever_the_trials(objective, n_trials):
    """No value to infer from (no trials, none complete) made them objects of None."""
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                  surrogate=None, seed=0)
    if n_trials:
        study.optimize(objective, n_trials=n_trials)
    table = study.trials_dataframe()
    assert _numeric_dtypes(table) == NUMERIC_DTYPES
    assert table["loss"].isna().sum() == (n_trials if objective is _fail else 0)


def test_a_pending_trial_has_nan_numbers():
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                  surrogate=None, seed=0)
    study.enqueue({"x": 0.5})
    table = study.trials_dataframe()
    assert _numeric_dtypes(table) == NUMERIC_DTYPES
    assert table[["loss", "best_so_far", "weight", "duration_s"]].isna().all(axis=None)


def test_a_metric_named_like_a_column_keeps_its_values():
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                  surrogate=None, seed=0)
    study.optimize(lambda config: Evaluation(loss=config["x"], info={"loss": "low"}), n_trials=2)
    table = study.trials_dataframe()
    assert str(table.iloc[:, 1].dtype) == "float64"  # the study's loss
    assert list(table.iloc[:, -4]) == ["low", "low"]  # the metric, before the tail
