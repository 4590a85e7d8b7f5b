"""The markdown summary, the trial table and its CSV."""

from __future__ import annotations

import csv

from ensembo.report.data import compute_report
from ensembo.report.tables import markdown_table, summary_markdown, trial_columns, write_trials_csv


def test_csv_has_one_row_per_trial_with_hyperparameters_and_info(stored_study, tmp_path):
    path, study = stored_study
    data = compute_report(path)
    with write_trials_csv(data, tmp_path / "trials.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(study.trials)
    assert {"learner", "alpha", "depth", "test_loss", "best_so_far", "ensemble_loss"} <= set(
        rows[0]
    )
    first = study.trials[0]
    assert float(rows[0]["loss"]) == first.loss
    inactive = "depth" if first.config["learner"] == "ridge" else "alpha"
    assert rows[0][inactive] == ""
    assert rows[-1]["state"] == "failed" and rows[-1]["error"] == "ValueError: diverged"
    best = study.best_trial.number
    assert float(rows[best]["final_weight"]) == 1.0


def test_summary_names_setup_best_and_members(stored_study):
    path, study = stored_study
    text = summary_markdown(compute_report(path))
    assert "| ensemble_strategy | best |" in text
    assert "| surrogate | (none (random search) or a Python object; not stored) |" in text
    assert f"best single (trial {study.best_trial.number})" in text
    assert "Budget: 20 trials; seed 5; loss mse; task regression." in text
    assert "### Ensemble members" in text
    assert "Trials: 21 (20 complete, 1 failed)." in text
    assert "| alpha | UniformFloat | [1e-06, 10] | yes |" in text


def test_markdown_cells_escape_pipes():
    table = markdown_table(["a"], [["x|y"]])
    assert table.splitlines()[-1] == "| x\\|y |"


def test_columns_start_with_the_outcome(stored_study):
    columns = trial_columns(compute_report(stored_study[0]))
    assert columns[:3] == ["number", "state", "loss"]


def test_summary_shows_the_experiment_data_settings(stored_study):
    import attrs

    data = attrs.evolve(
        compute_report(stored_study[0]),
        experiment={"name": "quickstart", "data": {"dataset": "breast-cancer", "validation": 5}},
    )
    text = summary_markdown(data)
    assert "Experiment: `quickstart`.\n\nData: dataset breast-cancer, validation 5.\n" in text
    assert "Experiment:" not in summary_markdown(compute_report(stored_study[0]))
