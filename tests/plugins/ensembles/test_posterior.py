"""Agnostic Bayes posterior over the best model: Lacoste's worked numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.ensembles.best_model_posterior import (
    exact_bootstrap_posterior,
    sample_risks,
    win_shares,
)

# Rows are examples, columns models (the thesis prints models as rows).
TABLE_6_1_TOP = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
TABLE_6_1_BOTTOM = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], dtype=float)
TABLE_A_1 = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]], dtype=float)


def test_table_6_1_duplicating_a_model_splits_its_weight():
    assert exact_bootstrap_posterior(TABLE_6_1_TOP) == pytest.approx([1 / 3] * 3)
    weights = exact_bootstrap_posterior(TABLE_6_1_BOTTOM)
    assert np.round(weights, 2).tolist() == [0.31, 0.31, 0.19, 0.19]


def test_table_a_1_exact_bootstrap_values():
    weights = exact_bootstrap_posterior(TABLE_A_1)
    assert weights[:3] == pytest.approx([37 / 270] * 3, abs=1e-12)
    assert weights[3:] == pytest.approx([53 / 180] * 2, abs=1e-12)


def test_monte_carlo_bootstrap_converges_to_the_exact_posterior():
    rng = np.random.default_rng(0)
    shares = win_shares(sample_risks(TABLE_A_1, 20000, rng, sampler="bootstrap"))
    assert shares == pytest.approx(exact_bootstrap_posterior(TABLE_A_1), abs=0.01)


@pytest.mark.parametrize("sampler", ["bootstrap", "dirichlet", "student-t"])
def test_every_sampler_prefers_the_clearly_better_model(sampler):
    rng = np.random.default_rng(1)
    losses = (rng.random((200, 3)) < np.array([0.1, 0.3, 0.32])).astype(float)
    shares = win_shares(sample_risks(losses, 2000, rng, sampler=sampler))
    assert shares.sum() == pytest.approx(1.0)
    assert shares[0] > 0.95


def test_dirichlet_prior_pulls_towards_uniform():
    rng = np.random.default_rng(2)
    losses = (rng.random((40, 3)) < np.array([0.2, 0.35, 0.4])).astype(float)
    plain = win_shares(sample_risks(losses, 3000, rng, sampler="dirichlet"))
    with_prior = win_shares(sample_risks(losses, 3000, rng, sampler="dirichlet", alpha=2.0))
    assert with_prior.max() < plain.max()


def test_smaller_effective_sample_flattens_the_posterior():
    rng = np.random.default_rng(3)
    losses = (rng.random((300, 4)) < np.array([0.2, 0.23, 0.26, 0.3])).astype(float)
    full = win_shares(sample_risks(losses, 4000, rng, rho=1.0))
    reduced = win_shares(sample_risks(losses, 4000, rng, rho=0.2))
    entropy = lambda p: -np.sum(p[p > 0] * np.log(p[p > 0]))  # noqa: E731
    assert entropy(reduced) > entropy(full)


def test_unknown_sampler_names_the_valid_ones():
    with pytest.raises(ValueError, match="bootstrap, dirichlet, student-t"):
        sample_risks(TABLE_A_1, 10, np.random.default_rng(0), sampler="dp")
