"""``ensembo bench`` refuses what would waste or hide runs: bad options, empty lists,
failed runs counted as executed, records of another budget, missing plots."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import attrs
import pytest

from ensembo.bench import runner
from ensembo.cli import main

BRANIN = ["bench", "synthetic", "--problems", "branin", "--seeds", "1"]


def test_an_unknown_plugin_option_is_refused_before_any_run(tmp_path, capsys):
    """ensembo:gp:foo=1 passed the check, then every run failed inside its worker."""
    code = main([*BRANIN, "--optimizers", "random,ensembo:gp:foo=1", "--budget", "3",
                 "--out", str(tmp_path), "--report-only"])
    assert code == 2
    error = capsys.readouterr().err
    assert "ensembo:gp:foo=1: surrogate 'gp' has no option foo; its options: kernel" in error
    assert not (tmp_path / "synthetic").exists()


def test_a_plugin_option_value_the_plugin_refuses_is_refused_before_any_run(tmp_path, capsys):
    """ensembo:gp:noise_floor=abc passed the names' check, then every run of it failed,
    after the anchors' runs (audit)."""
    code = main([*BRANIN, "--optimizers", "random,ensembo:gp:noise_floor=abc", "--budget", "3",
                 "--out", str(tmp_path), "--report-only"])
    assert code == 2
    error = capsys.readouterr().err
    assert "--optimizers: ensembo:gp:noise_floor=abc: surrogate: surrogate 'gp'" in error
    assert "noise_floor must be a finite number > 0, got 'abc'" in error
    assert not (tmp_path / "synthetic").exists()


def test_known_plugin_options_pass_the_check():
    from ensembo.bench.benchmark import check_optimizers

    check_optimizers(["ensembo:gp:kernel=matern52+ei", "ensembo:random"])


def test_failed_runs_give_a_nonzero_exit_saying_how_many(tmp_path, monkeypatch, capsys):
    """Every run failing used to print 'N runs executed' and exit 0."""

    def all_fail(runs, workers=1, on_done=None, on_lost=None, seen=None):
        records = [{**attrs.asdict(r), "status": "failed", "error": "boom"} for r in runs]
        for record in records:
            runner._write_atomically(Path(record["path"]), record)
        return records

    monkeypatch.setattr(runner, "run_all", all_fail)
    code = main([*BRANIN, "--seeds", "2", "--optimizers", "random", "--budget", "3",
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 1
    captured = capsys.readouterr()
    assert "2 runs executed" in captured.out
    assert "2 of 2 runs failed" in captured.err


@pytest.mark.parametrize("option", ["--optimizers", "--problems"])
def test_an_empty_list_is_a_usage_error(tmp_path, capsys, option):
    """',' ran the whole default optimizer list, or no problem at all (blank report)."""
    assert main(["bench", "synthetic", option, ",", "--out", str(tmp_path), "--report-only"]) == 2
    assert f"{option}: ',' names nothing" in capsys.readouterr().err
    assert not (tmp_path / "synthetic").exists()


def test_an_empty_optimizer_list_from_python_is_refused(tmp_path):
    """It fell back to the suite's eight default optimizers without a word."""
    from ensembo.bench.benchmark import run_benchmark

    with pytest.raises(ValueError, match="optimizers: the list names nothing"):
        run_benchmark("synthetic", optimizers=[], seeds=1, out=tmp_path, execute=False)


def _record(tmp_path: Path, seed: int, budget: int, status: str = "complete") -> None:
    path = runner.run_path(tmp_path, "synthetic", "branin", "random", seed)
    spec = runner.RunSpec(suite="synthetic", problem="branin", optimizer="random", seed=seed,
                          budget=budget, path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**attrs.asdict(spec), "status": status, "optimum": 0.4,
                                "error": "boom"}))


