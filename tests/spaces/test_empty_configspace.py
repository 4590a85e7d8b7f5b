"""An empty ConfigSpace is refused when it is loaded, naming the space: it was accepted
and a study crashed at its first model ("cannot reshape array of size 0 into shape
(0)"), while the DSL refuses an empty ``params``."""

from __future__ import annotations

import json

import pytest
from ConfigSpace import ConfigurationSpace

import ensembo
from ensembo import spaces
from ensembo.errors import SpaceError


def test_an_empty_configspace_is_refused_naming_it():
    with pytest.raises(SpaceError, match=r"^sweep: has no hyperparameters"):
        spaces.load(ConfigurationSpace(name="sweep"))


def test_a_serialized_empty_configspace_is_refused(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(ConfigurationSpace(name="sweep").to_serialized_dict()))
    with pytest.raises(SpaceError, match="has no hyperparameters"):
        spaces.load(path)


def test_a_study_over_an_empty_configspace_is_refused_before_it_runs():
    with pytest.raises(SpaceError, match="has no hyperparameters"):
        ensembo.Study(ConfigurationSpace(), seed=0, surrogate="rf")
