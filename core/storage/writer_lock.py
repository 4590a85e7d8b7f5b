"""One live study per file.

Two processes continuing the same SQLite study would number new trials from their own
histories and overwrite each other's results, and each would mark the other's running
trials interrupted. So a study that writes a file holds an exclusive lock on a sidecar
file (``study.db.lock``) for as long as it lives; a second process is refused, naming
the holder. Reading a study (``ensembo report``) takes no lock.

Study objects of one process share the lock (a script may hold a study and
``Study.load`` it again). ``fcntl`` locks exist on POSIX only; elsewhere nothing is
locked.
"""

from __future__ import annotations

import logging
import os
import socket
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

_held: dict[Path, _Lock] = {}  # lock file -> the lock this process holds on it
_guard = threading.Lock()


class _Lock:
    def __init__(self, handle: IO[str]):
        self.handle = handle
        self.users = 0


class WriterClaim:
    """This process's claim to write one study file; :meth:`release` it when done
    (a claim that is garbage-collected releases itself)."""

    def __init__(self, lock_path: Path):
        self._lock_path = lock_path
        self._released = False

    def release(self) -> None:
        with _guard:
            if self._released:
                return
            self._released = True
            lock = _held.get(self._lock_path)
            if lock is None:  # a forked child, which let go of its copies
                return
            lock.users -= 1
            if lock.users == 0:
                del _held[self._lock_path]
                lock.handle.close()  # closing the file releases the lock

    def __del__(self) -> None:
        self.release()


def claim_writer(study_path: Path) -> WriterClaim | None:
    """Claim ``study_path`` for this process; refused if another process holds it.
    None where nothing can be locked (no ``fcntl``, a filesystem without locks)."""
    if fcntl is None:
        return None
    resolved = study_path.resolve()  # a symlink to the study locks the study itself
    lock_path = resolved.with_name(resolved.name + ".lock")
    with _guard:
        lock = _held.get(lock_path)
        if lock is None:
            handle = _acquire(lock_path, study_path)
            if handle is None:
                return None
            lock = _held[lock_path] = _Lock(handle)
        lock.users += 1
    return WriterClaim(lock_path)


def _forget_in_child() -> None:
    """A forked child (a process pool's worker) inherits the lock files: it closes its
    copies, so the lock goes when the study's process releases it, not when the last
    worker ends."""
    global _guard
    _guard = threading.Lock()  # another thread may have held it at the fork
    for lock in _held.values():
        lock.handle.close()
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _acquire(lock_path: Path, study_path: Path) -> IO[str] | None:
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
