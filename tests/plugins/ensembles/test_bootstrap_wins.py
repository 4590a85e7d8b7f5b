"""Win shares and stacked rows kept current as trials arrive equal those computed afresh."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.ensembles.best_model_posterior import resample_counts, win_shares
from ensembo.plugins.ensembles.bootstrap_wins import BootstrapWins
from ensembo.plugins.ensembles.pool import RowStack


def test_row_stack_grows_in_place_and_rebuilds_when_a_trial_arrives_out_of_order():
    rows = {n: np.full(3, float(n)) for n in range(40)}
    computed = []
    stack = RowStack()

    def row_of(numbers):
        return lambda i: computed.append(numbers[i]) or rows[numbers[i]]

    order: list[int] = []
    for number in [*range(0, 30, 2), 1, *range(30, 40)]:  # 1 finishes late, mid-pool
        order = sorted([*order, number])
        stacked = stack.rows(tuple(order), row_of(tuple(order)))
        np.testing.assert_array_equal(stacked, np.stack([rows[n] for n in order]))
    assert sorted(computed) == sorted(order)  # every row computed once, reused on rebuild


@pytest.mark.parametrize("m, models", [(7, 40), (60, 40)])
def test_bootstrap_wins_kept_current_equal_win_shares_of_the_whole_matrix(m, models):
    rng = np.random.default_rng(m)
    # Zero-one losses on few examples: many exact ties, which split resamples.
    losses = (rng.random((m, models)) < rng.uniform(0.1, 0.6, size=models)).astype(float)
    weights = resample_counts(m, m, 300, rng) / m
    wins = BootstrapWins(weights)
    arrival = list(rng.permutation(models))
    finished: list[int] = []
    for number in arrival:
        finished = sorted([*finished, number])  # pool in trial order: arrivals land mid-pool
        numbers = tuple(finished)
        pool_losses = losses[:, numbers]
        risks = weights @ pool_losses
        np.testing.assert_allclose(wins.risks(numbers, pool_losses), risks.T)
        np.testing.assert_allclose(wins.shares(numbers, pool_losses), win_shares(risks),
                                   rtol=0, atol=1e-12)


def test_bootstrap_wins_in_trial_order_only_look_at_the_resamples_a_newcomer_can_win():
    rng = np.random.default_rng(0)
    losses = rng.random((50, 30))
    losses[:, 29] += 10.0  # the last model is worse on every example: it wins nothing
    wins = BootstrapWins(resample_counts(50, 50, 200, rng) / 50)
    wins.shares(tuple(range(29)), losses[:, :29])
    before = wins._winners[:29].copy()
    shares = wins.shares(tuple(range(30)), losses)
    assert shares[29] == 0 and np.array_equal(wins._winners[:29], before)
    np.testing.assert_allclose(shares, win_shares(wins.weights @ losses), atol=1e-12)


def test_an_infinite_loss_a_resample_leaves_out_costs_no_later_trial_its_wins():
    """0 x inf made that trial's risk NaN on the resample, and a NaN lowest risk let no
    later trial win it (a loss plugin may give inf where ensembo's own are finite)."""
    losses = np.array([[1.0, 0.5, 0.2], [np.inf, 0.5, 0.2]])  # trial 0 diverged on example 1
    weights = np.array([[1.0, 0.0], [0.5, 0.5]])  # resample 0 leaves example 1 out
    wins = BootstrapWins(weights)
    wins.shares((0,), losses[:, :1])
    shares = wins.shares((0, 1, 2), losses)
    np.testing.assert_allclose(shares, [0.0, 0.0, 1.0])
