"""Distinct suggestions on spaces whose encoding is wider than their hyperparameter count."""

from __future__ import annotations

import numpy as np
import pytest

import ensembo
from ensembo import Study
from ensembo.execution import DistinctConfigs
from ensembo.trials import History

ONE_HOT_DOC = {
    "params": {
        "x": {"type": "float", "low": 0.0, "high": 1.0},
        "c": {"type": "categorical", "choices": ["a", "b", "c"]},
    }
}


def one_hot_space():
    space = ensembo.spaces.load(ONE_HOT_DOC).with_encoding("onehot")
    assert space.encoded_dimension > space.dimension  # the case this file is about
    return space


@pytest.mark.parametrize("surrogate", ["gp", "rf", "tpe", None])
def test_a_study_on_a_one_hot_space_suggests_distinct_configs(surrogate):
    study = Study(one_hot_space(), surrogate=surrogate, n_initial=3, seed=0)
    study.optimize(lambda c: c["x"] + (c["c"] == "b"), n_trials=5)
    configs = [tuple(sorted(t.config.items())) for t in study.trials]
    assert len(configs) == 5 and len(set(configs)) == 5


def test_distinct_configs_admits_on_a_one_hot_space_without_pending_trials():
    space = one_hot_space()
    distinct = DistinctConfigs(space, History())
    config = space.sample(1, np.random.default_rng(0))[0]
    assert distinct.admit(config)
    assert not distinct.admit(config)
