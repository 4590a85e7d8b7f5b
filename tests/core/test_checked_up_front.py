"""Arguments that could only fail later, after trials were spent, are refused up front:
``optimize(max_retries=...)`` and a callback that cannot take ``(study, trial)``."""

from __future__ import annotations

import re

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