def test_report_only_names_the_budget_of_the_records_there(tmp_path, capsys):
    """Records of --budget 6 were counted 'without a record' and titled validation error."""
    _record(tmp_path, 0, budget=6)
    _record(tmp_path, 1, budget=5, status="failed")  # one of this budget: the report is new
    assert main([*BRANIN, "--seeds", "2", "--optimizers", "random", "--budget", "5",
                 "--out", str(tmp_path), "--report-only"]) == 0
    out = capsys.readouterr().out
    assert "1 made with another budget (pass --budget 6 to report them)" in out
    assert "1 without a record" in out  # the failed run alone, not the one of budget 6
    report = (tmp_path / "synthetic" / "report.md").read_text()
    assert "Median final simple regret" in report
    assert "pass --budget 6 to report it, or run budget 5 into another --out" in report


def test_report_only_at_a_budget_no_record_has_keeps_the_report(tmp_path, capsys):
    """--report-only without the runs' --budget replaced their full report.md with an
    empty one, and exited 0 (audit)."""
    _record(tmp_path, 0, budget=6)
    report = tmp_path / "synthetic" / "report.md"
    report.write_text("the full report")
    assert main([*BRANIN, "--optimizers", "random", "--budget", "5", "--out", str(tmp_path),
                 "--report-only"]) == 2
    captured = capsys.readouterr()
    assert "1 made with another budget (pass --budget 6 to report them)" in captured.out
    assert f"{report} is left as it was" in captured.err
    assert report.read_text() == "the full report"


def test_report_only_at_a_budget_no_record_has_writes_no_report_where_none_was(
    tmp_path, capsys
):
    """Without a report.md, stderr said '.../report.md is left as it was' (audit)."""
    _record(tmp_path, 0, budget=6)
    report = tmp_path / "synthetic" / "report.md"
    assert main([*BRANIN, "--optimizers", "random", "--budget", "5", "--out", str(tmp_path),
                 "--report-only"]) == 2
    err = capsys.readouterr().err
    assert f"no {report} is written" in err
    assert "left as it was" not in err
    assert not report.exists()


def test_missing_matplotlib_is_warned_about(tmp_path, monkeypatch, caplog):
    """The convergence plots were left out of the report without a word."""
    import importlib.util

    from ensembo.bench import plots

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with caplog.at_level(logging.WARNING, logger="ensembo.bench.plots"):
        assert plots.convergence_plots([], ["random"], ["branin"], tmp_path / "plots") == {}
    assert "matplotlib is not installed" in caplog.text
    assert "pip install 'ensembo[plots]'" in caplog.text


def test_an_interrupt_leaves_at_once_when_a_pool_manager_outlives_it(monkeypatch, tmp_path):
    """After Ctrl-C the interpreter's exit joined a stuck pool manager thread forever."""
    import ensembo.bench.benchmark as benchmark
    from ensembo.cli import bench_command

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    exits = []
    monkeypatch.setattr(benchmark, "run_benchmark", interrupted)
    monkeypatch.setattr(runner, "pool_stuck", lambda: True)
    monkeypatch.setattr(bench_command.os, "_exit", exits.append)
    main(["bench", "synthetic", "--out", str(tmp_path)])
    assert exits == [130]


def test_no_stuck_pool_without_a_pool():
    assert not runner.pool_stuck()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_ctrl_c_ends_the_pool_manager_and_every_worker():
    """A worker spawned to replace one that finished is terminated too, and the
    manager thread ends, so nothing is left for the interpreter's exit to join."""
    import time
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    with pytest.raises(KeyboardInterrupt):  # noqa: SIM117
        with ProcessPoolExecutor(
            max_workers=1, mp_context=get_context("spawn"), max_tasks_per_child=1
        ) as pool:
            futures = [pool.submit(time.sleep, seconds) for seconds in (0, 60, 60)]
            processes = pool._processes
            with runner.stop_on_interrupt(pool):
                for _ in as_completed(futures):
                    time.sleep(3)  # the replacement worker starts and takes a 60 s run
                    raise KeyboardInterrupt
    assert not runner.pool_stuck()
    assert not any(process.is_alive() for process in processes.values())
