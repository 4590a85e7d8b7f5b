"""A study holds a lock and its storage: pickle and deepcopy say so, naming Study and
the way to move a study (a file and Study.load), not "cannot pickle '_thread.RLock'"."""

from __future__ import annotations

import copy
import pickle

import pytest

from ensembo import Study


@pytest.mark.parametrize("duplicate", [pickle.dumps, copy.deepcopy])
def test_pickling_or_deep_copying_a_study_names_study_and_study_load(flat_space, duplicate):
    study = Study(flat_space, surrogate=None, seed=0)
    study.optimize(lambda config: config["x"] ** 2, n_trials=2)
    with pytest.raises(TypeError, match=r"a Study cannot be pickled .*storage=.*Study\.load"):
        duplicate(study)


def test_a_stored_study_is_reopened_with_load_instead(flat_space, tmp_path):
    path = tmp_path / "study.db"
    with Study(flat_space, surrogate=None, seed=0, storage=path) as study:
        study.optimize(lambda config: config["x"] ** 2, n_trials=2)
        with pytest.raises(TypeError, match="Study.load"):
            pickle.dumps(study)
    with Study.load(path) as again:
        assert len(again.trials) == 2
