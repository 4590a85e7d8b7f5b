"""Messages of a task-based search that cannot work: a loss for the other task, no
trial completed, and the per-trial progress lines of a data run."""

from __future__ import annotations

import re
import textwrap

import pytest

from ensembo import Study
from ensembo.cli import main
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


TINY = """
space:
  name: tiny-tree
  estimator: sklearn.tree.DecisionTreeClassifier
  params:
    max_depth: {type: int, low: 1, high: 6}
data:
  dataset: iris
  validation: 3
surrogate: null
ensemble: posthoc
budget: 4
seed: 1
"""


def test_progress_lines_number_trials_as_the_report_does(tmp_path, capsys):
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY))
    assert main(["run", str(experiment), "--storage", str(tmp_path / "tiny.db")]) == 0
    captured = capsys.readouterr()  # stderr is no terminal here: one line per trial
    lines = captured.err.strip().splitlines()
    assert [line.split(" [")[0] for line in lines] == [f"trial {n}" for n in range(4)]
    assert [line.split("]")[0].split("[")[1] for line in lines] == [
        f"{n}/4 done" for n in range(1, 5)
    ]
    selected = re.search(r"selected \(argmin\): trial (\d+)", captured.out).group(1)
    best_loss = lines[-1].split("(best ")[1].rstrip(")")
    assert any(line.startswith(f"trial {selected} [") and f"loss {best_loss} " in line
               for line in lines)
