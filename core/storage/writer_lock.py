"""One live writer per study file.

Two processes continuing the same SQLite study would number new trials from their own
histories and overwrite each other's results, and each would mark the other's running
trials interrupted. So a study that writes a file holds an exclusive lock on a sidecar
file (``study.db.lock``) for as long as it lives; a second process is refused, naming
the holder. Reading a study (``ensembo report``) takes no lock.

Two Study objects of one process would collide the same way, so one of them writes at a
time: a newer one (a script that ``Study.load``s the file again, a re-run notebook
cell, a refitted estimator) takes the file over, and the older one's later writes are
refused. A newer one that let go without writing hands the file back (the older one's
history is still the file's). ``fcntl`` locks exist on POSIX only; elsewhere only the
objects of one process are kept apart.

Locks, always taken in this order (never the other way round, so no two threads wait
on each other): a Study's own lock if its caller holds one; a file's write mutex
(:func:`_write_mutex`: a write's check and commit, and a takeover, one at a time); the
storage's own ``_lock`` (its connection); ``_guard`` (this module's state) last, held
only briefly and never while waiting for anything else. A takeover (a new Study claiming
its storage) holds no storage's ``_lock``. A claim's release takes only ``_guard``: it
may run from a garbage collection anywhere, even inside a write.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ensembo.errors import StorageError

logger = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

_held: dict[Path, _Lock] = {}  # lock file -> this process's hold on it
_mutexes: dict[Path, threading.RLock] = {}  # lock file -> its write mutex (see the docstring)


class _Guard:
    """The lock over this module's state. A garbage collection may run a dead claim's
    ``__del__`` inside a guarded section (any allocation can trigger one); releasing it
    there would change ``_held`` under the feet of the code that holds the guard, so such
    releases wait in ``pending`` until the outermost guarded section ends."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._local = threading.local()
        self.pending: list[tuple[Path, _Writer]] = []

    def held_here(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def __enter__(self) -> None:
        self._lock.acquire()
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        try:
            while self._local.depth == 1 and self.pending:
                _release(*self.pending.pop())
        finally:
            self._local.depth -= 1
            self._lock.release()


_guard = _Guard()


class _Lock:
    """This process's OS lock on one study file (None where nothing can be locked), and
    the claim that may write the file now."""

    def __init__(self, handle: IO[str] | None):
        self.handle = handle
        self.writer: _Writer | None = None

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()  # closing the file releases the lock


class _Writer:
    """What the lock knows of one claim; kept apart from the claim, so that the lock
    does not keep a study's claim alive past its study."""

    def __init__(self, predecessor: _Writer | None):
        self.predecessor = predecessor
        self.wrote = False
        self.released = False

    def handed_back_to(self) -> _Writer | None:
        """The newest earlier writer still live whose history is the file's (no writer
        since wrote), to take the file back when this one lets go."""
        current = self
        while not current.wrote and current.predecessor is not None:
            current = current.predecessor
            if not current.released:
                return current
        return None


class WriterClaim:
    """One Study object's claim to write a study file; :meth:`release` it when done
    (a claim that is garbage-collected releases itself)."""

    def __init__(self, lock_path: Path, study_path: Path, writer: _Writer):
        self._lock_path = lock_path
        self._study_path = study_path
        self._pid = os.getpid()
        self._writer = writer

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the file's write mutex around a write, checked first: a takeover (which
        takes the mutex too) cannot come between this claim's check and its commit."""
        with _write_mutex(self._lock_path):
            self.check_writable()
            yield

    def check_writable(self) -> None:
        """Refuse a write once a newer claim of this process took the file over (this
        claim's study numbers trials from a history that is no longer the file's), and
        in any other process than the one that made the claim."""
        if os.getpid() != self._pid:
            raise StorageError(
                f"{self._study_path}: a study writes its file only from the process that "
                f"opened it (pid {self._pid}), not from a child process (pid {os.getpid()}) "
                "such as a parallel worker: record results in the study's own process"
            )
        with _guard:
            if self._is_current():
                self._writer.wrote = True
                return
        raise StorageError(
            f"{self._study_path}: another Study object of this process has opened this file "
            "since, and writes it now; this one can no longer write it (both would number "
            "new trials from their own histories and overwrite each other's): use the newer "
            "one, or close it and Study.load the file again"
        )

    def _is_current(self) -> bool:
        lock = _held.get(self._lock_path)
        return lock is not None and lock.writer is self._writer

    def release(self) -> None:
        if os.getpid() == self._pid:  # a forked child holds no lock of the parent's
            _release(self._lock_path, self._writer)

    # Kept on the class: at interpreter exit the module's globals may be gone already
    # (the process's end releases the lock anyway).
    _finalizing = staticmethod(sys.is_finalizing)

    def __del__(self) -> None:
        if self._finalizing() or os.getpid() != self._pid:
            return
        if _guard.held_here():  # a collection inside a guarded section: see _Guard
            _guard.pending.append((self._lock_path, self._writer))
        else:
            self.release()


