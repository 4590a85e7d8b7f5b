"""Races around the one-writer rule (:mod:`ensembo.storage.writer_lock`): a forked child,
a takeover between a write's check and its commit, a garbage collection inside a claim.
Each interleaving is forced (events, patched hooks), not waited for."""

from __future__ import annotations

import contextlib
import gc
import os
import threading

import pytest

from ensembo import Study, TrialState
from ensembo.errors import StorageError
from ensembo.storage import SQLiteStorage, writer_lock

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
REFUSED_IN_CHILD = 3


def _in_child(action) -> int:
    """Exit status of ``action()`` run in a forked child: 0 wrote, 3 refused as a child."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        status = 1
        try:
            action()
            status = 0
        except StorageError as error:
            status = REFUSED_IN_CHILD if "only from the process that opened it" in str(error) else 2
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_superseded_study_cannot_write_from_a_forked_child(tmp_path):
    """A child's copy of the claims held no lock entry, so every claim passed: a study
    refused in the parent overwrote the newer one's trial from a child."""
    path = tmp_path / "study.db"
    old = Study(SPACE, storage=path)
    old.add({"x": 0.1}, 0.1)
    new = Study.load(path)
    new.add({"x": 0.2}, 0.2)
    assert _in_child(lambda: old.add({"x": 0.9}, 0.9)) == REFUSED_IN_CHILD
    assert [t.config["x"] for t in SQLiteStorage.existing(path).trials()] == [0.1, 0.2]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_even_the_current_study_writes_only_from_its_own_process(tmp_path):
    """A child writing behind its parent's back would number trials the parent does not
    know of; parallel workers evaluate, the study's process records."""
    path = tmp_path / "study.db"
    study = Study(SPACE, storage=path)
    assert _in_child(lambda: study.add({"x": 0.9}, 0.9)) == REFUSED_IN_CHILD
    study.add({"x": 0.1}, 0.1)  # the parent still writes
    assert [t.config["x"] for t in SQLiteStorage.existing(path).trials()] == [0.1]


def test_a_takeover_waits_for_a_write_that_passed_its_check(tmp_path, monkeypatch):
    """A's COMPLETE row landed after B had taken the file over and marked the trial
    interrupted: B re-ran it, and the result was lost."""
    path = tmp_path / "study.db"
    first = Study(SPACE, storage=path)
    trial = first.ask()
    checked, taking_over = threading.Event(), threading.Event()
    _pause_writer_after_its_check("A", checked, taking_over, monkeypatch)
    _announce_takeover("B", taking_over, monkeypatch)
    loaded = []

    def take_over():
        loaded.append(Study.load(path))
        taking_over.set()  # (the old code has no mutex to announce)

    writer = threading.Thread(target=first.tell, args=(trial, 0.123), name="A")
    writer.start()
    assert checked.wait(10)
    taker = threading.Thread(target=take_over, name="B")
    taker.start()
    writer.join(10)
    taker.join(10)
    assert [t.state for t in loaded[0].history] == [TrialState.COMPLETE]
    assert [t.loss for t in SQLiteStorage.existing(path).trials()] == [0.123]


def _pause_writer_after_its_check(thread, checked, resume, monkeypatch):
    """The write of ``thread`` stops right after its check passed, until ``resume``."""
    check = writer_lock.WriterClaim.check_writable

    def paused(self):
        check(self)
        if threading.current_thread().name == thread:
            checked.set()
            resume.wait(10)

    monkeypatch.setattr(writer_lock.WriterClaim, "check_writable", paused)


def _announce_takeover(thread, event, monkeypatch):
    """``event`` is set when ``thread`` is about to take a file's write mutex."""
    mutex_of = getattr(writer_lock, "_write_mutex", None)

    @contextlib.contextmanager
    def announced(mutex):
        if threading.current_thread().name == thread:
            event.set()
        with mutex:
            yield

    monkeypatch.setattr(writer_lock, "_write_mutex",
                        lambda lock_path: announced(mutex_of(lock_path)), raising=False)


def test_a_collection_inside_a_claim_does_not_drop_the_new_claims_lock(tmp_path, monkeypatch):
    """An unreachable current claim collected while a new one was being made released
    the file under it: the new study could never write, and the file was unlocked."""
    path = tmp_path / "study.db"
    _unreachable_writer(path)
    _collect_when_a_writer_is_made(monkeypatch)
    storage = SQLiteStorage(path)
    storage.claim_writer()
    storage.write_meta({"written": True})  # refused when attached to a dropped lock
    assert _locked_for_other_processes(path)
    storage.close()
    assert not _locked_for_other_processes(path)


def _unreachable_writer(path) -> None:
    """A storage that holds and wrote ``path``, kept only by a reference cycle."""
    storage = SQLiteStorage(path)
    storage.claim_writer()
    storage.write_meta({})
    storage.cycle = storage


def _collect_when_a_writer_is_made(monkeypatch) -> None:
    """A garbage collection at the allocation inside ``claim_writer``'s guarded section
    (where CPython may run one), and none before it."""
    class Collecting(writer_lock._Writer):
        def __init__(self, predecessor):
            gc.collect()
            super().__init__(predecessor)

    monkeypatch.setattr(writer_lock, "_Writer", Collecting)


@pytest.fixture(autouse=True)
def _no_stray_collections():
    """Only the collections a test forces (gc's state is restored after)."""
    enabled = gc.isenabled()
    gc.disable()
    yield
    if enabled:
        gc.enable()


def _locked_for_other_processes(path) -> bool:
    """Whether another open of the lock file is refused (flock locks per open file)."""
    fcntl = pytest.importorskip("fcntl")
    with open(f"{path.resolve()}.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_a_write_mutex_left_held_by_an_interrupt_does_not_block_the_same_thread(tmp_path):
    """Ctrl-C landing right after ``with mutex:`` acquired the file's write mutex (before
    the block that releases it) left it held; the interrupt's own writes, from the same
    thread, then waited for it for ever (a run hung after SIGINT in CI)."""
    from ensembo import Study
    from ensembo.storage import writer_lock

    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}
    study = Study(space, surrogate=None, storage=tmp_path / "s.db")
    trial = study.ask()
    resolved = (tmp_path / "s.db").resolve()
    mutex = writer_lock._write_mutex(resolved.with_name(resolved.name + ".lock"))

    def interrupted_then_recorded():
        mutex.acquire()  # as the interrupted ``with`` left it, in this thread
        study.tell(trial, state="interrupted", error="KeyboardInterrupt")

    worker = threading.Thread(target=interrupted_then_recorded, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the thread holding the mutex waited for itself"
    assert study.trials[0].state.value == "interrupted"
    study.close()
