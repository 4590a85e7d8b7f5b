"""Messages of a task-based search that cannot work: a loss for the other task, or no
trial completed."""

from __future__ import annotations

import re

import pytest

from ensembo import Study
from ensembo.errors import ExperimentError, TrialError
from ensembo.ml.selection import select_trial
from ensembo.ml.task import Task


@pytest.mark.parametrize("loss", ["mse", "mae", "huber"])
def test_a_regression_loss_is_refused_for_classification(tree_only_space, classification_data,
                                                          loss):
    X, y = classification_data
    with pytest.raises(
        ExperimentError,
        match=re.escape(
            f"loss: loss {loss!r} does not fit a classification task, whose predictions are "
            "class probabilities of shape (m, n_classes)"
        ),
    ):
        Task(X, y, task="classification", space=tree_only_space, loss=loss)


@pytest.mark.parametrize("loss", ["log-loss", "sigmoid-margin", "zero-one"])
def test_a_classification_loss_is_accepted_for_classification(
    tree_only_space, classification_data, loss
):
    X, y = classification_data
    assert Task(X, y, task="classification", space=tree_only_space, loss=loss).loss_spec == loss


def test_no_completed_trial_quotes_the_first_errors(flaky_space):
    study = Study(flaky_space, surrogate=None, seed=1)
    for text in ["RuntimeError: this learner always fails"] * 2 + ["ValueError: other"]:
        study.tell(study.ask(), state="failed", error=text)  # as the loop records a raise
    with pytest.raises(TrialError) as error:
        select_trial(study.history, study.space)
    message = str(error.value)
    assert message.startswith("no trial completed: nothing to select; all 3 finished trials "
                              "failed:")
    assert "  trials 0, 1: RuntimeError: this learner always fails" in message
    assert "  trial 2: ValueError: other" in message


def test_no_trial_run_says_so(flaky_space):
    study = Study(flaky_space, surrogate=None)
    with pytest.raises(TrialError, match=r"nothing to select \(no trial was run\)"):
        select_trial(study.history, study.space)

