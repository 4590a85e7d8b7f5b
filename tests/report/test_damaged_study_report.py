"""``ensembo report`` on a study file edited by hand names what is wrong, as resume
does, instead of failing deep in the report as a bug."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ensembo.cli import main
from ensembo.errors import StorageError
from ensembo.report.data import compute_report


@pytest.fixture
def study_copy(stored_study, tmp_path):
    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_study[0]) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def edit_components(path, kind, spec):
    with sqlite3.connect(path) as connection:
        meta = json.loads(connection.execute("SELECT value FROM meta").fetchone()[0])
        meta["components"][kind] = spec
        connection.execute("UPDATE meta SET value = ?", (json.dumps(meta),))


def test_a_missing_trial_row_is_named_as_resume_names_it(study_copy, tmp_path, capsys):
    with sqlite3.connect(study_copy) as connection:
        connection.execute("DELETE FROM trials WHERE number = 3")
    with pytest.raises(StorageError, match=r"not numbered 0, 1, 2, \.\.\. \(trial number 4 "
                                           "leaves a gap; next expected is 3\\)"):
        compute_report(study_copy)
    assert main(["report", "--no-plots", str(study_copy), "--out", str(tmp_path / "r")]) != 0
    error = capsys.readouterr().err
    assert f"{study_copy}: the stored trials are not numbered" in error
    assert "looks like a bug" not in error
    assert main(["resume", "--no-progress", str(study_copy)]) != 0
    assert "next expected is 3" in capsys.readouterr().err  # the same words


def test_a_component_stored_as_a_plain_name_is_reported_by_that_name(study_copy, tmp_path):
    edit_components(study_copy, "surrogate", "nosuch")
    edit_components(study_copy, "ensemble_strategy", "best")
    data = compute_report(study_copy)
    assert data.components["surrogate"] == {"name": "nosuch"}
    assert data.replay_note is None and data.members  # the strategy was built from its name
    assert main(["report", "--no-plots", str(study_copy), "--out", str(tmp_path / "r")]) == 0
    assert "| surrogate | nosuch |" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.parametrize("spec", [3, ["gp"], {"kernel": "laplace"}])
def test_a_component_that_is_no_spec_is_named_with_its_key(study_copy, tmp_path, capsys, spec):
    edit_components(study_copy, "surrogate", spec)
    message = f"{study_copy}: the stored settings' components.surrogate is {json.dumps(spec)}"
    with pytest.raises(StorageError, match="not a component name") as refused:
        compute_report(study_copy)
    assert str(refused.value).startswith(message)
    assert main(["report", "--no-plots", str(study_copy), "--out", str(tmp_path / "r")]) != 0
    assert message in capsys.readouterr().err
