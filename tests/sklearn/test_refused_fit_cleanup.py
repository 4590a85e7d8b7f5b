"""A fit refused because another study file owns the models folder (``run.db`` next to
``run.sqlite``) keeps nothing open and leaves no study file of its own behind (leak
audit, finding 2: the new study stayed open and locked through ``study_``, and its file
stayed on disk)."""

from __future__ import annotations

import os

import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import ensembo.sklearn
from ensembo import Study
from ensembo.errors import StorageError
from ensembo.ml.artifacts import DiskArtifactStore, MemoryArtifactStore, artifact_store_for
from ensembo.sklearn import EnsemboClassifier

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc")


@pytest.fixture
def data():
    return make_classification(n_samples=90, n_features=4, random_state=0)


def _estimator(tree_space, path):
    return EnsemboClassifier(tree_space, n_trials=2, cv=3, surrogate=None, storage=path)


def test_a_refused_fit_on_a_new_file_closes_it_and_removes_it(
    tmp_path, tree_space, data, open_files_under
):
    X, y = data
    _estimator(tree_space, tmp_path / "run.sqlite").fit(X, y)  # owns run.models/
    refused = _estimator(tree_space, tmp_path / "run.db")
    with pytest.raises(StorageError, match="its models would be kept in"):
        refused.fit(X, y)
    assert open_files_under(tmp_path) == []  # no connection, no lock
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("run.db")
                and not p.name.endswith(".lock")]  # the lock's sidecar stays, as for ensembo run
    assert not hasattr(refused, "study_")  # an unfitted estimator, not a closed study
    with pytest.raises(NotFittedError):  # nor classes_ and n_features_in_ of the refused fit
        check_is_fitted(refused)
    assert len(Study.load(tmp_path / "run.sqlite").trials) == 2  # the owner is untouched


def test_a_refused_fit_on_an_existing_file_closes_it_and_keeps_it(
    tmp_path, tree_space, data, open_files_under
):
    X, y = data
    _estimator(tree_space, tmp_path / "run.db").fit(X, y)
    (tmp_path / "run.sqlite").touch()  # another study file now owns the models folder
    (tmp_path / "run.models" / "owner.txt").write_text("run.sqlite\n")
    refused = _estimator(tree_space, tmp_path / "run.db")
    with pytest.raises(StorageError, match="its models would be kept in"):
        refused.fit(X, y)
    assert open_files_under(tmp_path) == []
    assert refused.study_.storage.closed
    assert len(Study.load(tmp_path / "run.db").trials) == 2  # kept, as it was


@pytest.mark.parametrize("spelling", ["{tmp}/plain.db", "~/home.db", "sqlite:///{tmp}/url.db"])
def test_a_fit_stopped_before_its_first_trial_removes_the_file_however_it_was_named(
    tmp_path, monkeypatch, tree_space, data, spelling
):
    """The study opens ``~`` expanded and ``sqlite:///`` stripped: the clean-up looked
    for the literal spelling, found no file to have created, and left it on disk."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ensembo.sklearn, "run_task", stopped)
    estimator = _estimator(tree_space, spelling.format(tmp=tmp_path))
    with pytest.raises(KeyboardInterrupt):
        estimator.fit(*data)
    left = [p.name for p in tmp_path.iterdir() if p.suffix not in (".lock", ".models")]
    assert left == []  # as for a plain path: the lock's sidecar and the models folder stay


def test_the_models_folder_is_next_to_the_file_the_study_opens(tmp_path, monkeypatch):
    """From ``~/a.db`` the models went to a folder named ``~`` in the working directory,
    and ``sqlite://`` (a study in memory) wrote them to a folder named ``sqlite:``."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home").mkdir()
    store = artifact_store_for("~/a.db")
    assert isinstance(store, DiskArtifactStore)
    assert (tmp_path / "home" / "a.models").is_dir()
    artifact_store_for(f"sqlite:///{tmp_path}/b.db")
    assert (tmp_path / "b.models").is_dir()
    for in_memory in ("sqlite://", "sqlite:///:memory:", ":memory:", None):
        assert isinstance(artifact_store_for(in_memory), MemoryArtifactStore)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.models", "home"]
