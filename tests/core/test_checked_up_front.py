"""Arguments that could only fail later, after trials were spent, are refused up front:
``optimize(max_retries=...)`` and a callback that cannot take ``(study, trial)``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensembo import Study
from ensembo.errors import ExperimentError

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def quadratic(config):
    return (config["x"] - 0.3) ** 2


@pytest.mark.parametrize("max_retries", ["2", -1, 1.5, True])
def test_max_retries_is_checked_before_any_trial(max_retries):
    """'2' failed with a TypeError after the first crash; -1 was accepted."""
    study = Study(SPACE, surrogate=None)
    message = f"max_retries: must be an integer >= 0, got {max_retries!r}"
    with pytest.raises(ExperimentError, match=f"^{re.escape(message)}$"):
        study.optimize(quadratic, 2, max_retries=max_retries)
    assert len(study.trials) == 0


def test_max_retries_zero_is_accepted():
    assert len(Study(SPACE, surrogate=None).optimize(quadratic, 2, max_retries=0).trials) == 2


@pytest.mark.parametrize(
    "callback", [lambda: None, lambda study: None, lambda study, trial, extra: None],
    ids=["none", "one", "three"],
)
def test_a_callback_that_cannot_take_study_and_trial_is_refused_when_built(callback):
    """It raised a TypeError after the first trial finished."""
    with pytest.raises(TypeError, match="callback <lambda> must be callable as \\(study, trial\\)"):
        Study(SPACE, surrogate=None, callbacks=[callback])


@pytest.mark.parametrize(
    "callback",
    [lambda study, trial: None, lambda *args: None, lambda study, trial, extra=1: None, print],
    ids=["two", "varargs", "default", "builtin"],
)
def test_callbacks_that_take_study_and_trial_are_called(callback, capsys):
    seen = []
    Study(SPACE, surrogate=None, callbacks=[callback, lambda s, t: seen.append(t.number)]
          ).optimize(quadratic, 2)
    assert seen == [0, 1]


@pytest.mark.parametrize(
    ("ensemble", "task", "targets"),
    [("posthoc", "classification", np.arange(20).reshape(-1, 1) % 2),  # df[["y"]]
     ("eo", "classification", np.arange(20).reshape(-1, 1) % 2),
     ("posthoc", "regression", np.linspace(0.0, 1.0, 20).reshape(-1, 1)),
     ("segor", "regression", np.linspace(0.0, 1.0, 20).reshape(-1, 1)),
     ("posthoc", "regression", np.linspace(0.0, 1.0, 20).reshape(2, 10)),
     ("best", None, 0.5)],
    ids=["posthoc-labels-column", "eo-labels-column", "posthoc-values-column",
         "segor-values-column", "a-table", "a-scalar"],
)
def test_validation_targets_that_are_not_one_dimensional_are_refused_naming_them(
    ensemble, task, targets
):
    """A (20, 1) column was accepted: each tell stored its trial and raised a broadcast
    error, or eo and segor blamed their loss ("does not fit a classification task")."""
    shape = np.shape(targets)
    message = (f"validation_targets: must be 1-D, one entry per example, of shape (m,), got "
               f"shape {shape}; pass a 1-D array (y.ravel(), or the column df['y'] rather "
               "than df[['y']])")
    with pytest.raises(ExperimentError, match=f"^{re.escape(message)}$"):
        Study(SPACE, surrogate=None, ensemble=ensemble, task=task, validation_targets=targets)


def test_validation_targets_without_an_example_are_refused_naming_them():
    with pytest.raises(ExperimentError, match="^validation_targets: holds no examples"):
        Study(SPACE, surrogate=None, ensemble="posthoc", task="regression",
              validation_targets=np.array([]))
