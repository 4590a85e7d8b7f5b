"""Runs are spawned processes writing one JSON each; finished runs are not redone."""

import json
from pathlib import Path

import numpy as np
import pytest

from ensembo.bench import run_claims, runner
from ensembo.bench.benchmark import run_benchmark
from ensembo.bench.run_claims import claim
from ensembo.cli import main
from ensembo.errors import ExperimentError


def test_execute_writes_metrics(tmp_path):
    [spec] = [
        r for r in runner.plan("synthetic", ["random"], [0], 7, tmp_path) if r.problem == "branin"
    ]
    record = runner.execute(spec)
    stored = json.loads(Path(spec.path).read_text())
    assert stored["status"] == record["status"] == "complete"
    assert stored["n_evaluations"] == 7 and len(stored["best_so_far"]) == 7
    assert stored["final_regret"] == pytest.approx(min(stored["losses"]) - 0.39788735772974)
    assert 0 <= stored["objective_seconds"] <= stored["wall_seconds"]
    assert stored["overhead_per_evaluation"] >= 0
    assert stored["versions"]["numpy"] == np.__version__
    assert stored["blas"] and all("internal_api" in lib for lib in stored["blas"])
    assert stored["system"]["cpus"] >= 1 and stored["system"]["python"].count(".") == 2


def test_execute_records_cpu_time_and_load_beside_wall_time(tmp_path):
    [spec] = runner.plan("synthetic", ["random"], [0], 7, tmp_path, problems=["branin"])
    stored = runner.execute(spec)
    assert 0 <= stored["objective_cpu_seconds"] <= stored["cpu_seconds"]
    assert stored["cpu_overhead_per_evaluation"] == pytest.approx(
        (stored["cpu_seconds"] - stored["objective_cpu_seconds"]) / 7
    )
    assert stored["load_average_start"] >= 0 and stored["load_average_end"] >= 0


def test_missing_library_is_recorded_as_skipped(tmp_path, monkeypatch):
    import ensembo.bench.optimizers.base as base

    real = base.importlib.import_module

    def without_hyperopt(name, *args):
        if name == "hyperopt":
            raise ImportError("no hyperopt here")
        return real(name, *args)

    monkeypatch.setattr(base.importlib, "import_module", without_hyperopt)
    [spec] = [
        r
        for r in runner.plan("synthetic", ["hyperopt-tpe"], [0], 5, tmp_path)
        if r.problem == "branin"
    ]
    record = runner.execute(spec)
    assert record["status"] == "skipped" and "pip install 'ensembo[bench]'" in record["error"]


def test_a_skipped_run_runs_once_its_library_is_installed(tmp_path, monkeypatch):
    [spec] = runner.plan("synthetic", ["hyperopt-tpe"], [0], 5, tmp_path, problems=["branin"])
    Path(spec.path).parent.mkdir(parents=True)
    skipped = {"status": "skipped", "budget": 5, "error": "hyperopt was not installed"}
    Path(spec.path).write_text(json.dumps(skipped))
    assert not runner.is_finished(Path(spec.path), 5)
    assert runner.execute(spec)["status"] == "complete"


def test_a_library_no_extra_installs_is_named_as_a_package(monkeypatch):
    import sys

    from ensembo.bench.optimizers.optuna_optimizer import OptunaOptimizer
    from ensembo.errors import MissingDependencyError

    pytest.importorskip("optuna")
    monkeypatch.setitem(sys.modules, "torch", None)  # importing it raises ImportError
    with pytest.raises(MissingDependencyError) as missing:
        OptunaOptimizer(name="optuna-gp").prepare()
    assert "pip install torch" in str(missing.value)
    assert "ensembo[" not in str(missing.value)


def test_spawned_runs_resume_and_skip_finished(tmp_path):
    runs = [
        r
        for r in runner.plan("synthetic", ["ensembo:random"], [0], 5, tmp_path)
        if r.problem == "branin"
    ]
    [first] = runner.run_all(runs, workers=1)
    assert first["status"] == "complete", first["error"]
    assert first["environment"]["PYTHONHASHSEED"] == "0"  # set for the spawned worker
    assert first["environment"]["OMP_NUM_THREADS"] == "1"
    assert runner.run_all(runs, workers=1) == []  # finished: nothing spawned again


def test_a_record_with_another_budget_is_not_reused(tmp_path):
    [spec] = [
        r for r in runner.plan("synthetic", ["random"], [0], 5, tmp_path) if r.problem == "branin"
    ]
    runner.execute(spec)
    assert runner.is_finished(Path(spec.path), 5)
    assert not runner.is_finished(Path(spec.path), 50)
    [default] = [
        r
        for r in runner.plan("synthetic", ["random"], [0], None, tmp_path)
        if r.problem == "branin"
    ]
    assert default.budget == 50 and default.path == spec.path


