"""Where a study keeps its trials: in memory, or in a SQLite file that survives crashes."""

from __future__ import annotations

from os import PathLike

from ensembo.storage.base import Storage
from ensembo.storage.memory import MemoryStorage
from ensembo.storage.sqlite import SQLiteStorage


def open_storage(target: Storage | str | PathLike | None) -> Storage:
    """``None`` -> memory; a path (``.db``/``.sqlite`` or ``sqlite:///path``) -> SQLite."""
    if target is None:
        return MemoryStorage()
    if isinstance(target, Storage):
        return target
    path = str(target)
    if path.startswith("sqlite:///"):
        path = path[len("sqlite:///") :]
    return SQLiteStorage(path)


__all__ = ["MemoryStorage", "SQLiteStorage", "Storage", "open_storage"]
