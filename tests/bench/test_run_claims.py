"""A run's claim: one holder at a time, free again once its holder is gone."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ensembo.bench import run_claims
from ensembo.bench.run_claims import CLAIM_SUFFIX, claim, claim_path

pytestmark = pytest.mark.skipif(run_claims.fcntl is None, reason="claims lock on POSIX only")


def test_a_claim_held_by_another_is_refused_and_released_when_done(tmp_path):
    record = tmp_path / "seed-0.json"
    with claim(record) as first:
        with claim(record) as second:
            assert (first.held, second.held) == (True, False)
        assert claim_path(record).exists()
    assert not claim_path(record).exists()
    with claim(record) as again:
        assert again.held


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
        with claim(record) as taken:
            assert not taken.held
    finally:
        holder.kill()
        holder.wait()
    assert claim_path(record).exists()
    with claim(record) as taken:
        assert taken.held


def test_of_claimants_racing_for_a_stale_claim_exactly_one_wins(tmp_path):
    record = tmp_path / "seed-0.json"
    claim_path(record).write_text("pid 4194999 on another-host since 2024-01-01\n")
    claimants = 8
    start, everyone_tried = threading.Barrier(claimants), threading.Barrier(claimants)

    def try_to_claim(_):
        start.wait(timeout=10)
        with claim(record) as taken:
            everyone_tried.wait(timeout=10)  # a winner holds on until all have tried
            return taken.held

    with ThreadPoolExecutor(claimants) as pool:
        won = sorted(pool.map(try_to_claim, range(claimants)))
    assert won == [False] * (claimants - 1) + [True]


def test_a_claimant_that_locked_a_released_sidecar_tries_the_new_one(tmp_path, monkeypatch):
    """The holder deletes the sidecar before unlocking it: a claimant that opened the old
    file and locks it after the release must not hold a file no longer at the path,
    while a third claims the new one."""
    record = tmp_path / "seed-0.json"
    opened = []
    real_open = run_claims._open

    def open_then_release(path):
        handle = real_open(path)
        opened.append(path)
        if len(opened) == 1:  # the old holder lets go between this open and its lock
            claim_path(record).unlink()
        return handle

    monkeypatch.setattr(run_claims, "_open", open_then_release)
    with claim(record) as taken:
        assert taken.held and len(opened) == 2
        assert claim_path(record).exists()


def _claim_files_of_another_user(monkeypatch):
    """Opening a claim file for writing, or deleting one, is refused as for another
    user's 0644 file in a shared group-writable --out (root may write any file)."""
    real_os_open, real_open, real_unlink = os.open, open, os.unlink

    def refused(path):
        return PermissionError(errno.EACCES, "Permission denied", str(path))

    def os_open(path, flags, *args, **kwargs):
        if str(path).endswith(CLAIM_SUFFIX) and flags & (os.O_WRONLY | os.O_RDWR):
            raise refused(path)
        return real_os_open(path, flags, *args, **kwargs)

    def builtin_open(path, mode="r", *args, **kwargs):
        if str(path).endswith(CLAIM_SUFFIX) and set(mode) & set("wa+"):
            raise refused(path)
        return real_open(path, mode, *args, **kwargs)

    def unlink(path, *args, **kwargs):
        if str(path).endswith(CLAIM_SUFFIX):
            raise refused(path)
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(run_claims.os, "open", os_open)
    monkeypatch.setattr(run_claims.os, "unlink", unlink)
    monkeypatch.setattr(run_claims, "open", builtin_open, raising=False)


def test_a_claim_file_of_another_user_is_locked_read_only(tmp_path, monkeypatch):
    """open(sidecar, 'a+') raised PermissionError out of the bench; flock needs no
    writable handle, so the claim is taken (and refused to a second claimant) as ever."""
    record = tmp_path / "seed-0.json"
    left = "pid 12345 on another-host since 2026-01-01\n"
    claim_path(record).write_text(left)
    _claim_files_of_another_user(monkeypatch)
    with run_claims.claim(record) as held:
        assert held == run_claims.Claim(held=True, locked=True)
        with claim(record) as second:
            assert not second.held
        assert claim_path(record).read_text() == left  # not written: it is not ours
    assert claim_path(record).exists()  # not ours to delete either


def test_a_claim_that_cannot_be_opened_at_all_warns_and_is_no_lock(tmp_path, caplog):
    """Any other error opening the claim file is the 'cannot lock' warning, not a crash."""
    record = tmp_path / "not-a-folder" / "seed-0.json"
    (tmp_path / "not-a-folder").write_text("a file where the run's folder should be")
    with run_claims.claim(record) as held:
        assert held == run_claims.Claim(held=True, locked=False)
    assert "cannot lock the run's claim" in caplog.text
