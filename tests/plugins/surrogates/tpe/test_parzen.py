"""Parzen estimators: proper densities, sampling consistent with them, conditional columns."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import truncnorm

from ensembo.plugins.surrogates.tpe.parzen import ColumnKinds, ParzenEstimator


def estimator(observations, sizes, groups=None, weights=None, **options):
    observations = np.asarray(observations, dtype=float)
    k = observations.shape[1]
    kinds = ColumnKinds(sizes=np.asarray(sizes), min_bandwidth=np.zeros(k))
    return ParzenEstimator(
        observations,
        np.ones(len(observations)) if weights is None else np.asarray(weights, dtype=float),
        kinds,
        np.arange(k) if groups is None else np.asarray(groups),
        prior_weight=1.0,
        **options,
    )


def test_numeric_density_integrates_to_one():
    parzen = estimator([[0.1], [0.15], [0.8], [0.95]], [0])
    grid = np.linspace(0, 1, 20001)[:, None]
    density = np.exp(parzen.log_pdf(grid))[:, 0]
    assert np.trapezoid(density, grid[:, 0]) == pytest.approx(1.0, abs=1e-3)


def test_categorical_probabilities_sum_to_one_and_favour_observed_choices():
    parzen = estimator([[2.0], [2.0], [0.0]], [4])
    probabilities = np.exp(parzen.log_pdf(np.arange(4.0)[:, None]))[:, 0]
    assert probabilities.sum() == pytest.approx(1.0)
    assert probabilities[2] > probabilities[0] > probabilities[1] == pytest.approx(probabilities[3])
    assert probabilities[1] > 0  # the prior keeps unseen choices possible


def test_samples_follow_the_density():
    parzen = estimator([[0.2], [0.25], [0.7]], [0])
    drawn = parzen.sample(20_000, np.random.default_rng(0))[:, 0]
    histogram, edges = np.histogram(drawn, bins=10, range=(0, 1), density=True)
    centres = (edges[:-1] + edges[1:]) / 2
    expected = np.array(
        [
            np.exp(parzen.log_pdf(np.linspace(a, b, 50)[:, None])).mean()
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        ]
    )
    np.testing.assert_allclose(histogram, expected, rtol=0.1, atol=0.05)
    assert centres.shape == (10,)


def test_a_column_never_active_is_modelled_by_the_prior_alone():
    nan = np.nan
    parzen = estimator([[0.1, nan], [0.2, nan], [0.9, nan]], [0, 0])
    points = np.linspace(0, 1, 7)
    x = np.column_stack([points, points])
    prior = truncnorm(a=-0.5, b=0.5, loc=0.5, scale=1.0).logpdf(points)
    np.testing.assert_allclose(parzen.log_pdf(x)[:, 1], prior)


def test_inactive_observations_do_not_shape_a_column():
    nan = np.nan
    with_inactive = estimator([[0.1, 0.3], [0.5, nan], [0.9, nan]], [0, 0])
    alone = estimator([[0.3]], [0])
    x = np.column_stack([np.full(5, 0.5), np.linspace(0, 1, 5)])
    np.testing.assert_allclose(with_inactive.log_pdf(x)[:, 1], alone.log_pdf(x[:, 1:])[:, 0])


def test_multivariate_group_is_a_mixture_of_products():
    observations = [[0.1, 0.1], [0.15, 0.12], [0.9, 0.9], [0.85, 0.88]]
    joint = estimator(observations, [0, 0], groups=[0, 0])
    density = np.exp(joint.log_pdf(np.array([[0.1, 0.1], [0.1, 0.9]])))[:, 0]
    assert density[0] > 3 * density[1]  # correlated corners, not the product of marginals
    assert joint.log_pdf(np.zeros((1, 2))).shape == (1, 1)


def test_neighbour_rule_matches_optuna_for_each_column():
    from ensembo.plugins.surrogates.tpe.parzen import _neighbour_bandwidths

    mus = np.array([[0.2, 0.9], [0.5, 0.1], [0.6, 0.5]])
    # Column 0 sorted 0.2, 0.5, 0.6: outer kernels look inward (0.3, 0.1), the middle
    # one takes its larger gap (0.3). Column 1 sorted 0.1, 0.5, 0.9: 0.4 everywhere.
    np.testing.assert_allclose(_neighbour_bandwidths(mus), [[0.3, 0.4], [0.3, 0.4], [0.1, 0.4]])
    np.testing.assert_allclose(_neighbour_bandwidths(np.array([[0.3]])), [[0.7]])


def test_a_joint_group_scores_a_row_on_its_active_columns_only():
    # Column 1 is a branch hyperparameter (active on two observations), column 2 a
    # categorical of the other branch. Scored on column 0 alone, the joint mixture is
    # column 0's own mixture: product kernels marginalize, and an observation's kernel
    # on a column it did not have is the prior's.
    nan = np.nan
    observations = [[0.1, 0.2, nan], [0.3, 0.25, nan], [0.8, nan, 1.0], [0.9, nan, 0.0]]
    joint = estimator(observations, [0, 0, 3], groups=[0, 0, 0])
    alone = estimator([[0.1], [0.3], [0.8], [0.9]], [0])
    x = np.column_stack([np.linspace(0, 1, 6), np.full(6, 0.5), np.full(6, 2.0)])
    only_first = np.zeros((6, 3), dtype=bool)
    only_first[:, 0] = True
    np.testing.assert_allclose(joint.log_pdf(x, only_first)[:, 0], alone.log_pdf(x[:, :1])[:, 0])
    # Scored on both numeric columns, the joint shape shows: column 1 near 0.22 goes
    # with column 0 near the branch's own observations (0.1, 0.3), not near 0.8-0.9,
    # although column 0's marginal is the same at 0.15 and 0.85.
    both = np.array([[True, True, False]] * 2)
    pair = np.exp(joint.log_pdf(np.array([[0.15, 0.22, 0.0], [0.85, 0.22, 0.0]]), both))[:, 0]
    marginal = np.exp(alone.log_pdf(np.array([[0.15], [0.85]])))[:, 0]
    assert pair[0] / pair[1] > 1.2 * marginal[0] / marginal[1]


def test_a_smaller_floor_exponent_lets_kernels_narrow():
    observations = [[0.50], [0.51], [0.52], [0.53]]
    optuna_floor = estimator(observations, [0])
    narrower = estimator(observations, [0], floor_exponent=2.0, min_bandwidth=0.03)
    peak = np.array([[0.515]])
    # Optuna's floor is 1 / (1 + kernels) = 0.2 here; (1 + kernels) ** -2 = 0.04 allows
    # four times narrower kernels, so the mass concentrates on the observations.
    assert narrower.log_pdf(peak)[0, 0] > optuna_floor.log_pdf(peak)[0, 0] + np.log(2)
