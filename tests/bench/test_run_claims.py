"""A run's claim: one holder at a time, free again once its holder is gone."""

from __future__ import annotations

import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ensembo.bench import run_claims
from ensembo.bench.run_claims import claim_path, claimed

pytestmark = pytest.mark.skipif(run_claims.fcntl is None, reason="claims lock on POSIX only")


def test_a_claim_held_by_another_is_refused_and_released_when_done(tmp_path):
    record = tmp_path / "seed-0.json"
    with claimed(record) as first:
        with claimed(record) as second:
            assert (first, second) == (True, False)
        assert claim_path(record).exists()
    assert not claim_path(record).exists()
    with claimed(record) as again:
        assert again


def test_the_claim_of_a_killed_process_is_taken_over(tmp_path):
    """Its sidecar file stays behind, but its lock went with the process."""
    record = tmp_path / "seed-0.json"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         ("import fcntl, sys, time\n"
          f"f = open({str(claim_path(record))!r}, 'a+')\n"
          "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with claimed(record) as held:
            assert not held
    finally:
        holder.kill()
        holder.wait()
    assert claim_path(record).exists()
    with claimed(record) as held:
        assert held


def test_of_claimants_racing_for_a_stale_claim_exactly_one_wins(tmp_path):
    record = tmp_path / "seed-0.json"
    claim_path(record).write_text("pid 4194999 on another-host since 2024-01-01\n")
    claimants = 8
    start, everyone_tried = threading.Barrier(claimants), threading.Barrier(claimants)

    def claim(_):
        start.wait(timeout=10)
        with claimed(record) as held:
            everyone_tried.wait(timeout=10)  # a winner holds on until all have tried
            return held

    with ThreadPoolExecutor(claimants) as pool:
        assert sorted(pool.map(claim, range(claimants))) == [False] * (claimants - 1) + [True]


def test_a_claimant_that_locked_a_released_sidecar_tries_the_new_one(tmp_path, monkeypatch):
    """The holder deletes the sidecar before unlocking it: a claimant that opened the old
    file and locks it after the release must not hold a file no longer at the path,
    while a third claims the new one."""
    record = tmp_path / "seed-0.json"
    opened = []
    real_open = open

    def open_then_release(path, *args, **kwargs):
        handle = real_open(path, *args, **kwargs)
        opened.append(path)
        if len(opened) == 1:  # the old holder lets go between this open and its lock
            claim_path(record).unlink()
        return handle

    monkeypatch.setattr(run_claims, "open", open_then_release, raising=False)
    with claimed(record) as held:
        assert held and len(opened) == 2
        assert claim_path(record).exists()
