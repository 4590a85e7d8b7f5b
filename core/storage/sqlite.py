"""SQLite storage (stdlib ``sqlite3``): one file per study, one transaction per trial.

WAL journaling lets readers (``ensembo report``) look at a running study. A trial is
written in a single transaction when it changes state, so a process killed at any point
loses at most the trial being evaluated — which resume then re-runs. Predictions are
stored as ``.npy`` blobs so they come back with dtype and shape intact.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ensembo.errors import StorageError
from ensembo.storage import private_copy
from ensembo.storage.writer_lock import WriterClaim, claim_writer
from ensembo.trials import Trial, TrialState, json_text

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    number INTEGER PRIMARY KEY,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    loss REAL,
    predictions BLOB,
    info TEXT NOT NULL,
    error TEXT,
    started_at REAL,
    finished_at REAL,
    attempts INTEGER NOT NULL
);
"""
_COLUMNS = (
    "number, config, state, loss, predictions, info, error, started_at, finished_at, attempts"
)


_dumps = json_text


def _array_to_blob(array: np.ndarray | None) -> bytes | None:
    if array is None:
        return None
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def _blob_to_array(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.load(io.BytesIO(blob), allow_pickle=False)


_TABLES = {"meta", "trials"}


def _tables(path: Path) -> set[str]:
    """The tables in the database ``path``, looked at through a read-only connection."""
    with contextlib.closing(_read_only_connection(path)) as connection:
        return _table_names(connection, path)


def _table_names(connection: sqlite3.Connection, path: Path) -> set[str]:
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        return {row[0] for row in rows}
    except sqlite3.DatabaseError as error:
        raise StorageError(f"{path}: {_cannot_open(path, error)}") from error


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` that never writes. Where SQLite cannot make the
    write-ahead log's index beside the file (a read-only folder or file system), the
    file is read as immutable, which is what it is there; but an immutable reading
    ignores the log, so a file with a non-empty log (trials of a killed or running
    study) is read through a private copy of both (:mod:`ensembo.storage.private_copy`)."""
    try:
        return _checked(_connect_read_only(path.resolve().as_uri() + "?mode=ro"), path)
    except sqlite3.OperationalError as error:
        failed = error
    real = path.resolve()  # a link's log lies beside the file it leads to, as SQLite reads it
    if private_copy.holds_unmerged_log(real):
        connection = private_copy.private_copy_connection(real)
        try:
            return _checked(connection, path)
        except sqlite3.DatabaseError as error:  # the copy opens wherever the file can be read
            raise StorageError(f"{path}: {_explain(error)}") from error
    try:
        return _checked(_connect_read_only(path.resolve().as_uri() + "?mode=ro&immutable=1"),
                        path)
    except sqlite3.OperationalError:
        raise StorageError(f"{path}: {_cannot_open(path, failed)}") from failed


def _connect_read_only(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None,
                           check_same_thread=False)


def _checked(connection: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """``connection`` once it has read the file's schema; closed if it could not. A
    damaged file, or not a database, is refused by name; other errors (the folder) are
    the caller's to handle."""
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        return connection
    except sqlite3.OperationalError:
        connection.close()
        raise
    except sqlite3.DatabaseError as error:  # damaged, or not a database
        connection.close()
        raise StorageError(f"{path}: {_cannot_open(path, error)}") from error


def _holds_study(path: Path) -> bool:
    return _TABLES <= _tables(path)


def _refuse_other_database(path: Path) -> None:
    """A file holding another program's tables is refused before anything is written
    to it (ensembo's tables would be added next to them)."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with open(path, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\0":  # SQLite took a 1-byte file as empty
            raise StorageError(f"{path}: is not a SQLite database (another program's file, "
                               "or one damaged at its start); choose another storage path")
    tables = _tables(path)
    if tables and not _TABLES <= tables:
        raise StorageError(
            f"{path}: holds another program's database (tables {', '.join(sorted(tables))}), "
            "not an ensembo study; choose another storage path"
        )


class SQLiteStorage:
    """One study in one SQLite file; one transaction per state change.

    The connection may be used from any thread (a study shared by threads, each asking
    and telling); ``_lock`` serializes its use, which sqlite3 leaves to the caller.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(
                f"{self.path}: cannot create its folder ({error.strerror or error})"
            ) from None
        _refuse_other_database(self.path)
        self._lock = threading.RLock()
        self._claim: WriterClaim | None = None
        self.closed = False
        try:
            self._connection = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.DatabaseError as error:
            raise StorageError(f"{self.path}: {_cannot_open(self.path, error)}") from error
        self._close_when_dropped()
        try:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            self._closer()  # refused: the error's traceback would keep this storage alive
            raise StorageError(f"{self.path}: {_cannot_open(self.path, error)}") from error

    def _close_when_dropped(self) -> None:
        """Close the connection as soon as this storage is dropped without :meth:`close`
        (a study let go of). sqlite3 keeps a connection in a reference cycle (its
        statement cache refers back to it), so on its own it, and the file's three
        descriptors (``.db``, ``-wal``, ``-shm``), would last until a cyclic garbage
        collection, or for ever with ``gc`` disabled. Not at interpreter exit: a daemon
        thread may still be using the connection then, as before."""
        self._closer = weakref.finalize(self, self._connection.close)
        self._closer.atexit = False

    def claim_writer(self) -> None:
        """Hold the file for this process while the storage lives (see
        :mod:`ensembo.storage.writer_lock`): a study writes here."""
        if self._claim is None:
            self._claim = claim_writer(self.path)

    @contextlib.contextmanager
    def _named_errors(self):
        """SQLite errors name the file (sqlite3 gives only "database disk image is
        malformed" or "database is locked")."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            raise StorageError(f"{self.path}: {_explain(error)}") from error

    @classmethod
    def existing(cls, path: str | Path, read_only: bool = False) -> SQLiteStorage:
        """Open a file that already holds a study; never create or alter another file.
        ``read_only``: for readers (a report), which must work on a read-only file,
        folder or file system too."""
        path = Path(path)
        if not path.is_file():
            raise StorageError(f"{path}: no such study file")
        if not read_only:
            if not _holds_study(path):
                raise StorageError(f"{path}: no study stored here")
            return cls(path)
        storage = cls._reader(path)  # the tables are looked at on its connection, which
        try:  # in a read-only folder may read a copy made once (private_copy)
            if not _TABLES <= _table_names(storage._connection, path):
                raise StorageError(f"{path}: no study stored here")
        except BaseException:
            storage.close()
            raise
        return storage

    @classmethod
    def _reader(cls, path: Path) -> SQLiteStorage:
        """The storage of ``path`` on a connection that never writes."""
        storage = cls.__new__(cls)
        storage.path, storage._lock, storage._claim, storage.closed = (
            path, threading.RLock(), None, False)
        storage._connection = _read_only_connection(path)
        storage._close_when_dropped()
        return storage

    def read_meta(self) -> dict[str, Any] | None:
        with self._lock, self._named_errors():
            row = self._connection.execute("SELECT value FROM meta WHERE key = 'study'").fetchone()
        if row is None:
            return None
        with self._damaged("its settings (table meta)"):
            meta = json.loads(row[0])
            if not isinstance(meta, dict):
                raise ValueError(f"a {type(meta).__name__}, not a mapping")
        return meta

    @contextlib.contextmanager
    def _damaged(self, what: str):
        """A row that does not decode (edited by hand, a disk error) names the file and
        the row, not a bare JSONDecodeError or a KeyError deep in the study."""
        try:
            yield
        except (ValueError, TypeError, KeyError, AttributeError, EOFError, OSError) as error:
            raise StorageError(
                f"{self.path}: {what} cannot be read ({type(error).__name__}: {error}); the "
                f"file is damaged: {SALVAGE}"
            ) from error

    def write_meta(self, meta: dict[str, Any]) -> None:
        value = _dumps(meta)
        with self._writing():
            self._connection.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('study', ?)", (value,)
            )

    def put_trial(self, trial: Trial) -> None:
        self.put_trials([trial])

    def put_trials(self, trials: Sequence[Trial]) -> None:
        """Insert or replace ``trials`` in one transaction: a crash keeps all or none of
        them (a batch ask killed half-written resumed with part of its batch, and its
        proposer's state, stored for the whole batch, moved every later proposal)."""
        rows = [(trial, _row(trial)) for trial in trials]
        with self._writing(all_or_nothing=len(rows) > 1):
            for trial, row in rows:
                with _text_refused(trial):
                    self._connection.execute(
                        f"INSERT OR REPLACE INTO trials ({_COLUMNS}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        row,
                    )

    @contextlib.contextmanager
    def _writing(self, all_or_nothing: bool = False):
        """One write: refused once another study object of this process took the file
        over, checked and committed under the file's write mutex, which a takeover takes
        too (so none comes in between). The mutex comes before ``_lock`` (the order is in
        :mod:`ensembo.storage.writer_lock`); rows are serialised before either."""
        self.check_open()
        claim = self._claim
        with (claim.writing() if claim is not None else contextlib.nullcontext(),
              self._named_errors(), self._transaction(all_or_nothing)):
            yield

    def trials(self) -> list[Trial]:
        with self._lock, self._named_errors():
            rows = self._connection.execute(
                f"SELECT {_COLUMNS} FROM trials ORDER BY number"
            ).fetchall()
        return [self._trial(row) for row in rows]

    def _trial(self, row: tuple) -> Trial:
        number, config, state, loss, predictions, info, error, started, finished, attempts = row
        with self._damaged(f"trial {number}"):
            return Trial(
                number=number,
                config=json.loads(config),
                state=TrialState(state),
                loss=loss,
                predictions=_blob_to_array(predictions),
                info=json.loads(info),
                error=error,
                started_at=started,
                finished_at=finished,
                attempts=attempts,
            )

    def _transaction(self, all_or_nothing: bool = False):
        return _Transaction(self._connection, self._lock, all_or_nothing)

    def check_open(self) -> None:
        """Refuse a write after :meth:`close` with that reason (the claim it let go of
        would otherwise report a takeover by another study that does not exist)."""
        if self.closed:
            raise StorageError(f"{self.path}: this study was closed; Study.load the file "
                               "to continue it")

    def close(self) -> None:
        self.closed = True
        with self._lock:
            self._connection.close()
        if self._claim is not None:
            self._claim.release()


def _row(trial: Trial) -> tuple:
    """The ``trials`` table's row of ``trial``, in ``_COLUMNS`` order."""
    return (
        trial.number,
        _dumps(trial.config),
        trial.state.value,
        trial.loss,
        _array_to_blob(trial.predictions),
        json_text(trial.info, label=f"trial {trial.number}'s info"),
        trial.error,
        trial.started_at,
        trial.finished_at,
        trial.attempts,
    )


@contextlib.contextmanager
def _text_refused(trial: Trial):
    """sqlite3 refuses text that is not valid UTF-8 (a lone surrogate from an undecodable
    file name) with a bare UnicodeEncodeError: name the trial. A ValueError, as for any
    other value that cannot be stored."""
    try:
        yield
    except UnicodeEncodeError as error:
        raise ValueError(
            f"trial {trial.number}: its error text is not valid UTF-8 and cannot be stored "
            f"({error.reason} at position {error.start})"
        ) from None


def _cannot_open(path: Path, error: sqlite3.DatabaseError) -> str:
    """Why a study file cannot be opened: a folder or file this process may not write
    is not a damaged file (sqlite3 says "unable to open database file" for both)."""
    folder = path.parent
    if folder.exists() and os.statvfs(folder).f_flag & os.ST_RDONLY:
        return f"its folder {folder} is on a read-only file system ({error})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"cannot write in its folder {folder} (permission denied): choose a "
                f"writable storage path ({error})")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return f"cannot read and write this file (permission denied) ({error})"
    if "readonly" in str(error):
        return f"the file or its folder is read-only ({error}); a study writes its file"
    if "malformed" in str(error):  # cut short (a full disk, an interrupted copy)
        return _explain(error)
    return f"not a usable ensembo study file ({error})"


SALVAGE = ("restore it from a copy, or recover the readable rows into a new file with "
           "sqlite3 FILE .recover | sqlite3 NEW.db")


def _explain(error: sqlite3.DatabaseError) -> str:
    text = str(error)
    if "malformed" in text or "not a database" in text or "Could not decode" in text:
        return f"the study file is damaged ({text}); {SALVAGE}"
    if "locked" in text:
        return f"another process kept the study file locked for 30 s ({text})"
    if "readonly" in text:
        return f"the file or its folder is read-only ({text}); a study writes its file"
    return f"cannot read or write the study file ({text})"


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT around one statement (autocommit connection), holding
    the storage's lock so that threads do not interleave statements.

    Ctrl-C can land between any two of these steps. A statement is atomic on its own, so
    what it wrote is committed even then (a trial's result must not be lost to the
    interrupt), and a transaction an interrupt left open is committed before the next
    one begins (otherwise every later write fails: "cannot start a transaction within a
    transaction"). Only an error of the statement itself rolls back, except in an
    ``all_or_nothing`` transaction of several statements (a batch of trials), which an
    interrupt between two of them rolls back too, also when the next write finds it left
    open: half a batch resumed on another path.
    """

    def __init__(self, connection: sqlite3.Connection, lock: threading.RLock,
                 all_or_nothing: bool = False):
        self._connection = connection
        self._lock = lock
        self._all_or_nothing = all_or_nothing

    def __enter__(self) -> None:
        self._lock.acquire()
        connection = id(self._connection)
        try:
            if self._connection.in_transaction:  # left open by an interrupt
                self._connection.execute("ROLLBACK" if connection in _BATCHES_OPEN else "COMMIT")
            _BATCHES_OPEN.discard(connection)
            self._connection.execute("BEGIN IMMEDIATE")
            if self._all_or_nothing:
                _BATCHES_OPEN.add(connection)
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type, exc, tb) -> None:
        failed = exc_type is not None and (
            self._all_or_nothing or issubclass(exc_type, Exception)
        )
        try:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK" if failed else "COMMIT")
            _BATCHES_OPEN.discard(id(self._connection))
        finally:
            self._lock.release()


_BATCHES_OPEN: set[int] = set()
"""Connections (by id) in an ``all_or_nothing`` transaction: one a second interrupt left
open is rolled back by the next write, not committed with half its batch."""
