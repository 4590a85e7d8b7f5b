"""Class probabilities a trial reports must be probabilities.

Losses clip and ensembles average 2-D predictions as class probabilities; rows summing
to 3 or holding negative entries were stored complete, and post-hoc selection with the
log-loss chose a worse ensemble from them.
"""

from __future__ import annotations

import numpy as np
import pytest

import ensembo
from ensembo import Evaluation
from ensembo.ensemble import EnsembleContext

Y_TRUE = np.array([0, 1, 2, 1, 0, 2])
PROBABILITIES = np.array(
    [
        [0.7, 0.2, 0.1],
        [0.1, 0.8, 0.1],
        [0.2, 0.2, 0.6],
        [0.3, 0.4, 0.3],
        [0.5, 0.25, 0.25],
        [0.0, 0.0, 1.0],
    ]
)
CLASSIFICATION = EnsembleContext(
    y_true=Y_TRUE, loss="log-loss", task="classification", classes=np.array([0, 1, 2])
)


@pytest.mark.parametrize(
    "probabilities",
    [
        PROBABILITIES,
        PROBABILITIES.astype(np.float32),
        PROBABILITIES + 1e-4 * (np.arange(3) - 1),  # a classifier's rounding
        PROBABILITIES.astype(np.float16),
        np.tile([0.33, 0.332, 0.332], (6, 1)),  # rounded by hand: rows sum to 0.994
        np.eye(3, dtype=int)[Y_TRUE],  # one-hot labels, as models without predict_proba give
        np.eye(3, dtype=bool)[Y_TRUE],
    ],
    ids=["float64", "float32", "rounded", "float16", "rounded-by-hand", "one-hot", "bool"],
)
def test_probability_distributions_are_accepted(probabilities):
    assert CLASSIFICATION.prediction_problem(probabilities) is None


@pytest.mark.parametrize(
    ("probabilities", "reason"),
    [
        (3 * PROBABILITIES, "must sum to 1 in each row, but 6 rows do not; row 0 sums to 3"),
        (PROBABILITIES / 10, "row 0 sums to 0.1"),
        (PROBABILITIES - 0.5, "row 0 sums to -0.5"),
        (
            np.vstack([PROBABILITIES[:3], [[1.2, -0.1, -0.1]], PROBABILITIES[4:]]),
            "must lie in [0, 1], but 3 do not; row 3 holds 1.2 in column 0",
        ),
        (PROBABILITIES.astype(str), "must be real numbers"),
    ],
    ids=["times-3", "divided", "negative-sums", "outside-0-1", "text"],
)
def test_other_class_predictions_are_refused_naming_the_row(probabilities, reason):
    problem = CLASSIFICATION.prediction_problem(probabilities)
    assert problem is not None and reason in problem


def test_one_bad_row_is_named():
    probabilities = PROBABILITIES.copy()
    probabilities[4] = [0.5, 0.5, 0.5]
    problem = CLASSIFICATION.prediction_problem(probabilities)
    assert "1 rows do not; row 4 sums to 1.5" in problem


def test_regression_values_are_not_probabilities():
    context = EnsembleContext(y_true=np.zeros(6), loss="mse", task="regression")
    assert context.prediction_problem(np.full(6, 3.0)) is None


def posthoc_study(transform) -> ensembo.Study:
    """Three trials reporting ``transform`` of real class probabilities."""
    study = ensembo.Study(
        {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
        surrogate=None,
        ensemble="posthoc",
        loss="log-loss",
        validation_targets=Y_TRUE,
        seed=0,
    )
    study.optimize(
        lambda config: Evaluation(loss=config["x"], predictions=transform(PROBABILITIES)),
        n_trials=3,
    )
    return study


def test_a_study_keeps_trials_reporting_probabilities():
    study = posthoc_study(lambda p: p)
    assert [t.state.value for t in study.trials] == ["complete"] * 3
    assert study.ensemble is not None


@pytest.mark.parametrize(
    ("transform", "reason"),
    [(lambda p: 3 * p, "row 0 sums to 3"), (lambda p: p - 0.5, "row 0 sums to -0.5")],
    ids=["times-3", "minus-half"],
)
def test_a_study_fails_trials_reporting_other_class_predictions(transform, reason):
    study = posthoc_study(transform)
    assert [t.state.value for t in study.trials] == ["failed"] * 3
    assert all(reason in t.error for t in study.trials)
    assert study.ensemble is None


@pytest.mark.parametrize("shape", [(6, 1), (6, 3)])
def test_regression_predictions_must_be_one_dimensional(shape):
    context = EnsembleContext(y_true=np.zeros(6), loss="mse", task="regression")
    problem = context.prediction_problem(np.zeros(shape))
    assert problem == (
        f"regression predictions must be 1-D, one value per example, of shape (6,), got "
        f"shape {shape}; pass a 1-D array (predictions.ravel() for a single output column)"
    )


def test_regression_predictions_beyond_the_residual_limit_are_refused():
    """Squared errors of 1e160 overflow: a trial of a diverged model was stored complete
    (its own loss, mae, was finite), then esmbo and segor refused every later ask."""
    context = EnsembleContext(y_true=np.zeros(6), loss="mae", task="regression")
    assert context.prediction_problem(np.full(6, 1e150)) is None
    problem = context.prediction_problem(np.array([0, 0, 0, 0, 0, 2e160]))
    assert problem.startswith("predictions are up to 2e+160 from the validation targets")


def test_a_diverged_regression_trial_fails_alone():
    y = np.linspace(-1.0, 1.0, 8)
    study = ensembo.Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                          surrogate=None, ensemble="segor", loss="mae", task="regression",
                          validation_targets=y, seed=0)

    def objective(config):
        predictions = y + config["x"] if config["x"] < 0.8 else np.full(8, 1e160)
        return Evaluation(loss=float(np.mean(np.abs(predictions - y))), predictions=predictions)

    study.optimize(objective, n_trials=12)
    failed = [t for t in study.trials if t.state.value == "failed"]
    assert failed and all("did the model diverge?" in t.error for t in failed)
    assert len(study.trials) == 12 and study.ensemble is not None