def test_a_complete_record_of_another_budget_is_never_replaced(tmp_path):
    [full] = runner.plan("synthetic", ["random"], [0], 6, tmp_path, problems=["branin"])
    kept = runner.execute(full)
    [trial] = runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    with pytest.raises(ExperimentError) as refused:
        runner.run_all([trial], workers=1)
    message = str(refused.value)
    assert str(tmp_path) in message and trial.path in message
    assert "budget 6" in message and "budget 5" in message and "another --out" in message
    assert json.loads(Path(full.path).read_text()) == kept


def test_a_complete_record_without_a_budget_does_not_stop_a_command(tmp_path):
    """Records from before budgets were kept have ``"budget": null``: one of them made a
    whole command refuse to run, naming "budget None"."""
    [full] = runner.plan("synthetic", ["random"], [0], 6, tmp_path, problems=["branin"])
    old = {**runner.execute(full), "budget": None}
    Path(full.path).write_text(json.dumps(old))
    runner.refuse_replacing_other_budgets(
        runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    )


def test_running_a_spec_never_writes_over_a_complete_record(tmp_path, monkeypatch):
    [full] = runner.plan("synthetic", ["random"], [0], 6, tmp_path, problems=["branin"])
    kept = runner.execute(full)
    [trial] = runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    written = []
    monkeypatch.setattr(runner, "_write_atomically", lambda path, record: written.append(record))
    assert runner.execute(trial) == kept
    assert written == []  # neither a running marker nor a 5-evaluation record


def test_failed_runs_are_retried(tmp_path):
    [spec] = [
        r for r in runner.plan("synthetic", ["random"], [0], 5, tmp_path) if r.problem == "branin"
    ]
    Path(spec.path).parent.mkdir(parents=True)
    Path(spec.path).write_text(json.dumps({"status": "failed", "error": "boom"}))
    assert not runner.is_finished(Path(spec.path))


def test_cli_lists_suites_and_rejects_unknown_names(capsys):
    assert main(["bench", "list"]) == 0
    out = capsys.readouterr().out
    assert "synthetic" in out and "conditional" in out
    assert main(["bench", "nope"]) == 2
    assert "available" in capsys.readouterr().err
    assert main(["bench", "synthetic", "--optimizers", "ensembo:no-such+ei"]) == 2


@pytest.mark.slow
def test_benchmark_end_to_end_writes_report_and_reruns_nothing(tmp_path):
    kwargs = dict(
        optimizers=["random", "ensembo:random"],
        seeds=2,
        budget=5,
        workers=2,
        out=tmp_path,
        progress=False,
    )
    first = run_benchmark("conditional", **kwargs)
    assert first.executed == 8 and first.report_path.exists()
    second = run_benchmark("conditional", **kwargs)
    assert second.executed == 0 and second.skipped_as_finished == 8


