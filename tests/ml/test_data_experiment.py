"""Experiment files with a ``data:`` key: ``ensembo run`` and ``ensembo resume``."""

from __future__ import annotations

import io
import re
import textwrap

import pytest
from experiment_texts import TREE_SPACE

from ensembo import Study, TrialState
from ensembo.cli import main
from ensembo.errors import ExperimentError
from ensembo.experiment import parse_experiment
from ensembo.ml.data_run import DataSettings
from ensembo.report.data import compute_report

TINY = TREE_SPACE + """data:
  dataset: iris
  validation: 3
surrogate: null
ensemble: posthoc
budget: 4
seed: 1
"""


def test_run_prints_the_error_table_and_resume_reprints_it(tmp_path, capsys):
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY))
    storage = tmp_path / "tiny.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    first = capsys.readouterr().out
    assert "dataset: iris (112 training rows, 38 test rows)" in first
    assert "trials: 4 (4 complete, 0 failed)" in first
    table = first.split("\n\n")[-1].splitlines()
    assert table[0].split() == ["model", "validation", "zero-one", "test", "zero-one"]
    assert table[2].startswith("best single model (trial ")
    assert table[3].startswith("ensemble (posthoc, ")
    assert len(list((tmp_path / "tiny.models").glob("trial-*.joblib"))) == 4
    assert main(["resume", str(storage), "--no-progress"]) == 0
    again = capsys.readouterr()
    assert again.out.split("\n\n")[-1] == first.split("\n\n")[-1]
    assert "already has 4 finished trials (budget 4); nothing to run" in again.err


def test_a_data_experiment_evaluates_its_queued_configs_first(tmp_path, capsys):
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY) + "enqueue:\n  - {max_depth: 5}\n")
    storage = tmp_path / "tiny.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    capsys.readouterr()
    trials = Study.load(storage).trials
    assert len(trials) == 4 and trials[0].config == {"max_depth": 5}
    assert all(t.state is TrialState.COMPLETE for t in trials)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("validation", 1, "data.validation: k-fold cross-validation needs at least 2 folds"),
        ("validation", 1.5, "data.validation: a holdout ratio must be between 0 and 1"),
        ("test", 1.5, "data.test: a fraction between 0 and 1 (exclusive), got 1.5"),
        ("selection_split", 2, "data.selection_split: a fraction between 0 and 1 (exclusive)"),
        ("refit", "maybe", "data.refit: true or false, got 'maybe'"),
        # failed only after every trial: "give the task a selection split"
        ("final", "selection-split", ("data.final: selection-split chooses by the loss on rows "
         "held out from the search: give data.selection_split")),
        ("validation", {"kind": "kfold"}, "data.validation: unknown holdout option(s) kind"),
    ],
)
def test_bad_data_values_name_their_key(key, value, message):
    with pytest.raises(ExperimentError, match=re.escape(message)):
        DataSettings.from_document({"dataset": "iris", key: value})


def test_data_replaces_the_objective_and_its_keys_are_checked():
    parse_experiment({"space": "svm", "data": "iris", "budget": 3})
    with pytest.raises(ExperimentError, match="objective: required key is missing"):
        parse_experiment({"space": "svm", "budget": 3})
    with pytest.raises(
        ExperimentError, match="data.valdation: unknown key; did you mean 'validation'"
    ):
        DataSettings.from_document({"dataset": "iris", "valdation": 3})
    with pytest.raises(ExperimentError, match=r"data.final: 'final' must be in \('argmin'"):
        DataSettings.from_document({"dataset": "iris", "final": "median"})


def test_progress_lines_number_trials_as_the_report_does(tmp_path, capsys):
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY))
    assert main(["run", str(experiment), "--storage", str(tmp_path / "tiny.db")]) == 0
    captured = capsys.readouterr()  # stderr is no terminal here: one line per trial
    lines = captured.err.strip().splitlines()
    assert [line.split(" [")[0] for line in lines] == [f"trial {n}" for n in range(4)]
    assert [line.split("]")[0].split("[")[1] for line in lines] == [
        f"{n}/4 done" for n in range(1, 5)
    ]
    selected = re.search(r"selected \(argmin\): trial (\d+)", captured.out).group(1)
    best_loss = lines[-1].split("(best ")[1].rstrip(")")
    assert any(line.startswith(f"trial {selected} [") and f"loss {best_loss} " in line
               for line in lines)


