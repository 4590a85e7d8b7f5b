"""Every model fit and prediction of a task runs under its cap on BLAS and OpenMP
threads, and the caller's pools are restored afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from threadpoolctl import threadpool_info, threadpool_limits

from ensembo.errors import ExperimentError
from ensembo.ml import Task
from ensembo.ml.data_run import DataSettings

OUTSIDE = 2  # wider than the task's default of one thread


def _pool_sizes() -> dict[str, set[int]]:
    sizes: dict[str, set[int]] = {}
    for pool in threadpool_info():
        sizes.setdefault(pool["user_api"], set()).add(pool["num_threads"])
    return sizes


class PoolRecorder(ClassifierMixin, BaseEstimator):
    """Notes the thread pools it sees while it fits and predicts."""

    seen: list[dict[str, set[int]]] = []

    def fit(self, X, y):
        PoolRecorder.seen.append(_pool_sizes())
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        PoolRecorder.seen.append(_pool_sizes())
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


@pytest.fixture
def wide_pools():
    """BLAS and OpenMP pools of OUTSIDE threads around the test, so a cap is visible."""
    with threadpool_limits(OUTSIDE):
        sizes = _pool_sizes()
        if set(sizes) != {"blas", "openmp"} or any(s != {OUTSIDE} for s in sizes.values()):
            pytest.skip(f"these pools cannot be widened to {OUTSIDE} threads: {sizes}")
        PoolRecorder.seen = []
        yield sizes


@pytest.mark.parametrize("threads, inside", [(1, 1), (0, OUTSIDE)])
def test_fits_and_predictions_run_under_the_cap_and_restore_the_pools(
    wide_pools, tree_only_space, classification_data, threads, inside
):
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=3,
                threads=threads, X_test=X[:10], y_test=y[:10])
    task.build = lambda config: PoolRecorder()

    task.evaluate({"behaviour": "fit", "depth": 2})
    assert _pool_sizes() == wide_pools
    task.fit({"behaviour": "fit", "depth": 2})
    assert _pool_sizes() == wide_pools

    # three folds fitted and predicted, the test rows predicted by each fold, the refit
    assert len(PoolRecorder.seen) == 3 + 3 + 3 + 1
    expected = {"blas": {inside}, "openmp": {inside}}
    assert all(sizes == expected for sizes in PoolRecorder.seen), PoolRecorder.seen


@pytest.mark.parametrize("threads", [-1, 1.5, True])
def test_a_bad_thread_count_is_refused_by_name(tree_only_space, classification_data, threads):
    X, y = classification_data
    with pytest.raises(ExperimentError, match="threads"):
        Task(X, y, task="classification", space=tree_only_space, threads=threads)


def test_the_experiment_file_sets_the_cap():
    assert DataSettings.from_document({"dataset": "iris"}).threads == 1
    assert DataSettings.from_document({"dataset": "iris", "threads": 0}).threads == 0
    with pytest.raises(ExperimentError, match="threads"):
        DataSettings.from_document({"dataset": "iris", "threads": -2})
