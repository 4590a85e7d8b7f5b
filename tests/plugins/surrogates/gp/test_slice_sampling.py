"""The coordinate-wise slice sampler leaves its target invariant, also when stepping out
is cut short by the step budget (Neal 2003: one budget split at random)."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.surrogates.gp.slice_sampling import slice_sweep


@pytest.mark.parametrize("max_steps", [8, 16])
def test_one_sweep_from_a_wide_flat_target_keeps_it_uniform(max_steps):
    """A flat density on [0, 100] with width 2: the slice is 50 widths wide, so every
    stepping out exhausts its budget. Drawn from the target, one sweep must leave the
    points uniform. With a budget of its own per side, the outer tenths received 8.5%
    each instead of 10%."""
    rng = np.random.default_rng(0)
    bounds, widths = np.array([[0.0, 100.0]]), np.array([2.0])
    starts = rng.uniform(0.0, 100.0, 10_000)
    moved = np.array(
        [
            slice_sweep(lambda v: 0.0, np.array([s]), 0.0, widths, bounds, rng, max_steps)[0][0]
            for s in starts
        ]
    )
    fractions = np.histogram(moved, bins=10, range=(0.0, 100.0))[0] / len(moved)
    assert np.all(np.abs(fractions - 0.1) < 0.009), fractions  # 3 standard errors
    assert abs(fractions[0] + fractions[-1] - 0.2) < 0.012, fractions


def test_stays_in_bounds_and_keeps_fixed_entries():
    rng = np.random.default_rng(1)
    bounds = np.array([[-1.0, 1.0], [0.5, 0.5], [0.0, 3.0]])
    x, current = np.array([0.0, 0.5, 1.0]), 0.0
    log_density = lambda v: -0.5 * float(v[0] ** 2 + (v[2] - 1.0) ** 2)  # noqa: E731
    current = log_density(x)
    for _ in range(200):
        x, current = slice_sweep(log_density, x, current, np.array([1.0, 1.0, 1.0]), bounds, rng)
        assert bounds[0, 0] <= x[0] <= bounds[0, 1] and bounds[2, 0] <= x[2] <= bounds[2, 1]
        assert x[1] == 0.5
        assert current == log_density(x)
