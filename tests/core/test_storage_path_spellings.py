"""A study file is found from what the storage argument names, not from how its str()
reads: a PathLike whose str() is its repr made a file named ``<P object at 0x...>`` in
the working directory, and ``Path(":memory:")`` made a lock file and a models folder
there, and refused a second process as "in use" (review)."""

from __future__ import annotations

from pathlib import Path

import ensembo
from ensembo.ml.artifacts import DiskArtifactStore, MemoryArtifactStore, artifact_store_for
from ensembo.storage import MemoryStorage, open_storage, study_file_path

SPACE = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}}


class OnlyFspath:
    """A PathLike with nothing but ``__fspath__``: its str() is the object's repr."""

    def __init__(self, path: Path):
        self._path = path

    def __fspath__(self) -> str:
        return str(self._path)


def test_a_pathlike_names_the_file_by_its_fspath(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = OnlyFspath(tmp_path / "runs" / "run.db")
    (tmp_path / "runs").mkdir()
    with ensembo.Study(SPACE, surrogate=None, storage=target) as study:
        study.optimize(lambda c: c["x"], n_trials=2)
    assert study_file_path(target) == tmp_path / "runs" / "run.db"
    assert isinstance(artifact_store_for(target), DiskArtifactStore)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir() if p.suffix != ".lock") == [
        "run.db", "run.models"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    assert len(ensembo.Study.load(target).trials) == 2


def test_a_path_spelling_memory_keeps_the_study_in_memory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_storage(Path(":memory:")), MemoryStorage)
    assert isinstance(artifact_store_for(Path(":memory:")), MemoryArtifactStore)
    ensembo.Study(SPACE, surrogate=None, storage=Path(":memory:")).optimize(
        lambda c: c["x"], n_trials=2
    )
    assert list(tmp_path.iterdir()) == []
