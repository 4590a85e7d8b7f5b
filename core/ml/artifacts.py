"""Where fitted models live, keyed by trial number.

Trial records hold predictions, not models: models can be large and are not needed to
resume an optimization, only to predict afterwards. :class:`MemoryArtifactStore` keeps
them in the process; :class:`DiskArtifactStore` writes one joblib file per trial in a
folder next to the study's SQLite file, so a stored study can still predict after the
process that ran it is gone.
"""

from __future__ import annotations

import glob
import sqlite3
from os import PathLike
from pathlib import Path
from typing import Any, Protocol

import joblib

from ensembo.errors import StorageError


class ArtifactStore(Protocol):
    def put(self, number: int, model: Any) -> None: ...

    def get(self, number: int) -> Any: ...

    def discard(self, number: int) -> None: ...

    def __contains__(self, number: object) -> bool: ...


class MemoryArtifactStore:
    def __init__(self) -> None:
        self._models: dict[int, Any] = {}

    def put(self, number: int, model: Any) -> None:
        self._models[number] = model

    def get(self, number: int) -> Any:
        try:
            return self._models[number]
        except KeyError:
            raise StorageError(f"no model kept for trial {number}") from None

    def discard(self, number: int) -> None:
        self._models.pop(number, None)

    def __contains__(self, number: object) -> bool:
        return number in self._models


class DiskArtifactStore:
    """``directory/trial-00012.joblib`` per trial.

    A model is written to ``trial-00012.tmp`` and renamed, so a killed run leaves at
    most a stray ``.tmp`` file, never half a model; stray ones are removed on opening
    (the study's lock keeps a second run from writing to the same folder)."""

    def __init__(self, directory: str | PathLike):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._remove_partial_writes()

    def _remove_partial_writes(self) -> None:
        for stray in self.directory.glob("trial-*.tmp"):
            stray.unlink(missing_ok=True)

    def _path(self, number: int) -> Path:
        return self.directory / f"trial-{number:05d}.joblib"

    def put(self, number: int, model: Any) -> None:
        temporary = self._path(number).with_suffix(".tmp")
        joblib.dump(model, temporary)
        temporary.replace(self._path(number))  # a killed run never leaves half a file

    def get(self, number: int) -> Any:
        path = self._path(number)
        if not path.is_file():
            raise StorageError(f"{path}: no model kept for trial {number}")
        return joblib.load(path)

    def discard(self, number: int) -> None:
        self._path(number).unlink(missing_ok=True)

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self._path(number).is_file()


def artifact_store_for(storage: str | PathLike | None) -> MemoryArtifactStore | DiskArtifactStore:
    """Disk store next to a SQLite study file (``run.db`` -> ``run.models/``), else memory."""
    if storage is None or str(storage) == ":memory:":
        return MemoryArtifactStore()
    path = Path(storage)
    directory = path.with_name(path.stem + ".models")
    _check_not_shared(path, directory)
    return DiskArtifactStore(directory)


def _check_not_shared(path: Path, directory: Path) -> None:
    """``run.db`` and ``run.sqlite`` both keep their models in ``run.models/``: each
    study would overwrite the other's (the study's lock guards one file only), and its
    final models would silently be another study's. Refused while both files exist."""
    candidates = [path.with_name(path.stem), *path.parent.glob(glob.escape(path.stem) + ".*")]
    for other in candidates:
        if other.stem != path.stem or other.resolve() == path.resolve():
            continue
        if _is_study_file(other):
            raise StorageError(
                f"{path}: its models would be kept in {directory}, where the study in "
                f"{other} keeps its models too, and each would overwrite the other's; "
                "give one of the two study files another name"
            )


def _is_study_file(path: Path) -> bool:
    """A SQLite file holding an ensembo study (its ``meta`` and ``trials`` tables)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as file:
            if file.read(16) != b"SQLite format 3\x00":
                return False
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            names = {row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            connection.close()
    except (OSError, sqlite3.Error):
        return False
    return {"meta", "trials"} <= names