def test_a_broken_suite_module_does_not_hide_the_others(tmp_path, monkeypatch):
    import ensembo.bench.suites as package
    from ensembo.bench.suite import UnknownSuiteError, available_suites, get_suite

    (tmp_path / "broken_suite.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    assert "synthetic" in available_suites()
    with pytest.raises(UnknownSuiteError, match="broken_suite failed to import.*half written"):
        get_suite("broken")


def test_plan_keeps_only_named_problems(tmp_path):
    from ensembo.bench.suite import UnknownSuiteError

    runs = runner.plan("synthetic", ["random"], [0, 1], None, tmp_path, problems=["levy5"])
    assert {(r.problem, r.seed, r.budget) for r in runs} == {("levy5", 0, 80), ("levy5", 1, 80)}
    with pytest.raises(UnknownSuiteError, match="levy5"):
        runner.plan("synthetic", ["random"], [0], None, tmp_path, problems=["levy"])


def test_a_run_finished_by_another_invocation_is_not_redone(tmp_path):
    [spec] = runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    first = runner.execute(spec)
    assert runner.execute(spec) == first  # read back, not rerun


def test_report_only_runs_nothing(tmp_path):
    result = run_benchmark(
        "synthetic",
        optimizers=["random"],
        problems=["branin"],
        seeds=1,
        out=tmp_path,
        progress=False,
        execute=False,
    )
    assert (result.executed, result.skipped_as_finished) == (0, 0)
    assert result.report_path.exists() and not list(tmp_path.rglob("seed-*.json"))


def _marker(spec, pid):
    import platform

    marker = {"status": "running", "pid": pid, "host": platform.node()}
    Path(spec.path).parent.mkdir(parents=True, exist_ok=True)
    Path(spec.path).write_text(json.dumps(marker))
    return marker


def test_a_run_in_progress_elsewhere_is_left_alone_unless_its_process_is_gone(tmp_path):
    import os

    [spec] = runner.plan("synthetic", ["random"], [0], 5, tmp_path, problems=["branin"])
    marker = _marker(spec, os.getpid())
    with claim(Path(spec.path)):  # this process "is running it"
        assert runner.execute(spec) == marker
    _marker(spec, 2**22 + 12345)  # no such pid
    assert runner.execute(spec)["status"] == "complete"


def test_a_stale_marker_whose_pid_is_reused_does_not_block_a_free_claim(tmp_path):
    """Its pid now belongs to a live unrelated process (a restarted container keeping
    its hostname): the run was never run again, as if that process were running it."""
    import subprocess

    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        _marker(spec, unrelated.pid)
        outcome = runner.attempt(spec)
        assert outcome.ran_here and outcome.record["status"] == "complete"  # was the marker
        _marker(spec, unrelated.pid)
        assert len(runner.run_all([spec])) == 1  # was 0: filtered out before any pool
    finally:
        unrelated.kill()
        unrelated.wait()


def test_where_claims_cannot_lock_a_live_marker_still_keeps_the_run(tmp_path, monkeypatch):
    import os

    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    marker = _marker(spec, os.getpid())
    monkeypatch.setattr(run_claims, "fcntl", None)  # as on Windows
    assert runner.attempt(spec) == runner.Outcome(record=marker, ran_here=False)


def test_after_a_worker_dies_only_the_run_it_held_is_marked_failed(tmp_path):
    import os

    held, untouched, elsewhere = runner.plan(
        "synthetic", ["random"], [0, 1, 2], 5, tmp_path, problems=["branin"]
    )
    _marker(held, 2**22 + 12345)
    _marker(elsewhere, os.getpid())
    error = RuntimeError("worker died")
    outcome = runner._after_worker_death(held, error)
    assert outcome.ran_here and outcome.record["status"] == "failed"
    assert runner._after_worker_death(untouched, error) is None
    assert not Path(untouched.path).exists()
    with claim(Path(elsewhere.path)):  # another invocation is running it
        assert not runner._after_worker_death(elsewhere, error).ran_here
    assert json.loads(Path(elsewhere.path).read_text())["status"] == "running"


def _workers_die_at_start(tmp_path, monkeypatch):
    """Every spawned worker exits before it runs anything (an OOM kill, an import error
    while the tree is being edited)."""
    import os
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sys\n"
        "if '--multiprocessing-fork' in sys.argv:\n"
        "    os._exit(1)\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), *sys.path]))
    monkeypatch.setattr(runner, "POOL_RETRY_PAUSE", 0.0)


def test_runs_whose_worker_died_before_they_started_are_lost_and_fail_the_command(
    tmp_path, monkeypatch, capsys
):
    """They were counted as 'finished or running in another invocation sharing --out'
    and the command exited 0."""
    _workers_die_at_start(tmp_path, monkeypatch)
    out = tmp_path / "out"
    code = main(["bench", "synthetic", "--problems", "branin", "--optimizers", "random",
                 "--seeds", "2", "--budget", "3", "--no-progress", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.startswith(
        "0 runs executed, 0 already finished, 2 not finished (their worker process died; "
        "rerun to run them); report:"
    )
    assert "2 runs were not finished: their worker process died" in captured.err
    assert not list(out.rglob("seed-*.json"))


def test_a_record_written_since_the_run_was_planned_is_another_invocations(tmp_path):
    """A failed record there when the run was planned is retried; one written since,
    by another invocation sharing --out, is that invocation's result, also when this
    invocation's worker died before it started (it was counted as lost)."""
    from ensembo.bench.record_stamps import stamp

    earlier, later = runner.plan("synthetic", ["random"], [0, 1], 3, tmp_path,
                                 problems=["branin"])
    failed = {"status": "failed", "error": "ValueError: boom"}
    Path(earlier.path).parent.mkdir(parents=True, exist_ok=True)
    Path(earlier.path).write_text(json.dumps(failed))
    assert runner.attempt(earlier, stamp(Path(earlier.path))).ran_here  # retried
    seen = stamp(Path(later.path))
    Path(later.path).write_text(json.dumps(failed))
    elsewhere = runner.Outcome(record=failed, ran_here=False)
    assert runner._after_worker_death(later, RuntimeError("worker died"), seen) == elsewhere
    assert runner.attempt(later, seen) == elsewhere
