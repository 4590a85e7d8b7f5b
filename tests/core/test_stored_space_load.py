"""A stored study's space as an earlier version stored it: one this version reads is
continued, and one it cannot load is named as such, not as "another space"."""

from __future__ import annotations

import ConfigSpace as CS
import pytest

import ensembo
from ensembo.cli import main
from ensembo.errors import StorageError
from ensembo.storage.sqlite import SQLiteStorage
from ensembo.trials import Trial, TrialState


def _stepped(default: int | None = None) -> CS.ConfigurationSpace:
    configspace = CS.ConfigurationSpace(seed=1)
    configspace.add(CS.UniformIntegerHyperparameter("x", 0, 10, default_value=default,
                                                    meta={"q": 2}))
    return configspace


def _stored(path, edit, trial: Trial | None = None) -> None:
    """A two-trial study at ``path`` whose stored space ``edit`` changed by hand."""
    with ensembo.Study(_stepped(), surrogate="rf", n_initial=2, seed=0, storage=path) as study:
        study.optimize(lambda config: float(config["x"]), n_trials=2)
    storage = SQLiteStorage(path)
    meta = storage.read_meta()
    edit(meta["space"]["configspace"]["hyperparameters"][0])
    storage.write_meta(meta)
    if trial is not None:
        storage.put_trial(trial)
    storage.close()


def test_a_study_stored_with_an_implied_off_grid_default_is_loaded_resumed_and_reported(
    tmp_path,
):
    """Stored before 7 Dec 2026 as ConfigSpace implied it (5 on [0, 10] with a step of
    2), and run as the ``default`` design's first trial: this version refused the space
    ("the default 5 is not on the grid"), so Study.load, a resume and ``ensembo report``
    failed, and the remedy it named (default_value=4) was "another space"."""
    path = tmp_path / "study.db"
    _stored(path, lambda hp: hp.update(default_value=5),
            Trial(number=2, config={"x": 5}, state=TrialState.COMPLETE, loss=5.0))
    loaded = ensembo.Study.load(path)
    assert [trial.config["x"] for trial in loaded.trials][2] == 5
    assert loaded.space.default() == {"x": 4}
    loaded.close()
    for configspace in (_stepped(), _stepped(default=4)):
        with ensembo.Study(configspace, surrogate="rf", n_initial=2, seed=0,
                           storage=path) as study:
            study.optimize(lambda config: float(config["x"]), n_trials=1)
    assert len(ensembo.Study.load(path).trials) == 5
    assert main(["report", str(path), "--out", str(tmp_path / "report"), "--no-plots"]) == 0


def test_a_stored_space_this_version_cannot_load_is_named_with_its_problem(tmp_path):
    """It was refused as "holds another study: another space", hiding why."""
    path = tmp_path / "study.db"
    _stored(path, lambda hp: hp["meta"].update(q=0))
    with pytest.raises(StorageError) as raised:
        ensembo.Study(_stepped(), surrogate="rf", n_initial=2, seed=0, storage=path)
    message = str(raised.value)
    assert "another space" not in message
    assert "whose stored space this version of ensembo cannot load" in message
    assert "space: x.meta.q: a step is an integer in (0, 10], got 0)" in message
