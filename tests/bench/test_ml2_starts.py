"""The ML-II start-policy replay (``ensembo.bench.ml2_starts``) on a small GP's fits."""

from __future__ import annotations

import numpy as np

from ensembo.bench import ml2_starts
from ensembo.plugins.surrogates.gp import surrogate as gp_surrogate
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.spaces import EncodedBatch
from ensembo.spaces.encoding import activity_signature


def _fits_of_a_small_search():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(14, 2))
    y = np.sin(6 * x[:, 0]) + 0.2 * rng.normal(size=14)
    gp = GaussianProcessSurrogate()
    original = gp_surrogate.fit_ml2
    with ml2_starts.recorded_fits() as fits:
        for n in range(8, 15):
            active = np.ones((n, 2), dtype=bool)
            batch = EncodedBatch(values=x[:n], active=active, signature=activity_signature(active))
            gp.fit(batch, y[:n], rng)
    assert gp_surrogate.fit_ml2 is original  # restored on exit
    return fits


def test_every_fit_is_recorded_and_replayed_by_every_policy():
    fits = _fits_of_a_small_search()
    assert [len(f[2]) for f in fits] == list(range(8, 15))
    reached = ml2_starts.replay(fits)
    assert set(reached) == set(ml2_starts.POLICIES)
    assert all(values.shape == (len(fits), 2) and np.all(np.isfinite(values))
               for values in reached.values())
    assert all(np.all(values[:, 1] > 0) for values in reached.values())  # noise variances
    # cold-4's starts include cold-2's, so it never ends worse
    assert np.all(reached["cold-4"][:, 0] <= reached["cold-2"][:, 0] + 1e-9)
    rows = ml2_starts.table(reached).splitlines()[2:]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == list(ml2_starts.POLICIES)
