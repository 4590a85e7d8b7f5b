"""Study.enqueue and Study.add: configurations and results that come from the user."""

from __future__ import annotations

import re

import pytest

from ensembo import Study, TrialState
from ensembo.errors import SpaceError
from ensembo.objective import InvalidResultError


def test_queued_configs_are_asked_first_with_defaults_filled_in(tree_space):
    study = Study(tree_space, surrogate=None, seed=0)
    queued = study.enqueue({"branch": "b", "steps": 3})
    assert queued.state is TrialState.PENDING and queued.number == 0
    # the leaves the config leaves out take the space's defaults
    default = study.space.default()
    assert queued.config == {
        "branch": "b", "steps": 3, "shared": default["shared"], "only_b": 0.5,
    }
    study.enqueue({"branch": "a"})
    first, second, fresh = study.ask(), study.ask(), study.ask()
    assert (first.number, second.number, fresh.number) == (0, 1, 2)
    assert first.config == queued.config and first.state is TrialState.RUNNING
    assert first.attempts == 1 and second.config["branch"] == "a"
    assert "steps" not in second.config


def test_interrupted_trials_go_before_queued_ones(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    running = study.ask()
    study.tell(running, state="interrupted")
    study.enqueue({"x": 1.0, "y": 2.0})
    assert [t.number for t in study.ask_batch(2)] == [0, 1]


def test_optimize_evaluates_queued_configs_and_counts_them(flat_space):
    study = Study(flat_space, seed=0, n_initial=3)
    study.enqueue({"x": 1.0, "y": 2.0})
    study.optimize(lambda c: (c["x"] - 1.0) ** 2 + (c["y"] - 2.0) ** 2, n_trials=6)
    assert len(study.trials) == 6
    assert study.trials[0].config == {"x": 1.0, "y": 2.0}
    assert study.best_trial.number == 0 and study.best_trial.loss == 0.0


def test_queued_configs_survive_a_resume(flat_space, tmp_path):
    path = tmp_path / "study.db"
    Study(flat_space, surrogate=None, seed=0, storage=path).enqueue({"x": 3.0, "y": 4.0})
    resumed = Study.load(path)
    assert resumed.trials[0].state is TrialState.PENDING
    assert resumed.ask().config == {"x": 3.0, "y": 4.0}


def test_a_forbidden_queued_config_is_a_space_error(tmp_path):
    space = {
        "params": {
            "a": {"type": "categorical", "choices": ["x", "y"]},
            "b": {"type": "categorical", "choices": ["u", "v"]},
        },
        "forbidden": [{"a": "y", "b": "v"}],
    }
    study = Study(space, surrogate=None, seed=0)
    with pytest.raises(SpaceError, match="violates forbidden clause"):
        study.enqueue({"a": "y", "b": "v"})
    assert study.enqueue({"a": "y"}).config == {"a": "y", "b": "u"} and len(study.trials) == 1


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"z": 1.0}, r"unknown hyperparameters \['z'\]"),
        ({"x": 99.0}, r": x: 99.0 is not a number in \[-5.0, 10.0\]"),
        ({"branch": "a", "only_b": 0.3}, r"\['only_b'\] are not active"),
        ({"x": True}, r": x: True is a boolean, not a number in \[-5.0, 10.0\]"),  # was kept
        ([("x", 1.0)], r"a configuration is a mapping of hyperparameter names to values"),
    ],
)
def test_a_bad_queued_config_names_the_hyperparameter_and_records_nothing(
    tree_space, flat_space, config, message
):
    space = tree_space if "branch" in config else flat_space
    study = Study(space, surrogate=None, seed=0)
    with pytest.raises(SpaceError, match=message):
        study.enqueue(config)
    assert len(study.trials) == 0


class RecordingProposer:
    """Proposes random configurations and remembers what it was shown."""

    def __init__(self):
        self.seen: list[tuple[list[dict], list[float]]] = []

    def propose(self, space, history, targets, n, rng):
        self.seen.append(([t.config for t in history.completed()], list(targets)))
        return space.sample(n, rng)