def _release(lock_path: Path, writer: _Writer) -> None:
    """Let go of ``writer``'s claim: the file goes back to the writer whose history is
    still the file's, or is unlocked when there is none."""
    with _guard:
        if writer.released:
            return
        writer.released = True
        lock = _held.get(lock_path)
        if lock is None or lock.writer is not writer:  # superseded
            return
        lock.writer = writer.handed_back_to()
        if lock.writer is None:
            del _held[lock_path]
            lock.close()


def _write_mutex(lock_path: Path) -> threading.RLock:
    """The mutex of one study file's writes and takeovers in this process. Re-entrant:
    Ctrl-C can land just after ``with mutex:`` acquired it and before the block that
    releases it begins, and the interrupt's own writes (trials marked interrupted) come
    from the same thread; a plain lock would then wait for itself for ever."""
    with _guard:
        return _mutexes.setdefault(lock_path, threading.RLock())


def claim_writer(study_path: Path) -> WriterClaim:
    """Claim ``study_path`` for a study of this process: refused if another process
    holds it; a current writer of this process is superseded (see the module's
    docstring)."""
    resolved = study_path.resolve()  # a symlink to the study locks the study itself
    lock_path = resolved.with_name(resolved.name + ".lock")
    with _write_mutex(lock_path), _guard:  # no write of the file is between check and commit
        lock = _held.get(lock_path)
        if lock is None:
            lock = _held[lock_path] = _Lock(_acquire(lock_path, study_path))
        lock.writer = _Writer(predecessor=lock.writer)
        return WriterClaim(lock_path, study_path, lock.writer)


def _forget_in_child() -> None:
    """A forked child (a process pool's worker) inherits the lock files: it closes its
    copies, so the lock goes when the study's process releases it, not when the last
    worker ends."""
    global _guard
    _guard = _Guard()  # another thread may have held it at the fork
    for lock in _held.values():
        lock.close()
    _held.clear()
    _mutexes.clear()  # likewise


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _acquire(lock_path: Path, study_path: Path) -> IO[str] | None:
    """The locked lock file; None where nothing can be locked."""
    if fcntl is None:
        return None
    try:
        handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 (held while the study lives)
    except OSError as error:
        raise StorageError(f"{lock_path}: cannot create the study's lock file "
                           f"({error.strerror or error})") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StorageError(
            f"{study_path}: in use by {holder}. Two processes continuing one study would "
            "overwrite each other's trials: wait for it to finish, or choose another storage "
            "path ('ensembo report' reads a running study)"
        ) from None
    except OSError as error:  # NFS without lockd, some FUSE/SMB mounts
        handle.close()
        logger.warning("%s: cannot lock the study (%s); nothing stops a second process from "
                       "writing it", study_path, error.strerror or error)
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    handle.flush()
    return handle
