"""``benchmarks/continue_blocks.py``: which open block starts next, and the archive it commits."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "continue_blocks.py"
spec = importlib.util.spec_from_file_location("continue_blocks", SCRIPT)
continue_blocks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(continue_blocks)


def write_record(out: Path, dataset: str, seed: int, hours: float) -> None:
    path = out / "ensembles" / "eo-wide" / "cash" / dataset / f"seed-{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"space": "cash", "dataset": dataset, "seed": seed,
                                "wall_seconds": hours * 3600}))


def test_open_blocks_go_lowest_seed_first_then_longest_first(tmp_path):
    write_record(tmp_path, "slow", 0, 2.0)
    write_record(tmp_path, "slow", 1, 4.0)
    write_record(tmp_path, "quick", 0, 0.5)
    write_record(tmp_path, "quick", 1, 0.5)
    write_record(tmp_path, "quick", 2, 0.5)
    times = continue_blocks.landed_times(tmp_path, "eo-wide")
    expected = continue_blocks.expected_seconds(times, slack=1.0)
    assert expected == {("cash", "slow"): 3 * 3600, ("cash", "quick"): 0.5 * 3600}
    problems = [("cash", "quick"), ("cash", "slow"), ("cash", "new")]
    queue = continue_blocks.open_blocks(problems, [2, 3], times, expected)
    # a problem with no landed block counts as the longest known; ties keep list order
    assert queue == [(2, "cash", "slow"), (2, "cash", "new"),
                     (3, "cash", "slow"), (3, "cash", "new"), (3, "cash", "quick")]


def test_a_block_starts_only_if_it_is_expected_to_end_in_time():
    expected = {("cash", "slow"): 3 * 3600.0, ("cash", "quick"): 1800.0}
    queue = [(2, "cash", "slow"), (2, "cash", "quick"), (3, "cash", "slow")]
    assert continue_blocks.take_fitting(queue, expected, seconds_left=3600) == (2, "cash", "quick")
    assert continue_blocks.take_fitting(queue, expected, seconds_left=3600) is None
    assert queue == [(2, "cash", "slow"), (3, "cash", "slow")]  # kept for the next session
    later = continue_blocks.take_fitting(queue, expected, seconds_left=4 * 3600)
    assert later == (2, "cash", "slow")


def test_each_landed_block_is_archived_and_committed_alone(tmp_path, monkeypatch):
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "t")
        monkeypatch.setenv(f"{variable}_EMAIL", "t@t")
    repo, out = tmp_path / "repo", tmp_path / "out"
    (repo / "benchmarks" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "other.txt").write_text("staged, not part of the records commit")
    subprocess.run(["git", "-C", str(repo), "add", "other.txt"], check=True)
    write_record(out, "quick", 2, 0.5)
    write_record(out, "slow", 3, 1.0)
    args = argparse.Namespace(out=out, repo=repo, experiment="eo-wide")
    continue_blocks.archive_and_commit(args, threading.Lock())
    log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s", "--name-only"],
                         capture_output=True, text=True, check=True).stdout
    assert log.split() == ["records:", "eo-wide,", "2", "blocks", "(seed", "2:", "1;", "seed",
                           "3:", "1)", "benchmarks/records/eo-wide.tar.xz"]  # not other.txt
    with tarfile.open(repo / "benchmarks" / "records" / "eo-wide.tar.xz") as archive:
        names = [n for n in archive.getnames() if n.endswith(".json")]
    assert names == ["ensembles/eo-wide/cash/quick/seed-2.json",
                     "ensembles/eo-wide/cash/slow/seed-3.json"]


def test_blocks_another_process_runs_are_found_and_a_whole_seed_is_refused(tmp_path):
    def sleeper(*options: str) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                    "bench", "ensembles", "--optimizers", *options])
        cmdline = Path(f"/proc/{process.pid}/cmdline")
        for _ in range(100):  # the new image's command line shows a moment after exec
            if b"ensembles" in cmdline.read_bytes():
                break
            time.sleep(0.05)
        return process

    problems = [("cash", "quick"), ("cash", "slow")]
    block = sleeper("eo-wide", "--seeds", "2-2", "--problems", "slow", "--out", str(tmp_path))
    elsewhere = sleeper("eo-wide", "--seeds", "2-2", "--out", str(tmp_path / "other"))
    try:
        assert continue_blocks.running_blocks("eo-wide", problems, tmp_path) == {
            block.pid: (2, "cash", "slow")}
        whole_seed = sleeper("eo-wide:cash", "--seeds", "3-3", "--out", str(tmp_path))
        try:
            with pytest.raises(SystemExit, match=f"process {whole_seed.pid} runs eo-wide"):
                continue_blocks.running_blocks("eo-wide", problems, tmp_path)
        finally:
            whole_seed.kill()
    finally:
        block.kill()
        elsewhere.kill()


def test_the_commit_waits_for_another_git_process_to_release_the_index(tmp_path, monkeypatch):
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "t")
        monkeypatch.setenv(f"{variable}_EMAIL", "t@t")
    repo, out = tmp_path / "repo", tmp_path / "out"
    (repo / "benchmarks" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write_record(out, "quick", 2, 0.5)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    threading.Timer(1.0, lock.unlink).start()
    continue_blocks.archive_and_commit(
        argparse.Namespace(out=out, repo=repo, experiment="eo-wide"), threading.Lock())
    log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    assert log.strip() == "records: eo-wide, 1 blocks (seed 2: 1)"
