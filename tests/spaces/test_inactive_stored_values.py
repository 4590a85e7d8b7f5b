"""A study stored before 'ne' required its parent active (759a049) holds values for
hyperparameters its space now makes inactive ({'model': 'lr', 'not_poly': 5}). It loads
with those values left out and one warning; finished trials keep them in the file, trials
run again are run and stored without them. rf and gp failed on
the first ask ('not_poly' has a value (5) but is not active), random search and TPE
learned from them."""

from __future__ import annotations

import json
import logging
import random
import sqlite3

import numpy as np
import pytest

from ensembo import spaces
from ensembo.spaces.inactive_values import inactive_values
from ensembo.spaces.quantize import step_of
from ensembo.study import Study

NOT_POLY = {
    "name": "notpoly",
    "params": {
        "model": {
            "type": "choice",
            "options": {
                "svm": {"kernel": {"type": "categorical", "choices": ["rbf", "poly", "linear"]}},
                "lr": {"C": {"type": "float", "low": 0.1, "high": 10, "log": True}},
            },
        },
        "not_poly": {
            "type": "int", "low": 1, "high": 9, "when": {"model:svm:kernel": {"ne": "poly"}},
        },
        "x": {"type": "float", "low": 0, "high": 1},
    },
}

LR = {"model": "lr", "model:lr:C": 1.0, "x": 0.25}


def loss(config):
    return config["x"] + config.get("not_poly", 5) / 10


def stored_as_before(path, configs, document=NOT_POLY, running=0):
    """A study file whose trials hold ``configs`` as an earlier version stored them, the
    last ``running`` of them left running (their process died)."""
    study = Study(spaces.load(document), storage=path, surrogate=None, seed=3, n_initial=2)
    for number, config in enumerate(configs):
        first = next(iter(config))
        study.enqueue({first: config[first]})  # its stored config is written below
        trial = study.ask()
        if number < len(configs) - running:
            study.tell(trial, loss(config))
    study.close()
    with sqlite3.connect(path) as connection:
        for number, config in enumerate(configs):
            connection.execute("UPDATE trials SET config = ? WHERE number = ?",
                               (json.dumps(config), number))


def stored_configs(path):
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT config FROM trials ORDER BY number").fetchall()
    return [json.loads(config) for (config,) in rows]


def test_values_made_inactive_are_read_without_them_and_a_surrogate_can_ask(tmp_path, caplog):
    path = tmp_path / "old.db"
    old = [
        {**LR, "not_poly": 5},
        {"model": "svm", "model:svm:kernel": "rbf", "not_poly": 3, "x": 0.5},
        {**LR, "x": 0.75, "not_poly": 2},
        {"model": "svm", "model:svm:kernel": "poly", "x": 0.1},
    ]
    stored_as_before(path, old)
    with caplog.at_level(logging.WARNING):
        study = Study.load(path, surrogate="rf", acquisition_optimizer="local-search")
    warnings = inactive_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert str(path) in warnings[0]
    assert "2 stored trials" in warnings[0]
    assert "(not_poly)" in warnings[0]
    assert "before ensembo's 'ne' required its parent active (8 Dec 2026)" in warnings[0]
    assert [dict(trial.config) for trial in study.history] == [
        LR, old[1], {**LR, "x": 0.75}, old[3]]
    study.optimize(loss, n_trials=2)  # the rf surrogate encodes every trial
    assert len(study.history) == 6
    assert stored_configs(path)[:4] == old  # the recorded data is kept


def inactive_warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if "hold values for hyperparameters inactive" in r.getMessage()]


def test_a_trial_run_again_is_stored_without_the_values_and_the_warning_says_so(
    tmp_path, caplog
):
    """A trial left running is run again with its config as read, and stored so: the
    warning must not say the file keeps the values of every trial."""
    path = tmp_path / "old.db"
    old = [{**LR, "not_poly": 5}, {**LR, "x": 0.75, "not_poly": 2}]
    stored_as_before(path, old, running=1)
    with caplog.at_level(logging.WARNING):
        study = Study.load(path, surrogate=None)
    seen = []
    study.optimize(lambda config: (seen.append(dict(config)), loss(config))[1], n_trials=1)
    study.close()
    assert seen == [{**LR, "x": 0.75}]
    assert stored_configs(path) == [old[0], {**LR, "x": 0.75}]
    (warning,) = inactive_warnings(caplog)
    assert warning.endswith(
        "they are read without them: finished trials keep them in the file, trials run "
        "again are run and stored without them"
    )


def test_the_warning_names_the_ne_change_only_for_a_space_with_ne(tmp_path, caplog):
    """Values stale for another reason (a space edited since) are not blamed on 'ne'."""
    path = tmp_path / "gt.db"
    document = {"name": "gt", "params": {
        "n": {"type": "int", "low": 1, "high": 10},
        "x": {"type": "float", "low": 0, "high": 1},
        "big": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 5}}},
    }}
    stored_as_before(path, [{"n": 3, "x": 0.5, "big": 0.5}], document)
    with caplog.at_level(logging.WARNING):
        Study.load(path, surrogate=None).close()
    (warning,) = inactive_warnings(caplog)
    assert (
        "1 stored trials hold values for hyperparameters inactive in their configurations "
        "(big); they are read without them"
    ) in warning
    assert "'ne'" not in warning


