"""A space's own ``meta`` travels with a stored study, and a ``meta`` a study file cannot
keep is refused before the file is made, named by its hyperparameter."""

from __future__ import annotations

import ConfigSpace as CS
import pytest

import ensembo
from ensembo.errors import SpaceError
from ensembo.storage.sqlite import SQLiteStorage


def _space(meta=None, x_meta=None) -> CS.ConfigurationSpace:
    configspace = CS.ConfigurationSpace(seed=1, meta=meta)
    configspace.add(CS.Float("x", (0.0, 1.0), meta=x_meta))
    return configspace


def _run(path, space) -> None:
    with ensembo.Study(space, surrogate="rf", n_initial=2, seed=0, storage=path) as study:
        study.optimize(lambda config: config["x"], n_trials=2)


def test_a_loaded_study_keeps_its_spaces_meta(tmp_path):
    """ConfigSpace's serialization drops the space's ``meta``: a loaded study had none."""
    path = tmp_path / "s.db"
    _run(path, _space(meta={"owner": "lab", "tags": ["a", "b"]}))
    with ensembo.Study.load(path) as study:
        assert study.space.configspace.meta == {"owner": "lab", "tags": ["a", "b"]}
        study.optimize(lambda config: config["x"], n_trials=1)
        assert len(study.trials) == 3


def test_a_study_stored_without_the_spaces_meta_is_continued_with_it(tmp_path):
    """A study file written before the space kept its ``meta`` is the same space."""
    path = tmp_path / "s.db"
    _run(path, _space())
    _run(path, _space(meta={"owner": "lab"}))  # refused as another space if meta counted
    storage = SQLiteStorage(path)
    assert len(storage.trials()) == 4
    storage.close()


@pytest.mark.parametrize(("meta", "x_meta", "place"), [
    ({"made": object()}, None, r"the space's meta\['made'\] \(an object"),
    (None, {"unit": {1, 2}}, r"x\.meta\['unit'\] \(a set"),
])
def test_a_meta_a_study_file_cannot_keep_is_named_before_the_file_is_made(
    tmp_path, meta, x_meta, place
):
    path = tmp_path / "s.db"
    with pytest.raises(SpaceError, match=place):
        ensembo.Study(_space(meta=meta, x_meta=x_meta), storage=path)
    assert not path.exists()
    ensembo.Study(_space(meta=meta, x_meta=x_meta)).optimize(lambda c: c["x"], n_trials=1)