def test_rerun_with_another_validation_is_refused_and_the_same_one_continues(tmp_path, capsys):
    """k-fold targets are the same rows whatever k: 10-fold trials were silently ranked
    and ensembled with 3-fold ones."""
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY))
    storage = tmp_path / "tiny.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    text = textwrap.dedent(TINY)
    other = tmp_path / "other.yaml"
    other.write_text(text.replace("validation: 3", "validation: 4").replace("budget: 4",
                                                                         "budget: 6"))
    assert "validation: 3" in text and "budget: 4" in text  # the replacements apply
    assert main(["run", str(other), "--storage", str(storage), "--no-progress"]) == 2
    assert "scored otherwise (data.validation.folds 3 stored, 4 given)" in capsys.readouterr().err
    more = tmp_path / "more.yaml"
    more.write_text(text.replace("budget: 4", "budget: 5"))
    assert main(["run", str(more), "--storage", str(storage), "--no-progress"]) == 0
    assert len(Study.load(storage).trials) == 5


def test_the_json_summary_has_the_keys_of_an_objective_run(tmp_path, capsys):
    """``best`` had no loss and ``ensemble`` neither its strategy nor its loss: the
    values were only in ``table`` rows keyed by display text."""
    import json

    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY))
    assert main(["run", str(experiment), "--storage", str(tmp_path / "t.db"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    best, ensemble, table = summary["best"], summary["ensemble"], summary["table"]
    assert (best["loss"], best["test"]) == (table[0]["validation"], table[0]["test"])
    assert ensemble["strategy"] == "posthoc"
    assert (ensemble["loss"], ensemble["test"]) == (table[1]["validation"], table[1]["test"])
    assert {"number", "config"} <= set(best) and {"members", "weights"} <= set(ensemble)


def test_an_execution_key_on_a_data_experiment_is_not_silently_ignored(tmp_path, caplog):
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY) + "execution: {n_jobs: 2}\n")
    with caplog.at_level("WARNING", logger="ensembo"):
        assert main(["run", str(experiment), "--storage", str(tmp_path / "t.db"),
                     "--no-progress"]) == 0
    assert any("execution: n_jobs not used by data: experiments" in m for m in caplog.messages)


def test_a_data_experiment_takes_its_trial_limits_from_execution(tmp_path, caplog, monkeypatch):
    import ensembo.ml.data_run as data_run

    seen = []
    real = data_run.run_task

    def spy(*args, **kwargs):
        seen.append(kwargs["limits"])
        return real(*args, **kwargs)

    monkeypatch.setattr(data_run, "run_task", spy)
    experiment = tmp_path / "tiny.yaml"
    experiment.write_text(textwrap.dedent(TINY) + "execution: {trial_timeout: 30}\n")
    with caplog.at_level("WARNING", logger="ensembo"):
        assert main(["run", str(experiment), "--storage", str(tmp_path / "t.db"),
                     "--no-progress"]) == 0
    assert not [m for m in caplog.messages if "execution:" in m]
    assert seen[0].wall_time == 30


SELECTED = TREE_SPACE + """data:
  dataset: breast-cancer
  validation: 3
  final: selection-split
  selection_split: 0.3
  refit: false
surrogate: null
budget: 6
seed: 1
"""


def test_without_an_ensemble_key_the_ensemble_is_the_selected_model(tmp_path, capsys):
    """The docs promise the default ``best`` ensemble is the *selected* model alone; the
    report said "selected (selection-split): trial 0" beside an ensemble of the argmin
    trial, and scored that one as the ensemble."""
    import json

    experiment = tmp_path / "selected.yaml"
    experiment.write_text(textwrap.dedent(SELECTED))
    storage = tmp_path / "selected.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    best, ensemble = summary["best"], summary["ensemble"]
    assert best["number"] != Study.load(storage).best_trial.number  # not the argmin
    assert ensemble["strategy"] == "best"
    assert (ensemble["members"], ensemble["weights"]) == ([best["number"]], [1.0])
    assert (ensemble["loss"], ensemble["test"]) == (best["loss"], best["test"])


@pytest.fixture(scope="module")
def selected_study(tmp_path_factory):
    """A `final: selection-split` run whose rule picks another trial than the argmin:
    its storage and the summary `ensembo run --json` printed."""
    import contextlib
    import io
    import json

    folder = tmp_path_factory.mktemp("selected")
    experiment = folder / "selected.yaml"
    experiment.write_text(textwrap.dedent(SELECTED))
    storage = folder / "selected.db"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["run", str(experiment), "--storage", str(storage), "--json",
                     "--no-progress"]) == 0
    summary = json.loads(printed.getvalue())
    with Study.load(storage) as study:  # else the tests could not tell the two apart
        assert summary["best"]["number"] != study.best_trial.number
    return storage, summary


