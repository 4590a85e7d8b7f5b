"""A fit refused because another study file owns the models folder (``run.db`` next to
``run.sqlite``) keeps nothing open and leaves no study file of its own behind (leak
audit, finding 2: the new study stayed open and locked through ``study_``, and its file
stayed on disk)."""

from __future__ import annotations

import os

import pytest
from sklearn.datasets import make_classification

from ensembo import Study
from ensembo.errors import StorageError
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
