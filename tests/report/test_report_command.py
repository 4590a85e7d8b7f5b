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


def _bench_record(folder, problem, method, loss):
    import json

    path = folder / "synthetic" / problem / method / "seed-0.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"suite": "synthetic", "problem": problem, "optimizer": method,
              "status": "complete", "budget": 5, "final_loss": loss}
    path.write_text(json.dumps(record))


def _ensembles_record(folder):
    """What the 'ensembles' benchmark writes: complete, but no optimizer or final loss."""
    import json

    path = folder / "ensembles" / "esmbo" / "svm" / "iris" / "seed-0.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"experiment": "esmbo", "dataset": "iris", "seed": 0,
                                "budget": 5, "status": "complete", "methods": {}}))


def test_standalone_suite_records_are_left_out_with_a_note(tmp_path, capsys):
    """A bench folder used for 'ensembles' too crashed with KeyError 'final_loss'."""
    for problem in ("p1", "p2"):
        for method, loss in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
            _bench_record(tmp_path / "bench", problem, method, loss)
    _ensembles_record(tmp_path / "bench")
    out = tmp_path / "out"
    assert main(["report", "--no-plots", str(tmp_path / "bench"), "--out", str(out)]) == 0
    ranks = (out / "ranks.md").read_text()
    assert "# Ranks over 2 problems" in ranks
    assert f"Left out: `{tmp_path / 'bench' / 'ensembles'}`" in ranks


def test_a_folder_of_standalone_records_only_is_refused(tmp_path, capsys):
    """Only 'ensembles' records: a usage error naming them, not a crash."""
    _ensembles_record(tmp_path / "ens")
    assert main(["report", "--no-plots", str(tmp_path / "ens")]) == 2
    err = capsys.readouterr().err
    assert "no complete 'ensembo bench' run records" in err
    assert f"left out: {tmp_path / 'ens' / 'ensembles'}" in err


def test_report_of_the_current_folder_goes_next_to_it(tmp_path, monkeypatch):
    """`ensembo report .` crashed: Path('.') has an empty name."""
    for problem in ("p1", "p2"):
        for method, loss in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
            _bench_record(tmp_path / "bench", problem, method, loss)
    monkeypatch.chdir(tmp_path / "bench")
    assert main(["report", "--no-plots", "."]) == 0
    assert (tmp_path / "bench-report" / "ranks.md").is_file()


@pytest.mark.parametrize("loss", ["nan", "inf", "-inf"])
def test_a_non_finite_csv_loss_is_refused_naming_the_line(tmp_path, capsys, loss):
    """One nan loss made every rank and the Friedman test nan, with exit 0."""
    rows = ["problem,method,loss", "p1,A,0.1", f"p1,B,{loss}", "p1,C,0.3",
            "p2,A,0.2", "p2,B,0.1", "p2,C,0.3"]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    assert main(["report", "--no-plots", str(tmp_path / "r.csv")]) == 2
    assert f"r.csv: line 3: loss '{loss}' is not a finite number" in capsys.readouterr().err
    assert not (tmp_path / "r-report").exists()


@pytest.mark.parametrize("alpha", ["0", "1", "5", "-0.1", "nan"])
def test_alpha_outside_zero_one_is_a_usage_error(tmp_path, capsys, alpha):
    """alpha 0, 1 or beyond printed a critical difference of inf, 0 or nan."""
    (tmp_path / "r.csv").write_text("problem,method,loss\np1,A,0.1\np1,B,0.2\np1,C,0.3\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--no-plots", str(tmp_path / "r.csv"), f"--alpha={alpha}"])
    assert exit_info.value.code == 2
    assert f"argument --alpha: '{alpha}': must be between 0 and 1" in capsys.readouterr().err


def test_a_report_of_an_eo_study_says_its_budget_advice_once_without_warning(
    short_eo_study, tmp_path, capsys
):
    """eo's "use a budget of at least ..." is advice for the run; the report repeated it
    as a warning on stderr, as if reading the study had gone wrong."""
    out = tmp_path / "eo-report"
    assert main(["report", "--no-plots", str(short_eo_study), "--out", str(out)]) == 0
    assert "budget" not in capsys.readouterr().err
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "The ensemble strategy warned when the study ran: eo: 12 slots" in report


def test_report_files_are_utf8_whatever_the_locale(tmp_path):
    """Under a non-UTF-8 locale a non-ASCII space name crashed the report half-written
    (trials.md made, report.md and trials.csv missing)."""
    import os
    import subprocess
    import sys

    from ensembo import Study

    path = tmp_path / "s.db"
    Study({"name": "naïve-ünïcode", "params": {"x": {"type": "float", "low": 0, "high": 1}}},
          surrogate=None, storage=path).optimize(lambda c: c["x"], n_trials=3)
    out = tmp_path / "out"
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [sys.executable, "-m", "ensembo.cli", "report", "--no-plots", str(path), "--out", str(out)],
        env=env, capture_output=True, text=True, encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "trials.csv", "trials.md"]
    assert "# Report: naïve-ünïcode" in (out / "report.md").read_text(encoding="utf-8")
    assert "naïve-ünïcode" in (out / "trials.md").read_text(encoding="utf-8")
