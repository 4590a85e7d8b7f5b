"""Runs skipped for a missing anchor library are said on stderr, with what to install:
a plain ``pip install`` (no ``[bench]`` extra) printed "8 runs executed", exit 0, and
nothing else (audit)."""

from __future__ import annotations

import sys

from ensembo.bench import runner
from ensembo.bench.optimizers.base import MissingOutsideExtras
from ensembo.bench.skips import missing_fields, missing_libraries
from ensembo.cli import main

BRANIN = ["bench", "synthetic", "--problems", "branin", "--seeds", "1", "--budget", "3"]


def _in_process(runs, workers=1, on_done=None, on_lost=None, seen=None):
    """runner.run_all without its spawned workers, so a library blocked here is missing
    in the runs too."""
    return [runner.execute(run) for run in runs]


def test_skipped_runs_are_counted_apart_and_name_the_missing_libraries(
    tmp_path, monkeypatch, capsys
):
    for module in ("smac", "hyperopt"):
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setattr(runner, "run_all", _in_process)
    code = main([*BRANIN, "--optimizers", "random,smac-hpo,smac-bb,hyperopt-tpe",
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 0  # skipping is no failure: the rerun after installing runs them
    captured = capsys.readouterr()
    assert "1 runs executed, 3 skipped for a missing library, 0 already finished" in captured.out
    assert ("ensembo bench: 3 of 4 runs skipped for a missing library: smac, hyperopt "
            "(pip install 'ensembo[bench]')") in captured.err


def test_a_skipped_record_keeps_the_package_and_its_install_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "smac", None)
    [spec] = runner.plan("synthetic", ["smac-hpo"], [0], 3, tmp_path, problems=["branin"])
    record = runner.execute(spec)
    assert record["status"] == "skipped"
    assert record["missing_package"] == "smac"
    assert record["install_command"] == "pip install 'ensembo[bench]'"


def test_a_library_no_extra_installs_is_named_with_its_own_install_command():
    """optuna-gp without torch: the bench extra does not install it."""
    fields = missing_fields(MissingOutsideExtras("benchmark optimizer 'optuna-gp'", "torch"))
    bench = {"missing_package": "optuna", "install_command": "pip install 'ensembo[bench]'"}
    assert missing_libraries([bench, fields, bench]) == (
        "optuna (pip install 'ensembo[bench]'); torch (pip install torch)"
    )


def test_a_record_from_before_the_fields_gives_its_error():
    old = {"status": "skipped", "error": "needs the 'smac' package\nmore"}
    assert missing_libraries([old, old]) == "needs the 'smac' package"


def test_failed_runs_are_counted_among_the_runs_executed_not_the_skipped(
    tmp_path, monkeypatch, capsys
):
    """'1 of 4 runs failed' counted the 3 skipped runs, where the summary line said
    '1 runs executed'; and 'once it is installed' named two libraries (audit)."""
    from ensembo.bench.optimizers.random_optimizer import RandomOptimizer

    def fails(self, *args, **kwargs):
        raise RuntimeError("boom")

    for module in ("smac", "hyperopt"):
        monkeypatch.setitem(sys.modules, module, None)
    for name in ("minimize", "optimize", "run", "ask"):
        if hasattr(RandomOptimizer, name):
            monkeypatch.setattr(RandomOptimizer, name, fails)
    monkeypatch.setattr(runner, "run_all", _in_process)
    code = main([*BRANIN, "--optimizers", "random,smac-hpo,smac-bb,hyperopt-tpe",
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 1
    captured = capsys.readouterr()
    assert "1 runs executed, 3 skipped for a missing library" in captured.out
    assert "ensembo bench: 1 of 1 runs failed" in captured.err
    assert "once they are installed, the same command runs them" in captured.err
