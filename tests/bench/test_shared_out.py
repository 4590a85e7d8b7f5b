"""Two ``ensembo bench`` invocations sharing one ``--out``: each counts as executed only
the runs it ran itself, not those the other finished or is running."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import attrs

from ensembo.bench import runner
from ensembo.bench.benchmark import run_benchmark
from ensembo.cli import main

BRANIN_TWO_SEEDS = ["bench", "synthetic", "--problems", "branin", "--optimizers", "random",
                    "--seeds", "2", "--budget", "3", "--no-progress"]


def _running_here(spec: runner.RunSpec) -> None:
    """The ``running`` marker of a live process (this one): another invocation's run."""
    marker = {**attrs.asdict(spec), "status": "running", "pid": os.getpid(),
              "host": platform.node()}
    Path(spec.path).parent.mkdir(parents=True, exist_ok=True)
    Path(spec.path).write_text(json.dumps(marker))


def test_a_run_another_invocation_is_running_is_not_counted_as_executed(tmp_path, capsys):
    """It was: 'N runs executed' counted every run missing when the command started."""
    seed_0, _ = runner.plan("synthetic", ["random"], [0, 1], 3, tmp_path, problems=["branin"])
    _running_here(seed_0)
    assert main([*BRANIN_TWO_SEEDS, "--out", str(tmp_path)]) == 0
    said = capsys.readouterr().out  # was "2 runs executed"
    assert "1 runs executed, 0 already finished, 1 finished or running in another" in said
    assert json.loads(Path(seed_0.path).read_text())["status"] == "running"  # left alone


def test_the_result_says_apart_which_runs_another_invocation_took(tmp_path):
    seed_0, _ = runner.plan("synthetic", ["random"], [0, 1], 3, tmp_path, problems=["branin"])
    _running_here(seed_0)
    result = run_benchmark("synthetic", optimizers=["random"], problems=["branin"], seeds=2,
                           budget=3, out=tmp_path, progress=False)
    assert (result.executed, result.skipped_as_finished, result.left_to_others) == (1, 1, 1)
    assert result.counts() == (
        "1 runs executed, 0 already finished, 1 finished or running in another invocation "
        "sharing --out"
    )


def test_a_run_finished_elsewhere_after_the_pool_started_is_not_returned_as_executed(tmp_path):
    """The worker reads the record back instead of running: it is not this pool's run."""
    [spec] = runner.plan("synthetic", ["random"], [0], 3, tmp_path, problems=["branin"])
    finished_elsewhere = runner.execute(spec)
    records, attempted, seen = [], set(), []
    runner._one_pool([spec], 1, records, attempted, seen.append)
    assert records == []  # was [the other invocation's record]
    assert seen == [finished_elsewhere] and attempted == {spec.path}
