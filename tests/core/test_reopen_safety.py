"""A refused re-open of a stored study leaves the file as it was: every check comes
before the first write, so the study can still be resumed with its own arguments."""

from __future__ import annotations

import contextlib
import sqlite3

import numpy as np
import pytest

from ensembo import Evaluation, Study
from ensembo.errors import StorageError

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
TARGETS = np.array([0, 1, 0, 1, 1])


def quadratic(config):
    return (config["x"] - 0.3) ** 2


def stored_rows(path) -> tuple[list, list]:
    """The meta and trials tables, as stored."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        meta = connection.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        trials = connection.execute("SELECT * FROM trials ORDER BY number").fetchall()
    return meta, trials


def test_targets_added_to_a_study_without_predictions_are_refused_untouched(tmp_path):
    """The refused open stored the targets and 'posthoc' first: Study.load then failed
    for good, and the original arguments were refused ("pass validation_targets=")."""
    path = tmp_path / "study.db"
    Study(SPACE, surrogate=None, storage=path).optimize(quadratic, 3).close()
    before = stored_rows(path)
    with pytest.raises(StorageError, match=r"stored without validation targets .*\(0, 1, 2\)"):
        Study(SPACE, surrogate=None, storage=path, ensemble="posthoc", loss="zero-one",
              validation_targets=TARGETS)
    assert stored_rows(path) == before
    Study.load(path).close()
    assert len(Study(SPACE, surrogate=None, storage=path).trials) == 3


def test_a_strategy_refusing_the_stored_trials_leaves_the_settings_stored(tmp_path):
    """Targets stored, trials without predictions ('best' needs none): reopened with
    'posthoc', the strategy refuses the trials after the new settings were written."""
    path = tmp_path / "study.db"
    first = Study(SPACE, surrogate=None, storage=path, loss="zero-one",
                  validation_targets=TARGETS)
    first.tell(first.ask(), Evaluation(loss=0.4))
    running = first.ask()
    first.close()
    before = stored_rows(path)
    with pytest.raises(ValueError, match="needs validation predictions"):
        Study(SPACE, surrogate=None, storage=path, ensemble="posthoc", loss="zero-one",
              validation_targets=TARGETS)
    assert stored_rows(path) == before  # settings, and the running trial not yet interrupted
    resumed = Study.load(path)
    assert resumed.components()["ensemble_strategy"] == {"name": "best"}
    assert resumed.ask().number == running.number


def test_another_space_names_what_differs(tmp_path):
    """The refusal said only "another space", however large the space."""
    path = tmp_path / "study.db"
    Study(SPACE, surrogate=None, storage=path).close()
    other = {"params": {"x": {"type": "float", "low": 0.0, "high": 2.0},
                        "n": {"type": "int", "low": 1, "high": 5}}}
    with pytest.raises(StorageError, match=r"another space \(n added; x: .*upper 1\.0 -> 2\.0\)"):
        Study(other, surrogate=None, storage=path)
    with pytest.raises(StorageError, match=r"another space \(x removed; z added\)"):
        Study({"params": {"z": {"type": "float", "low": 0.0, "high": 1.0}}}, storage=path)
