"""A learner that calls ``sys.exit()``, or that our memory limit stops, fails its trial
in a data run, and the run goes on.

In-process, a learner's ``sys.exit()`` went through the loop and ended the whole data
run; in a child process (``trial_timeout``) its trial said "the objective called
sys.exit", naming no learner. Under ``memory_limit``, a learner that caught the
MemoryError and raised its own error, or a model that fitted but could not be pickled
back within the limit, failed as a plain error instead of ``memory:``.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ensembo import Study
from ensembo.execution import NO_LIMITS, ObjectiveExit, TrialLimits
from ensembo.ml import Task, run_task
from ensembo.ml.final import refitted_model
from ensembo.ml.learner_exit import LearnerExit
from ensembo.trials import TrialState

LIMITS = [NO_LIMITS, TrialLimits(wall_time=60)]
LIMIT_IDS = ["in-process", "child"]
MEMORY_LIMIT = 128 * 1024**2


class Quitter(ClassifierMixin, BaseEstimator):
    """Calls ``sys.exit(code)`` in ``fit`` when its tree depth is 3, or in ``predict``,
    as a learner wrapping a command-line tool may; fits a constant model otherwise."""

    def __init__(self, depth: int = 1, code=0, exits_in: str = "fit"):
        self.depth, self.code, self.exits_in = depth, code, exits_in

    def fit(self, X, y):
        if self.exits_in == "fit" and self.depth == 3:
            sys.exit(self.code)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        if self.exits_in == "predict" and self.depth == 3:
            sys.exit(self.code)
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


class MemoryHungry(ClassifierMixin, BaseEstimator):
    """Runs out of the memory limit in ``fit`` and says so in an error of its own, or
    keeps a model that fits within the limit once, but not twice (pickled back)."""

    def __init__(self, how: str = "own-error"):
        self.how = how

    def fit(self, X, y):
        if self.how == "own-error":
            try:
                bytearray(1024**3)
            except MemoryError as error:
                raise ValueError("the solver could not allocate its workspace") from error
        else:
            self.workspace_ = bytearray(80 * 1024**2)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


def _task(space, data, build):
    X, y = data
    task = Task(X, y, task="classification", space=space, validation=0.3)
    task.build = build
    return task


def _study(space, task):
    return Study(space, surrogate=None, validation_targets=task.validation_targets(),
                 loss="zero-one", task="classification", seed=0)


def _depths(study):
    return [t.config["depth"] for t in study.trials]


@pytest.mark.parametrize("limits", LIMITS, ids=LIMIT_IDS)
@pytest.mark.parametrize("code", [0, "bad option"])
def test_a_learner_s_sys_exit_fails_its_trial_and_the_run_goes_on(
    tree_only_space, classification_data, limits, code
):
    task = _task(tree_only_space, classification_data,
                 lambda config: Quitter(depth=config["depth"], code=code))
    study = _study(tree_only_space, task)
    run_task(study, task, 8, limits=limits)
    assert 3 in _depths(study)  # the space draws it within 8 trials
    assert len(study.trials) == 8
    for trial in study.trials:
        if trial.config["depth"] == 3:
            assert trial.state is TrialState.FAILED
            assert trial.error == (
                f"the learner Quitter called sys.exit({code!r}) in its fit "
                f"(SystemExit: {code})"
            )
        else:
            assert trial.state is TrialState.COMPLETE


@pytest.mark.parametrize("limits", LIMITS, ids=LIMIT_IDS)
def test_the_step_of_a_pipeline_that_exits_is_named(tree_only_space, classification_data,
                                                     limits):
    task = _task(tree_only_space, classification_data,
                 lambda config: make_pipeline(StandardScaler(), Quitter(depth=3)))
    study = _study(tree_only_space, task)
    run_task(study, task, 2, limits=limits)
    assert [t.error for t in study.trials] == [
        "the learner Quitter called sys.exit(0) in its fit (SystemExit: 0)"
    ] * 2


def test_a_learner_that_exits_in_predict_fails_its_trial(tree_only_space, classification_data):
    task = _task(tree_only_space, classification_data,
                 lambda config: Quitter(depth=3, code=2, exits_in="predict"))
    study = _study(tree_only_space, task)
    run_task(study, task, 2)
    assert [t.error for t in study.trials] == [
        "the learner Quitter called sys.exit(2) in its predict (SystemExit: 2)"
    ] * 2


def test_a_refit_whose_learner_exits_raises_the_learner_s_exit(
    tree_only_space, classification_data
):
    task = _task(tree_only_space, classification_data, lambda config: Quitter(depth=3))
    with pytest.raises(LearnerExit, match=r"learner Quitter called sys\.exit\(0\) in its fit"):
        refitted_model(task, 0, {"behaviour": "fit", "depth": 3})


def test_a_learner_exit_is_an_objective_exit_that_pickles():
    exit_ = pickle.loads(pickle.dumps(LearnerExit("SVC", "fit", 3)))
    assert isinstance(exit_, ObjectiveExit) and exit_.code == 3
    assert str(exit_) == "the learner SVC called sys.exit(3) in its fit (SystemExit: 3)"
    no_code = "the learner SVC called sys.exit() in its fit (SystemExit)"
    assert str(LearnerExit("SVC", "fit")) == no_code


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("own-error", ", raised as ValueError: the solver could not allocate its workspace)"),
        ("large-model", " while its result was pickled to be sent back (MemoryError)"),
    ],
)
def test_a_learner_stopped_by_the_memory_limit_fails_memory(
    tree_only_space, classification_data, how, said
):
    task = _task(tree_only_space, classification_data, lambda config: MemoryHungry(how))
    study = _study(tree_only_space, task)
    run_task(study, task, 2, limits=TrialLimits(memory=MEMORY_LIMIT))
    limit = f"memory: the evaluation exceeded its memory limit of {MEMORY_LIMIT} bytes"
    for trial in study.trials:
        assert trial.state is TrialState.FAILED
        assert trial.error.startswith(limit) and trial.error.endswith(said), trial.error
