"""A space whose ``meta`` holds a numpy array is written to the study file (as a list),
and continuing that study compared the array with the stored list: numpy's "truth value
of an array ... is ambiguous" ValueError, so the study could never be resumed."""

from __future__ import annotations

import ConfigSpace as CS
import numpy as np
import pytest

import ensembo
from ensembo.errors import StorageError


def _space(meta=None, x_meta=None) -> CS.ConfigurationSpace:
    configspace = CS.ConfigurationSpace(seed=1, meta=meta)
    configspace.add(CS.Float("x", (0.0, 1.0), meta=x_meta))
    return configspace


def _run(path, space) -> int:
    with ensembo.Study(space, surrogate=None, seed=0, storage=path) as study:
        study.optimize(lambda config: config["x"], n_trials=2)
        return len(study.trials)


@pytest.mark.parametrize(("meta", "x_meta"), [
    ({"weights": np.arange(3)}, None),  # the space's own meta, stored since 660cb4d
    (None, {"grid": np.arange(3)}),  # a hyperparameter's
])
def test_a_study_whose_meta_holds_an_array_is_continued(tmp_path, meta, x_meta):
    path = tmp_path / "s.db"
    assert _run(path, _space(meta, x_meta)) == 2
    assert _run(path, _space(meta, x_meta)) == 4


def test_another_array_in_a_hyperparameters_meta_is_still_another_space(tmp_path):
    path = tmp_path / "s.db"
    _run(path, _space(x_meta={"grid": np.arange(3)}))
    with pytest.raises(StorageError, match=r"another space \(x: meta\['grid'\] "
                       r"\[0, 1, 2\] -> \[0, 1, 3\]\)"):
        _run(path, _space(x_meta={"grid": np.array([0, 1, 3])}))
