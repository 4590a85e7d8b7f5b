"""Where a study keeps its trials: in memory, or in a SQLite file that survives crashes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from ensembo.errors import StorageError
from ensembo.storage.base import Storage
from ensembo.storage.memory import MemoryStorage
from ensembo.storage.sqlite import SQLiteStorage
from ensembo.trials import Trial

IN_MEMORY = (":memory:", "sqlite://", "sqlite:///:memory:")
"""SQLite's spellings of a database in memory: as a file path, ``:memory:`` made a
lock file of that name in the working directory and unrelated studies refused each
other; ``sqlite://`` made a file named ``sqlite:``."""


def open_storage(target: Storage | str | PathLike | None) -> Storage:
    """``None`` (or SQLite's in-memory names) -> memory; a path (``.db``/``.sqlite`` or
    ``sqlite:///path``) -> SQLite."""
    if isinstance(target, Storage):
        return target
    if keeps_in_memory(target):
        return MemoryStorage()
    return SQLiteStorage(_path(target))


def keeps_in_memory(target: Storage | str | PathLike | None) -> bool:
    """Whether ``target`` keeps a study in memory only, writing no file."""
    return (target is None or isinstance(target, MemoryStorage)
            or (isinstance(target, str | PathLike) and os.fsdecode(target) in IN_MEMORY))


def study_file_path(target: Storage | str | PathLike | None) -> Path | None:
    """The file :func:`open_storage` keeps a study in for ``target`` (``sqlite:///`` and
    ``~`` resolved), or ``None`` when it keeps the study in memory or ``target`` is a
    storage object. Whatever sits next to a study file (its models folder, a refused
    run's clean-up) is found from this path, not from the spelling given: from
    ``~/runs/a.db`` the models went to a folder named ``~`` in the working directory."""
    if isinstance(target, Storage) or keeps_in_memory(target):
        return None
    return Path(_path(target))


def claim_for_writing(storage: Storage) -> None:
    """Hold a study file for this process (a second writer is refused); storages that
    are not files need no claim."""
    claim = getattr(storage, "claim_writer", None)
    if callable(claim):
        claim()


def put_trials(storage: Storage, trials: Sequence[Trial]) -> None:
    """Write ``trials`` in one atomic step where the storage can (see
    :mod:`ensembo.storage.base`), else one by one."""
    put_all = getattr(storage, "put_trials", None)
    if callable(put_all):
        put_all(trials)
        return
    for trial in trials:
        storage.put_trial(trial)


def open_existing_storage(target: Storage | str | PathLike, read_only: bool = False) -> Storage:
    """Like :func:`open_storage`, for reading a study back: the file must already hold
    one. A missing file or another program's database is refused and left untouched;
    ``read_only`` opens it for reading only (a report of an archived study)."""
    if isinstance(target, Storage):
        return target
    return SQLiteStorage.existing(_path(target), read_only=read_only)


def _path(target: str | PathLike) -> str:
    if not isinstance(target, str | PathLike):
        raise StorageError(
            f"storage must be a file path or a Storage, got {type(target).__name__}: {target!r}"
        )
    path = os.fsdecode(target)  # not str(): a PathLike's str() may be its repr
    path = path[len("sqlite:///") :] if path.startswith("sqlite:///") else path
    path = os.path.expanduser(path)  # "~/runs/a.db" is not a folder named "~"
    if not path or path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise StorageError(f"storage {str(target)!r} is {'empty' if not path else 'a folder'}; "
                           "give a file path such as runs/study.db")
    return path


__all__ = [
    "MemoryStorage", "SQLiteStorage", "Storage", "claim_for_writing", "keeps_in_memory",
    "open_existing_storage", "open_storage", "put_trials",
]
