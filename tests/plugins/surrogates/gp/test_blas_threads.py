"""The GP's fits and predictions run with a capped BLAS pool, restored afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from ensembo.plugins.surrogates.gp import surrogate as surrogate_module
from ensembo.plugins.surrogates.gp.posterior import Posterior
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.spaces import EncodedBatch
from ensembo.spaces.encoding import activity_signature

OUTSIDE = 2  # wider than the GP's default of one thread


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def _batch(values):
    active = np.ones_like(values, dtype=bool)
    return EncodedBatch(values=values, active=active, signature=activity_signature(active))


def _recording(function, seen: list[set[int]]):
    def wrapped(*args, **kwargs):
        seen.append(_blas_threads())
        return function(*args, **kwargs)

    return wrapped


@pytest.fixture
def wide_blas():
    """A BLAS pool of OUTSIDE threads around the test, so a cap of one is visible."""
    with threadpool_limits(OUTSIDE, user_api="blas"):
        if _blas_threads() != {OUTSIDE}:
            pytest.skip(f"this BLAS cannot be widened to {OUTSIDE} threads: {_blas_threads()}")
        yield


@pytest.mark.parametrize("limit, expected_inside", [(1, {1}), (0, {OUTSIDE})])
def test_fit_and_predictions_run_under_the_limit_and_restore_it(
    monkeypatch, wide_blas, limit, expected_inside
):
    seen: list[set[int]] = []
    monkeypatch.setattr(surrogate_module, "fit_ml2", _recording(surrogate_module.fit_ml2, seen))
    for method in ("predict", "predict_with_gradients"):
        monkeypatch.setattr(Posterior, method, _recording(getattr(Posterior, method), seen))
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(30, 3))
    gp = GaussianProcessSurrogate(blas_threads=limit)

    gp.fit(_batch(x), np.sin(5 * x[:, 0]) + x[:, 1], rng)
    assert _blas_threads() == {OUTSIDE}
    gp.predict(_batch(rng.uniform(size=(5, 3))))
    assert _blas_threads() == {OUTSIDE}
    gp.predict_with_gradients(_batch(rng.uniform(size=(5, 3))))
    assert _blas_threads() == {OUTSIDE}

    assert len(seen) == 3  # the fit, then one posterior per prediction
    assert all(inside == expected_inside for inside in seen), seen


def test_capped_results_do_not_depend_on_the_pool_outside(wide_blas):
    """With one thread inside, a GP computes the same bits whatever the caller's BLAS
    pool (a two-thread pool alone changes variances by ~1e-12 here), and the same as
    a run under OPENBLAS_NUM_THREADS=1, as in the benchmark harness."""
    rng = np.random.default_rng(1)
    x, query = rng.uniform(size=(40, 4)), _batch(rng.uniform(size=(20, 4)))
    y = np.cos(3 * x[:, 0]) * x[:, 2]
    results = []
    for outside in (1, OUTSIDE):
        with threadpool_limits(outside, user_api="blas"):
            gp = GaussianProcessSurrogate(blas_threads=1)
            gp.fit(_batch(x), y, np.random.default_rng(2))
            results.append(gp.predict_with_gradients(query))
    for one, wide in zip(*results, strict=True):
        np.testing.assert_array_equal(one, wide)


def test_negative_limit_is_rejected():
    with pytest.raises(ValueError, match="blas_threads"):
        GaussianProcessSurrogate(blas_threads=-1)
