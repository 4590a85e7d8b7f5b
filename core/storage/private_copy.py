"""Reading a study in a folder this process cannot write, through a private copy.

SQLite reads a file whose recent changes are in its write-ahead log (``X.db-wal``) only
where it can make the log's index (``X.db-shm``) beside it. In a read-only folder the
file can still be opened as immutable, but then SQLite ignores the log: the trials a
killed or running study left there went unseen (a report of 5 trials of 12, or "no
study stored here" when all were in the log). A copy of the file and its log in a
private temporary folder is read whole; it is removed with its connection.

The index is not copied: SQLite rebuilds it from the log, and an index copied from a
live study could be out of step with the log copied after it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import weakref
from pathlib import Path

from ensembo.errors import StorageError

_ATTEMPTS = 3
"""Copies tried while a running study keeps changing the file, before giving up."""


def write_ahead_log(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def holds_unmerged_log(path: Path) -> bool:
    """Whether ``path`` has a non-empty write-ahead log, whose changes an immutable
    reading would miss. A log that cannot even be looked at counts: copying it says why."""
    try:
        return write_ahead_log(path).stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


class PrivateCopyConnection(sqlite3.Connection):
    """A read-only connection to a private copy; closing it (or dropping it) removes
    the copy's folder."""

    def remove_when_closed(self, folder: str) -> None:
        self._removal = weakref.finalize(self, shutil.rmtree, folder, True)

    def close(self) -> None:
        try:
            super().close()
        finally:
            removal = getattr(self, "_removal", None)
            if removal is not None:
                removal()


def private_copy_connection(path: Path) -> PrivateCopyConnection:
    """A read-only connection to a copy of ``path`` and its write-ahead log, made in a
    private temporary folder. Refused, naming the log, where the copy cannot be made."""
    folder = tempfile.mkdtemp(prefix="ensembo-read-")
    try:
        copy = _copy_study(path, Path(folder))
        connection = sqlite3.connect(
            copy.as_uri() + "?mode=ro", uri=True, timeout=30.0, isolation_level=None,
            check_same_thread=False, factory=PrivateCopyConnection,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    connection.remove_when_closed(folder)
    return connection


def _copy_study(path: Path, folder: Path) -> Path:
    """Copy ``path`` and its log into ``folder``; again if a running study changed
    either meanwhile (a copy of the file from before a checkpoint with the log from
    after it would be inconsistent)."""
    log = write_ahead_log(path)
    copy = folder / path.name
    for _ in range(_ATTEMPTS):
        try:
            before = _signature(path), _signature(log)
            shutil.copyfile(path, copy)
            shutil.copyfile(log, write_ahead_log(copy))
            after = _signature(path), _signature(log)
        except OSError as error:
            raise StorageError(_refusal(path, f"a private copy to read failed: {error}")) from None
        if before == after:
            return copy
    raise StorageError(_refusal(path, f"it changed while it was copied, {_ATTEMPTS} times "
                                      "(a study is running there)"))


def _signature(path: Path) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


def _refusal(path: Path, reason: str) -> str:
    log = write_ahead_log(path)
    return (
        f"{path}: its folder cannot be written, so SQLite cannot read its write-ahead log "
        f"{log}, which holds trials not yet in the file, and {reason}; copy the study "
        f"({path.name} and {log.name}) to a writable folder and read it there"
    )