def test_a_stored_config_with_another_problem_is_left_as_it_was(tmp_path):
    path = tmp_path / "old.db"
    out_of_range = {**LR, "x": 3.0, "not_poly": 12}  # not_poly inactive, and x out of range
    stored_as_before(path, [{**LR, "not_poly": 5}, out_of_range])
    study = Study.load(path, surrogate=None)
    assert dict(study.history[0].config) == LR
    assert dict(study.history[1].config) == out_of_range


@pytest.mark.parametrize("config", [
    {**LR, "not_poly": 5, "x": 3.0},  # another value out of range
    {**LR, "not_poly": 5, "y": 1},  # a name the space lacks
    {"model": "lr", "not_poly": 5, "x": 0.5},  # an active hyperparameter without a value
    {**LR, "not_poly": 5, "model:lr:C": True},  # a boolean for a number
    {**LR, "model": ["lr"], "not_poly": 5},  # a damaged parent value
    {"model": "knn", "not_poly": 5, "x": 0.5},  # a parent's value the space lacks
])
def test_only_configs_whose_sole_problem_is_inactive_values_are_changed(config):
    space = spaces.load(NOT_POLY)
    assert inactive_values(space, [config]).positions == ()


def test_valid_configs_and_spaces_without_conditions_change_nothing():
    space = spaces.load(NOT_POLY)
    assert inactive_values(space, space.sample(200, seed=0)).positions == ()
    flat = spaces.load({"params": {"x": {"type": "float", "low": 0, "high": 1}}})
    assert inactive_values(flat, [{"x": 0.5, "y": 1}]).positions == ()


def test_stale_values_under_a_nested_choice_and_a_numeric_parent():
    space = spaces.load({"params": {
        "n": {"type": "int", "low": 1, "high": 10},
        "big": {"type": "float", "low": 0, "high": 1, "when": {"n": {"gt": 5}}},
        "deep": {"type": "float", "low": 0, "high": 1, "when": {"big": {"gt": 0.5}}},
    }})
    found = inactive_values(space, [
        {"n": 3, "big": 0.9, "deep": 0.2},  # both stale: deep's parent is itself inactive
        {"n": 7, "big": 0.9, "deep": 0.2},
        {"n": 7, "big": 0.1, "deep": 0.2},
    ])
    assert found.positions == (0, 2)
    assert found.configs == ({"n": 3}, {"n": 7, "big": 0.1})
    assert found.names == ("big", "deep")


QUANTIZED_FORBIDDEN = {
    "params": {
        "model": {"type": "choice", "options": {
            "svm": {"kernel": {"type": "categorical", "choices": ["rbf", "poly"]},
                    "C": {"type": "float", "low": 0, "high": 10, "q": 0.5}},
            "knn": {"k": {"type": "int", "low": 1, "high": 20}}}},
        "x": {"type": "float", "low": 0, "high": 1, "when": {"model:svm:kernel": {"ne": "poly"}}},
    },
    "forbidden": [{"model:svm:kernel": "poly", "model:svm:C": 10.0}],
}


@pytest.mark.parametrize("document", [NOT_POLY, QUANTIZED_FORBIDDEN, "cash-classification"])
def test_valid_rows_says_what_is_valid_says(document):
    space = spaces.load(document)
    rng = random.Random(0)
    configs = []
    for config in space.sample(150, seed=1):
        other = space.sample(1, seed=rng.randrange(10**6))[0]
        changed, draw = dict(config), rng.random()
        if draw < 0.3:
            changed.update({k: v for k, v in other.items() if rng.random() < 0.4})
        elif draw < 0.4:
            changed.pop(rng.choice(list(changed)))
        elif draw < 0.5:
            changed[rng.choice(list(changed))] = True
        elif draw < 0.6:
            name = rng.choice(list(changed))
            changed[name] = 1e9 if isinstance(changed[name], int | float) else "zz"
        elif draw < 0.65:
            changed["nope"] = 1
        configs.append(changed)
    # is_valid snaps a stepped value beyond its bound onto it; encode refuses it
    expected = np.array([space.is_valid(config) and not stepped_out_of_range(space, config)
                         for config in configs])
    assert 0 < expected.sum() < len(configs)
    assert space.valid_rows(configs).tolist() == expected.tolist()


def stepped_out_of_range(space, config):
    return any(
        step_of(space.hyperparameter(name)) is not None
        and not space.hyperparameter(name).lower <= value <= space.hyperparameter(name).upper
        for name, value in config.items() if name in space.names and isinstance(value, float)
    )


def test_valid_rows_refuses_a_forbidden_combination():
    space = spaces.load(QUANTIZED_FORBIDDEN)
    forbidden = {"model": "svm", "model:svm:kernel": "poly", "model:svm:C": 10.0}
    assert not space.is_valid(forbidden)
    assert space.valid_rows([forbidden, {**forbidden, "model:svm:C": 9.5}]).tolist() == [
        False, True]
