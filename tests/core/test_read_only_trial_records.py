"""A trial's ``config`` and ``info`` are read-only records of the study.

``study.best_trial.config`` was the study's own dict: changing it changed the best
trial, ``trials_dataframe()`` and what the surrogate fitted on, but never the study
file, and a changed value outside the space made the next ``optimize`` fail.
"""

import copy
import json
import pickle

import attrs
import pytest
import yaml

import ensembo
from ensembo.trials import Evaluation, History, Trial, TrialState

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


def _tagged(config):
    return Evaluation(loss=config["x"], info={"tag": ["a"], "nested": {"n": 1}})


@pytest.fixture
def study():
    study = ensembo.Study(SPACE, surrogate=None, seed=0)
    study.optimize(_tagged, n_trials=4)
    return study


@pytest.mark.parametrize("change", [
    lambda c: c.__setitem__("x", 0.75),
    lambda c: c.__delitem__("x"),
    lambda c: c.update(x=0.75),
    lambda c: c.pop("x"),
    lambda c: c.popitem(),
    lambda c: c.clear(),
    lambda c: c.setdefault("y", 1.0),
    lambda c: c.__ior__({"x": 0.75}),
])
def test_the_config_of_a_studys_trial_cannot_be_changed_in_place(study, change):
    best = dict(study.best_trial.config)
    with pytest.raises(TypeError, match=r"read-only.*dict\(trial.config\)"):
        change(study.best_trial.config)
    with pytest.raises(TypeError, match="read-only"):
        change(study.trials[1].config)
    assert study.best_trial.config == best
    assert study.trials_dataframe()["x"].tolist() == [t.config["x"] for t in study.trials]


def test_info_cannot_be_changed_in_place_nor_its_nested_lists_and_dicts(study):
    info = study.best_trial.info
    with pytest.raises(TypeError, match="read-only"):
        info["tag"] = "b"
    with pytest.raises(TypeError, match="read-only"):
        info["tag"].append("b")
    with pytest.raises(TypeError, match="read-only"):
        info["tag"] += ["b"]
    with pytest.raises(TypeError, match="read-only"):
        info["nested"]["n"] = 2
    assert study.best_trial.info == {"tag": ["a"], "nested": {"n": 1}}


def test_a_changed_copy_does_not_reach_the_study_and_the_next_optimize_works(study):
    config = dict(study.trials[1].config)
    config["x"] = 42.0
    other = study.trials[1].config.copy()
    other["x"] = 43.0
    assert type(config) is dict and type(other) is dict
    study.optimize(_tagged, n_trials=2)
    assert len(study.trials) == 6 and study.trials[1].config["x"] <= 1.0


def test_a_record_is_still_a_dict_for_json_yaml_equality_pickle_copies_and_evolve(study):
    trial = study.best_trial
    config, info = trial.config, trial.info
    assert isinstance(config, dict) and isinstance(info["tag"], list)
    assert config == dict(config) and info["tag"] == ["a"] and repr(config) == repr(dict(config))
    assert json.loads(json.dumps(info)) == {"tag": ["a"], "nested": {"n": 1}}
    assert yaml.safe_load(yaml.safe_dump({"config": config, "info": info})) == {
        "config": dict(config), "info": {"tag": ["a"], "nested": {"n": 1}}}
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(trial, protocol=protocol))
        assert back == trial
        with pytest.raises(TypeError, match="read-only"):
            back.info["tag"].append("b")
    for copied in (copy.copy(config), copy.deepcopy(config)):
        assert copied == config
        with pytest.raises(TypeError, match="read-only"):
            copied["x"] = 0.75
    evolved = attrs.evolve(trial, loss=9.0)
    assert evolved.config == config and evolved.info == info
    with pytest.raises(TypeError, match="read-only"):
        evolved.config["x"] = 0.75


def test_the_objective_and_the_caller_of_ask_get_plain_dicts_to_change(study):
    seen = []

    def objective(config):
        config["x"] = 0.5  # its own copy
        seen.append(type(config))
        return 0.5

    study.optimize(objective, n_trials=1)
    assert seen == [dict] and study.trials[-1].config["x"] != 0.5
    asked = study.ask()
    asked.config["n_jobs"] = 4  # the caller's copy
    assert "n_jobs" not in study.trials[asked.number].config


def test_a_history_keeps_read_only_records_of_trials_made_with_plain_dicts():
    history = History()
    trial = Trial(number=0, config={"x": 0.5}, state=TrialState.RUNNING)
    unpickled_old = object.__new__(Trial)  # as a pickle from before: plain dicts
    for name in attrs.fields_dict(Trial):
        object.__setattr__(unpickled_old, name, getattr(trial, name))
    object.__setattr__(unpickled_old, "config", {"x": 0.5})
    object.__setattr__(unpickled_old, "info", {"tags": ["a"]})
    history.put(unpickled_old)
    with pytest.raises(TypeError, match="read-only"):
        history[0].config["x"] = 0.75
    with pytest.raises(TypeError, match="read-only"):
        history[0].info["tags"].append("b")


def _holding_itself():
    cycle = []
    cycle.append(cycle)
    return cycle


def _nested(depth):
    outer = inner = []
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


@pytest.mark.parametrize("value", [_holding_itself(), _nested(5000)], ids=["cycle", "deep"])
def test_info_holding_itself_or_nested_too_deep_is_kept_as_given_by_an_in_memory_study(value):
    """Info with no JSON form is kept as given by an in-memory study (ask-tell guide);
    making it read-only all the way down raised RecursionError out of tell."""
    study = ensembo.Study(SPACE, surrogate=None, seed=0)
    trial = study.ask()
    told = study.tell(trial, {"loss": 0.5, "info": {"value": value, "tag": "t"}})
    assert told.state is TrialState.COMPLETE and study.trials[0].info["value"] is value
    with pytest.raises(TypeError, match="read-only"):
        study.trials[0].info["tag"] = "changed"


def test_an_objective_returning_info_that_holds_itself_completes_its_trial():
    def objective(config):
        return {"loss": config["x"], "info": {"value": _holding_itself()}}

    study = ensembo.Study(SPACE, surrogate=None, seed=0).optimize(objective, n_trials=2)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 2


def test_nested_read_only_info_is_shared_not_rebuilt_when_the_trial_changes_state():
    """Each change of state re-made the info and rebuilt its every nested list (loading
    3,000 trials with list-valued info took 60% longer than before records were
    read-only); a read-only list cannot change, so it is shared."""
    from ensembo.read_only import ReadOnlyList
    from ensembo.trials import Trial

    trial = Trial(number=0, config={"x": 1.0}, info={"curve": [1.0, 2.0], "pairs": [[1, 2]]})
    assert type(trial.info["pairs"][0]) is ReadOnlyList
    failed = trial.with_failure("boom", 1.0)
    assert failed.info["curve"] is trial.info["curve"]
    assert failed.info["pairs"] is trial.info["pairs"]
