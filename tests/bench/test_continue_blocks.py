"""``benchmarks/continue_blocks.py``: which open block starts next, which blocks other
processes run, the deadline, and the archive it commits."""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import importlib.util
import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "continue_blocks.py"
spec = importlib.util.spec_from_file_location("continue_blocks", SCRIPT)
continue_blocks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(continue_blocks)


def write_record(out: Path, dataset: str, seed: int, hours: float, status: str = "complete",
                 budget: int = 200) -> None:
    path = out / "ensembles" / "eo-wide" / "cash" / dataset / f"seed-{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"space": "cash", "dataset": dataset, "seed": seed,
                                "status": status, "budget": budget,
                                "wall_seconds": hours * 3600}))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "t")
        monkeypatch.setenv(f"{variable}_EMAIL", "t@t")
    repo = tmp_path / "repo"
    (repo / "benchmarks" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def runner(tmp_path: Path, repo: Path | None = None, queue=None):
    args = argparse.Namespace(out=tmp_path / "out", repo=repo, experiment="eo-wide", budget=200)
    return continue_blocks.Runner(args, queue if queue is not None else [], {}, math.inf)


def commits(repo: Path) -> list[str]:
    log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s", "--name-only"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in log.splitlines() if line]


def test_open_blocks_go_lowest_seed_first_then_longest_first(tmp_path):
    write_record(tmp_path, "slow", 0, 2.0)
    write_record(tmp_path, "slow", 1, 4.0)
    write_record(tmp_path, "quick", 0, 0.5)
    write_record(tmp_path, "quick", 1, 0.5)
    write_record(tmp_path, "quick", 2, 0.5)
    times = continue_blocks.landed_times(tmp_path, "eo-wide", budget=200)
    expected = continue_blocks.expected_seconds(times, slack=1.0)
    assert expected == {("cash", "slow"): 4 * 3600, ("cash", "quick"): 0.5 * 3600}  # longest
    problems = [("cash", "quick"), ("cash", "slow"), ("cash", "new")]
    queue = continue_blocks.open_blocks(problems, [2, 3], times, expected)
    # a problem with no landed block counts as taking for ever
    assert queue == [(2, "cash", "new"), (2, "cash", "slow"),
                     (3, "cash", "new"), (3, "cash", "slow"), (3, "cash", "quick")]


def test_a_failed_block_or_one_of_another_budget_is_not_landed(tmp_path):
    write_record(tmp_path, "a", 0, 1.0)
    write_record(tmp_path, "a", 2, 0.01, status="failed")
    write_record(tmp_path, "b", 2, 0.02, budget=5)
    times = continue_blocks.landed_times(tmp_path, "eo-wide", budget=200)
    assert times == {("cash", "a", 0): 3600.0}
    queue = continue_blocks.open_blocks([("cash", "a"), ("cash", "b")], [2], times,
                                        continue_blocks.expected_seconds(times, 1.0))
    assert queue == [(2, "cash", "b"), (2, "cash", "a")]


def test_a_block_starts_only_if_it_is_expected_to_end_in_time():
    expected = {("cash", "slow"): 3 * 3600.0, ("cash", "quick"): 1800.0}
    queue = [(2, "cash", "new"), (2, "cash", "slow"), (2, "cash", "quick"), (3, "cash", "slow")]
    assert continue_blocks.take_fitting(queue, expected, seconds_left=3600) == (2, "cash", "quick")
    assert continue_blocks.take_fitting(queue, expected, seconds_left=3600) is None
    assert queue == [(2, "cash", "new"), (2, "cash", "slow"), (3, "cash", "slow")]
    later = continue_blocks.take_fitting(queue, expected, seconds_left=4 * 3600)
    assert later == (2, "cash", "slow")
    assert continue_blocks.take_fitting(queue, expected, seconds_left=math.inf) == (
        2, "cash", "new")  # with no deadline, a block never seen runs too


def test_the_deadline_is_the_next_such_time_within_twelve_hours():
    now = dt.datetime(2026, 12, 7, 23, 0, tzinfo=dt.UTC)
    assert continue_blocks.deadline("01:30", now) == now.timestamp() + 2.5 * 3600
    with pytest.raises(SystemExit, match="22.0 hours away"):
        continue_blocks.deadline("21:00", now)  # just past: not tomorrow's
    with pytest.raises(SystemExit, match="not a time of day"):
        continue_blocks.deadline("half past five", now)
    assert continue_blocks.deadline(None, now) == math.inf


def test_each_landed_block_is_archived_and_committed_alone(tmp_path, repo):
    (repo / "other.txt").write_text("staged, not part of the records commit")
    subprocess.run(["git", "-C", str(repo), "add", "other.txt"], check=True)
    write_record(tmp_path / "out", "quick", 2, 0.5)
    write_record(tmp_path / "out", "slow", 3, 1.0)
    (tmp_path / "out" / "ensembles" / "eo-wide" / "cash" / "slow" / "seed-4.tmp").write_text("")
    run = runner(tmp_path, repo)
    run.archive_and_commit()
    run.archive_and_commit()  # nothing new: no second commit
    assert commits(repo) == ["records: eo-wide, 2 blocks (seed 2: 1; seed 3: 1)",
                             "benchmarks/records/eo-wide.tar.xz"]
    listing = subprocess.run(["tar", "-tJf", str(repo / "benchmarks/records/eo-wide.tar.xz")],
                             capture_output=True, text=True, check=True).stdout.split()
    assert [n for n in listing if not n.endswith("/")] == [
        "ensembles/eo-wide/cash/quick/seed-2.json", "ensembles/eo-wide/cash/slow/seed-3.json"]


def test_the_commit_waits_for_another_git_process_to_release_the_index(tmp_path, repo):
    write_record(tmp_path / "out", "quick", 2, 0.5)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    threading.Timer(1.0, lock.unlink).start()
    runner(tmp_path, repo).archive_and_commit()
    assert commits(repo)[0] == "records: eo-wide, 1 blocks (seed 2: 1)"


def test_a_block_that_did_not_land_is_queued_once_more(tmp_path, capsys):
    run = runner(tmp_path, queue=[(3, "cash", "b")])
    run.settle((2, "cash", "a"), "exit status 1")
    assert run.queue == [(2, "cash", "a"), (3, "cash", "b")]
    run.queue.pop(0)
    run.settle((2, "cash", "a"), "exit status 1")
    assert run.queue == [(3, "cash", "b")]
    assert "left for another session" in capsys.readouterr().out


def sleeper(cwd: Path, *arguments: str | bytes) -> subprocess.Popen:
    """A process whose command line looks like an ensembles run."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                "bench", "ensembles", *arguments], cwd=cwd)
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    for _ in range(100):  # the new image's command line shows a moment after exec
        if b"ensembles" in cmdline.read_bytes():
            break
        time.sleep(0.05)
    return process


def test_blocks_other_processes_run_are_found_however_their_options_are_spelled(tmp_path):
    problems = [("cash", "quick"), ("cash", "slow")]
    out = tmp_path / "out"
    out.mkdir()
    processes = [
        sleeper(tmp_path, "--optimizers", "eo-wide", "--seeds", "2-2", "--problems", "slow",
                "--out", "out"),  # relative to its own directory
        sleeper(out, "--optim=eo-large,eo-wide:cash", "--seeds=3-3", "--prob", "quick"),
        sleeper(tmp_path, "--optimizers", "eo-wide", "--seeds", "2-2", "--out", "elsewhere"),
        sleeper(tmp_path, "--optimizers", "eo-large", "--seeds", "2-2", "--out", "out"),
        sleeper(tmp_path, b"caf\xe9", "--out", "out"),  # not UTF-8
    ]
    try:
        assert continue_blocks.running_blocks("eo-wide", problems, out) == {
            processes[0].pid: (2, "cash", "slow"), processes[1].pid: (3, "cash", "quick")}
        whole_seed = sleeper(out, "--optimizers", "eo-wide:cash", "--seeds", "3-3")
        processes.append(whole_seed)
        with pytest.raises(SystemExit, match=f"process {whole_seed.pid} runs eo-wide"):
            continue_blocks.running_blocks("eo-wide", problems, out)
    finally:
        for process in processes:
            process.kill()


def test_a_second_script_on_the_same_records_is_refused(tmp_path):
    with open(tmp_path / ".continue_blocks.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SystemExit, match="another continue_blocks.py runs on"):
            continue_blocks.main(["--ensembo", "ensembo", "--experiment", "eo-wide",
                                  "--seeds", "2", "--budget", "200", "--out", str(tmp_path)])
