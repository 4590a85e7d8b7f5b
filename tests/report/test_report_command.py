"""``ensembo report`` end to end."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.cli import main


def test_report_writes_tables_and_figures(stored_study, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    assert main(["report", str(stored_study[0]), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "convergence.png",
        "ensemble_composition.png",
        "hyperparameters.png",
        "report.md",
        "trials.csv",
        "trials.md",
    ]
    assert "![convergence](convergence.png)" in (out / "report.md").read_text()
    assert str(out / "report.md") in capsys.readouterr().out


def test_report_without_plots(stored_study, tmp_path):
    out = tmp_path / "tables"
    assert main(["report", "--no-plots", str(stored_study[0]), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "trials.csv", "trials.md"]


def test_default_folder_is_next_to_the_study(stored_study, tmp_path):
    import sqlite3

    copy = tmp_path / "copy.db"
    with sqlite3.connect(stored_study[0]) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # a plain file copy would miss the WAL
    assert main(["report", "--no-plots", str(copy)]) == 0
    assert (tmp_path / "copy-report" / "report.md").is_file()


def test_benchmark_csv_gives_ranks_and_a_diagram(tmp_path):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(1)
    lines = ["problem,method,loss"] + [
        f"p{p},{m},{rng.normal() + offset}"
        for p in range(12)
        for m, offset in (("a", 0), ("b", 1), ("c", 2))
    ]
    (tmp_path / "results.csv").write_text("\n".join(lines) + "\n")
    assert main(["report", str(tmp_path / "results.csv")]) == 0
    ranks = (tmp_path / "results-report" / "ranks.md").read_text()
    assert "| a |" in ranks and "Friedman statistic" in ranks
    assert (tmp_path / "results-report" / "critical_difference.png").read_bytes()[:4] == b"\x89PNG"


def test_budget_picks_one_budget_of_a_bench_folder(tmp_path, capsys):
    import json

    for budget, offset in ((10, 0.0), (50, -1.0)):
        for problem in range(4):
            for method, loss in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
                folder = tmp_path / "bench" / "s" / f"p{problem}" / method
                folder.mkdir(parents=True, exist_ok=True)
                record = {"suite": "s", "problem": f"p{problem}", "optimizer": method,
                          "status": "complete", "budget": budget, "final_loss": loss + offset}
                (folder / f"seed-{budget}.json").write_text(json.dumps(record))
    bench = str(tmp_path / "bench")
    assert main(["report", "--no-plots", bench]) == 2
    assert "rank one budget at a time with --budget (one of 10, 50)" in capsys.readouterr().err
    assert main(["report", "--no-plots", bench, "--budget", "50"]) == 0
    ranks = (tmp_path / "bench-report" / "ranks.md").read_text()
    assert "# Ranks over 4 problems" in ranks and "runs with budget 50;" in ranks
    assert main(["report", "--no-plots", bench, "--budget", "20"]) == 2
    assert "no complete run records with budget 20" in capsys.readouterr().err
    (tmp_path / "results.csv").write_text("problem,method,loss\np,a,1\n")
    assert main(["report", str(tmp_path / "results.csv"), "--budget", "20"]) == 2
    assert "a results CSV has no budgets" in capsys.readouterr().err


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.db")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "resume"])
def test_another_programs_database_is_refused_and_left_untouched(tmp_path, capsys, command):
    import sqlite3

    path = tmp_path / "people.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE people (name TEXT)")
    before = path.read_bytes()
    assert main([command, str(path)]) == 2
    assert f"{path}: no study stored here" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert not (tmp_path / "people-report").exists()


def test_folder_without_bench_records_is_refused_without_making_the_output(tmp_path, capsys):
    source = tmp_path / "empty"
    source.mkdir()
    assert main(["report", str(source), "--out", str(tmp_path / "out")]) == 2
    assert f"{source}: no complete 'ensembo bench' run records" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_unusable_csv_leaves_no_output_folder(tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("a,b\n")
    assert main(["report", str(tmp_path / "bad.csv")]) == 2
    assert "needs columns problem, method, loss" in capsys.readouterr().err
    assert not (tmp_path / "bad-report").exists()


def test_strategy_of_an_uninstalled_plugin_is_named_and_no_empty_ensemble_shown(
    stored_study, tmp_path
):
    import json
    import sqlite3

    copy = tmp_path / "gone.db"
    with sqlite3.connect(stored_study[0]) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as connection:
        meta = json.loads(connection.execute("SELECT value FROM meta").fetchone()[0])
        meta["components"]["ensemble_strategy"] = {"name": "acme-eo"}
        connection.execute("UPDATE meta SET value = ?", (json.dumps(meta),))
    assert main(["report", "--no-plots", str(copy), "--out", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "ensemble strategy 'acme-eo' cannot be built here" in text
    assert "is the plugin that provides it installed?" in text
    assert "ensemble (0 members)" not in text
    assert ".." not in text.split("Note:")[1].splitlines()[0]


def test_a_report_of_too_few_trials_says_why_it_ranks_no_hyperparameter(tmp_path):
    """The section vanished without a word below eight completed trials."""
    from ensembo import Study
    from ensembo.report.data import MIN_ACTIVE

    path = tmp_path / "short.db"
    study = Study({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}},
                  surrogate=None, storage=path, seed=0)
    study.optimize(lambda config: config["x"], n_trials=MIN_ACTIVE - 1)
    study.close()
    out = tmp_path / "out"
    assert main(["report", "--no-plots", str(path), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert f"Not shown: no hyperparameter was active in at least {MIN_ACTIVE}" in text
