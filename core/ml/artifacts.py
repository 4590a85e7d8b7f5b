"""Where fitted models live, keyed by trial number.

Trial records hold predictions, not models: models can be large and are not needed to
resume an optimization, only to predict afterwards. :class:`MemoryArtifactStore` keeps
them in the process; :class:`DiskArtifactStore` writes one joblib file per trial in a
folder next to the study's SQLite file, so a stored study can still predict after the
process that ran it is gone.
"""

from __future__ import annotations

import logging
from os import PathLike
from pathlib import Path
from typing import Any, Protocol

import joblib

from ensembo.errors import StorageError
from ensembo.storage import study_file_path

logger = logging.getLogger(__name__)


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
    """Disk store next to a SQLite study file (``run.db`` -> ``run.models/``), else memory.

    The folder records the study file that owns it (:data:`OWNER_FILE`); another study
    file of the same stem (``run.sqlite``, a copy ``run.bak``) is refused, before any
    trial runs, rather than overwrite that study's models or predict with them."""
    path = study_file_path(storage)
    if path is None:  # a study kept in memory (``sqlite://`` too) keeps its models there
        return MemoryArtifactStore()
    directory = path.with_name(path.stem + ".models")
    claim_models_folder(path, directory)
    return DiskArtifactStore(directory)


# In a models folder: the name of the study file whose models it keeps.
OWNER_FILE = "owner.txt"


def claim_models_folder(path: Path, directory: Path) -> None:
    """Make ``directory`` the models folder of the study file ``path``, or refuse.

    ``run.db`` and ``run.sqlite`` (or a backup ``run.bak``) both map to ``run.models/``:
    each study would overwrite the other's models (the study's lock guards one file
    only), and its final models would silently be another study's. The folder's marker
    names its owner; a folder without one (made by an older version) is adopted by the
    first study that uses it, and so is one whose owner file is gone (a study file
    renamed or moved with its folder), with a warning. No other file is opened."""
    marker = directory / OWNER_FILE
    owner = _owner(marker)
    if owner == path.name:
        return
    if owner is not None:
        if not (directory.parent / owner).exists():
            logger.warning(
                "%s: the models folder %s belonged to %s, which no longer exists (renamed "
                "or moved?); %s takes it over", path, directory, owner, path.name,
            )
        else:
            raise StorageError(
                f"{path}: its models would be kept in {directory}, which keeps the models "
                f"of the study in {directory.parent / owner} ({marker} says so); give this "
                "study file another name"
            )
    directory.mkdir(parents=True, exist_ok=True)
    temporary = marker.with_suffix(".tmp")
    temporary.write_text(path.name + "\n", encoding="utf-8")
    temporary.replace(marker)


def _owner(marker: Path) -> str | None:
    """The study file name a models folder's marker holds; ``None`` without one."""
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StorageError(f"{marker}: cannot read the models folder's owner: {error}") from error
    return text or None