def test_add_records_an_outside_result_that_the_model_and_ensemble_use(flat_space):
    proposer = RecordingProposer()
    study = Study(flat_space, surrogate=proposer, seed=0, n_initial=2)
    added = study.add({"x": 1.0, "y": 2.0}, 0.5)
    assert added.state is TrialState.COMPLETE and added.loss == 0.5
    assert study.ensemble.members == (0,)
    study.add({"x": -4.0}, {"loss": 3.0})  # y at its default
    # the initial design's two slots are taken by the added results: the model proposes
    study.ask()
    y_default = study.space.default()["y"]
    assert proposer.seen == [([{"x": 1.0, "y": 2.0}, {"x": -4.0, "y": y_default}], [0.5, 3.0])]


def test_skip_if_known_keeps_a_rerun_script_from_queueing_or_adding_twice(flat_space, tmp_path):
    path = tmp_path / "study.db"

    def script():  # what a user's script does, run twice (the second time resumes)
        study = Study(flat_space, surrogate=None, seed=0, storage=path)
        added = study.add({"x": 1.0, "y": 2.0}, 0.25, skip_if_known=True)
        queued = study.enqueue({"x": 3.0}, skip_if_known=True)
        return study, added, queued

    first, added, queued = script()
    again, added_again, queued_again = script()
    assert len(again.trials) == 2
    assert (added_again.number, queued_again.number) == (added.number, queued.number) == (0, 1)
    assert again.trials[0].loss == 0.25 and again.trials[1].state is TrialState.PENDING
    # without the flag the same configuration is queued again, on purpose
    assert again.enqueue({"x": 3.0}).number == 2


def test_adding_the_result_of_a_queued_config_tells_that_trial(flat_space):
    study = Study(flat_space, surrogate=None, seed=0)
    study.enqueue({"x": 1.0, "y": 1.0})
    told = study.add({"x": 1.0, "y": 1.0}, 0.5, skip_if_known=True)
    assert told.number == 0 and told.state is TrialState.COMPLETE and len(study.trials) == 1


@pytest.mark.parametrize(
    ("result", "message"),
    [("bad", "add(): the result is not usable: the objective must return a number"),
     ({"loss": None}, ("add(): the result is not usable: the objective's 'loss' must be a "
                      "number, got NoneType"))],
)
def test_an_unusable_added_result_raises_and_records_nothing(flat_space, result, message):
    """It was recorded as a failed trial, with a message about "the objective"."""
    study = Study(flat_space, surrogate=None, seed=0)
    with pytest.raises(InvalidResultError, match=re.escape(message)):
        study.add({"x": 1.0, "y": 2.0}, result)
    assert len(study.trials) == 0


def test_a_short_name_gets_the_full_names_it_may_mean():
    """``{classifier: svm, C: 10}`` said only "unknown hyperparameters ['C']"."""
    import pytest

    from ensembo import spaces
    from ensembo.errors import SpaceError

    space = spaces.load("cash-classification")
    with pytest.raises(SpaceError, match=r"'C' may mean classifier:logistic-regression:C, "
                       r"classifier:svm:C"):
        space.complete({"classifier": "svm", "C": 10})
    with pytest.raises(SpaceError, match=r"'clasifier:svm:C' may mean classifier:svm:C$"):
        space.complete({"clasifier:svm:C": 10})


def test_add_says_which_values_it_filled_in(tree_space, caplog):
    """A warm start from a table lacking a column recorded its results against the
    defaults without a word."""
    study = Study(tree_space, surrogate=None, seed=0)
    with caplog.at_level("WARNING", logger="ensembo.study"):
        study.add({"branch": "b", "steps": 3, "shared": 0.1, "only_b": 0.2}, 0.5)
        assert not caplog.records
        study.add({"branch": "b", "steps": 4}, 0.4)
    (record,) = caplog.records
    shared = study.trials[1].config["shared"]
    assert record.getMessage() == (
        "add(): the configuration leaves out active hyperparameters only_b, shared; trial 1 "
        f"records the result with their defaults (only_b=0.5, shared={shared!r})"
    )


def test_add_does_not_warn_about_single_valued_hyperparameters_left_out(caplog):
    """A constant or a one-choice categorical is not the caller's to choose: every
    warm-start row warned about it (cash-classification's adaboost base among them)."""
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0},
                              "version": {"type": "constant", "value": "v2"},
                              "base": {"type": "categorical", "choices": ["tree"]}}},
                  surrogate=None)
    with caplog.at_level("WARNING", logger="ensembo.study"):
        added = study.add({"x": 0.3}, 1.0)
    assert added.config == {"x": 0.3, "version": "v2", "base": "tree"} and not caplog.records
