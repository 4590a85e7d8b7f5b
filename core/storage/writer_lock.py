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
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import IO

from ensembo.errors import StorageError

logger = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

_held: dict[Path, _Lock] = {}  # lock file -> this process's hold on it
_guard = threading.RLock()  # reentrant: a claim's __del__ may run while it is held


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

    def check_writable(self) -> None:
        """Refuse a write once a newer claim of this process took the file over: this
        claim's study numbers trials from a history that is no longer the file's."""
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
        if lock is None:  # a forked child let go of its copies; or released, superseded
            return os.getpid() != self._pid
        return lock.writer is self._writer

    def release(self) -> None:
        with _guard:
            if self._writer.released:
                return
            self._writer.released = True
            lock = _held.get(self._lock_path)
            if lock is None or lock.writer is not self._writer:  # a forked child; superseded
                return
            lock.writer = self._writer.handed_back_to()
            if lock.writer is None:
                del _held[self._lock_path]
                lock.close()

    # Kept on the class: at interpreter exit the module's globals may be gone already
    # (the process's end releases the lock anyway).
    _finalizing = staticmethod(sys.is_finalizing)

    def __del__(self) -> None:
        if not self._finalizing():
            self.release()


def claim_writer(study_path: Path) -> WriterClaim:
    """Claim ``study_path`` for a study of this process: refused if another process
    holds it; a current writer of this process is superseded (see the module's
    docstring)."""
    resolved = study_path.resolve()  # a symlink to the study locks the study itself
    lock_path = resolved.with_name(resolved.name + ".lock")
    with _guard:
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
    _guard = threading.RLock()  # another thread may have held it at the fork
    for lock in _held.values():
        lock.close()
    _held.clear()


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