def test_the_report_names_the_model_the_selection_rule_chose(selected_study, tmp_path):
    """`ensembo run` predicted with the selection rule's trial while report.md and
    trials.csv's final_weight named the validation argmin (the `best` replay)."""
    import csv

    storage, summary = selected_study
    selected = summary["best"]["number"]
    out = tmp_path / "report"
    assert main(["report", "--no-plots", str(storage), "--out", str(out)]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"| selected (selection-split): trial {selected} |" in report
    assert f"trial {selected}, selected by selection-split, and the ensemble" in report
    with (out / "trials.csv").open(encoding="utf-8", newline="") as handle:
        weights = {int(row["number"]): row["final_weight"] for row in csv.DictReader(handle)}
    assert [n for n, weight in weights.items() if weight] == [selected]
    assert weights[selected] == "1.0"


def test_the_report_shows_the_ensemble_ensembo_run_printed(selected_study):
    storage, summary = selected_study
    data = compute_report(storage)
    assert data.selected.selection == "selection-split"
    assert data.selected.trial.number == summary["best"]["number"]
    assert [m.number for m in data.members] == summary["ensemble"]["members"]
    assert data.final_ensemble_loss == summary["ensemble"]["loss"]
    assert data.selection_note is None


def _copy_with_final_choice(source, target, edit):
    """A copy of the study ``source`` whose stored final choice ``edit`` changed."""
    import sqlite3
    from contextlib import closing

    from ensembo.report.data import FINAL_CHOICE
    from ensembo.storage import SQLiteStorage

    with closing(sqlite3.connect(source)) as original, closing(sqlite3.connect(target)) as copy:
        original.backup(copy)  # with what is still in the write-ahead log
    opened = SQLiteStorage(target)
    try:
        meta = opened.read_meta()
        edit(meta["metadata"], FINAL_CHOICE)
        opened.write_meta(meta)
    finally:
        opened.close()
    return target


def test_a_study_stored_before_the_choice_was_kept_is_replayed_saying_so(
    selected_study, tmp_path
):
    storage = _copy_with_final_choice(
        selected_study[0], tmp_path / "old.db", lambda metadata, key: metadata.pop(key)
    )
    data = compute_report(storage)
    assert data.selected is None
    assert [m.number for m in data.members] == [data.best.number]  # the replay: the argmin
    assert "stored before `ensembo run` recorded its final choice" in data.selection_note
    assert "`final: selection-split`" in data.selection_note


def test_a_choice_made_from_fewer_trials_than_stored_is_not_used(selected_study, tmp_path):
    """A continued run stopped before it chose again: its stored choice is of the old
    trials, so the report replays and says why."""
    storage = _copy_with_final_choice(
        selected_study[0], tmp_path / "continued.db",
        lambda metadata, key: metadata[key].update(complete=5),
    )
    data = compute_report(storage)
    assert data.selected is None and [m.number for m in data.members] == [data.best.number]
    assert "was made from 5 complete trials and the study now has 6" in data.selection_note


def test_queued_trials_beyond_the_budget_are_pending_not_failed(tmp_path, capsys):
    """The summary counted every trial that was not complete as failed."""
    import json

    queued = "enqueue:\n  - {max_depth: 2}\n  - {max_depth: 3}\n  - {max_depth: 4}\n"
    experiment = tmp_path / "queued.yaml"
    experiment.write_text(textwrap.dedent(TINY).replace("budget: 4", "budget: 1") + queued)
    storage = tmp_path / "queued.db"
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    assert "trials: 3 (1 complete, 0 failed, 2 pending)" in capsys.readouterr().out
    assert main(["run", str(experiment), "--storage", str(storage), "--json",
                 "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["complete"], summary["failed"], summary["pending"]) == (1, 0, 2)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_of_a_continued_run_counts_the_earlier_trials(tmp_path, capsys, monkeypatch):
    """Continued from 2 to 4 trials, the bar ended at 2/4 (50%), as if the run stopped."""
    experiment = tmp_path / "tiny.yaml"
    storage = tmp_path / "tiny.db"
    experiment.write_text(textwrap.dedent(TINY).replace("budget: 4", "budget: 2"))
    assert main(["run", str(experiment), "--storage", str(storage), "--no-progress"]) == 0
    experiment.write_text(textwrap.dedent(TINY))
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["run", str(experiment), "--storage", str(storage)]) == 0
    counts = re.findall(r"\b(\d)/4\b", terminal.getvalue())
    assert counts[0] == "2" and counts[-1] == "4"
