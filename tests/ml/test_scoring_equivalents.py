"""A default written out is the same setting (docs/guide/experiments.md, "Running the file
again"): a data study continues when ``data.validation`` or ``loss`` is written in another
but equivalent form, also one stored by an earlier version, which recorded them as
written; a setting that really differs is still refused, named."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from ensembo.cli import main
from ensembo.ml.data_run import scoring_settings
from ensembo.stored_study import SCORING

SPACE = """\
name: tiny-tree
estimator: sklearn.tree.DecisionTreeClassifier
params:
  max_depth: {type: int, low: 1, high: 6}
"""

EXPERIMENT = """\
space: tiny.space.yaml
data: {dataset: iris, VALIDATION}
surrogate: null
budget: BUDGET
seed: 1
storage: s.db
"""


def _experiment(folder: Path, validation: str | None = None, loss: str | None = None,
                budget: int = 2, name: str = "exp.yaml") -> Path:
    (folder / "tiny.space.yaml").write_text(SPACE)
    text = EXPERIMENT.replace("BUDGET", str(budget))
    text = text.replace(", VALIDATION", "" if validation is None else f", validation: {validation}")
    path = folder / name
    path.write_text(text + ("" if loss is None else f"loss: {loss}\n"))
    return path


def _run(path: Path) -> int:
    return main(["run", str(path), "--no-progress"])


def _as_an_earlier_version_stored(db: Path, validation: object, loss: object) -> None:
    """The scoring record as versions before this fix wrote it: the validation and the
    loss as written (no loss key: None)."""
    connection = sqlite3.connect(db)
    with connection:
        (text,) = connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        meta = json.loads(text)
        scoring = meta["metadata"][SCORING]
        scoring["data"]["validation"] = validation
        scoring["loss"] = loss
        connection.execute("UPDATE meta SET value = ? WHERE key = 'study'", (json.dumps(meta),))
    connection.close()


EQUIVALENTS = [
    # (first run's validation, loss), (the rerun's)
    (("3", None), ("{scheme: kfold, folds: 3}", None)),
    (("3", None), ("{scheme: kfold, folds: 3, repeats: 1, stratify: true}", None)),
    (("{scheme: kfold, folds: 3}", None), ("3", None)),
    ((None, None), ("{scheme: holdout, ratio: 0.33}", None)),
    ((None, None), ("0.33", None)),
    (("3", None), ("3", "zero-one")),
    (("3", None), ("3", "{name: zero-one}")),
    (("3", "zero-one"), ("3", None)),
]


@pytest.mark.parametrize(("first", "again"), EQUIVALENTS)
def test_an_equivalent_validation_or_loss_continues_the_study(tmp_path, capsys, caplog,
                                                              first, again):
    assert _run(_experiment(tmp_path, *first)) == 0
    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        assert _run(_experiment(tmp_path, *again, budget=3, name="again.yaml")) == 0, \
            capsys.readouterr().err
    assert "scored otherwise" not in capsys.readouterr().err
    assert "loss" not in caplog.text  # not reported as a changed setting either


@pytest.mark.parametrize(
    ("stored_validation", "stored_loss", "again"),
    [
        (3, None, ("{scheme: kfold, folds: 3}", "zero-one")),
        (3, None, ("3", "{name: zero-one}")),
        ({"scheme": "kfold", "folds": 3}, "zero-one", ("3", None)),
        (0.33, {"name": "zero-one"}, (None, None)),
    ],
)
def test_a_study_stored_with_the_settings_as_written_continues(tmp_path, capsys,
                                                               stored_validation,
                                                               stored_loss, again):
    assert _run(_experiment(tmp_path, json.dumps(stored_validation))) == 0
    _as_an_earlier_version_stored(tmp_path / "s.db", stored_validation, stored_loss)
    capsys.readouterr()
    assert _run(_experiment(tmp_path, *again, budget=3, name="again.yaml")) == 0, \
        capsys.readouterr().err


@pytest.mark.parametrize(
    ("first", "again", "difference"),
    [
        (("3", None), ("4", None), "data.validation.folds 3 stored, 4 given"),
        (("3", None), ("{scheme: kfold, folds: 3, stratify: false}", None),
         "data.validation.stratify True stored, False given"),
        ((None, None), ("3", None),
         ("data.validation {'scheme': 'holdout', 'ratio': 0.33, 'stratify': True, "
          "'reshuffle': False} stored, {'scheme': 'kfold', 'folds': 3, 'repeats': 1, "
          "'stratify': True, 'reshuffle': False} given")),
        (("3", None), ("3", "log-loss"),
         "loss {'name': 'zero-one'} stored, {'name': 'log-loss'} given"),
    ],
)
def test_a_setting_that_really_differs_is_refused_naming_it(tmp_path, capsys, first, again,
                                                            difference):
    assert _run(_experiment(tmp_path, *first)) == 0
    capsys.readouterr()
    assert _run(_experiment(tmp_path, *again, budget=3, name="again.yaml")) == 2
    assert f"scored otherwise ({difference})" in capsys.readouterr().err


def test_a_study_stored_as_written_still_refuses_another_loss(tmp_path, capsys):
    assert _run(_experiment(tmp_path, "3")) == 0
    _as_an_earlier_version_stored(tmp_path / "s.db", 3, None)
    capsys.readouterr()
    assert _run(_experiment(tmp_path, "3", "log-loss", budget=3, name="again.yaml")) == 2
    assert ("scored otherwise (loss None stored, {'name': 'log-loss'} given)"
            in capsys.readouterr().err)


def test_scoring_settings_write_the_validation_out_and_keep_a_splitter():
    from sklearn.model_selection import KFold

    assert scoring_settings({"dataset": "iris", "validation": 3})["validation"] == {
        "scheme": "kfold", "folds": 3, "repeats": 1, "stratify": True, "reshuffle": False,
    }
    splitter = KFold(3)
    assert scoring_settings({"dataset": "iris", "validation": splitter})["validation"] is splitter
