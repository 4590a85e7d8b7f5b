"""Agnostic Bayes posterior over the best model: Lacoste's worked numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.errors import ComponentOptionError
from ensembo.plugins.ensembles.agnostic_bayes import RHO_GRID, AgnosticBayes
from ensembo.plugins.ensembles.best_model_posterior import (
    exact_bootstrap_posterior,
    prior_mass,
    resample_counts,
    sample_risks,
    win_shares,
)
from ensembo.plugins.ensembles.bootstrap_wins import BootstrapWins
from ensembo.plugins.ensembles.pool import build_pool

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


def test_student_t_takes_a_diverged_model_as_the_worst_without_overflow():
    """Squared errors of 1e200 overflowed the sampler's scatter matrix: every later
    ensemble was empty. A hopeless model changes no other model's share."""
    rng = np.random.default_rng(3)
    losses = rng.random((8, 4)) * np.array([1.0, 1.5, 2.0, 2.5])
    shares = {}
    for huge in (1e20, 1e200):
        diverged = np.column_stack([losses, np.full(8, huge)])
        with np.errstate(all="raise"):
            risks = sample_risks(diverged, 500, np.random.default_rng(4), sampler="student-t")
        shares[huge] = win_shares(risks)
    assert shares[1e200][-1] == 0.0
    np.testing.assert_array_equal(shares[1e200], shares[1e20])


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


def one_clearly_best(m: int, d: int, seed: int = 4) -> np.ndarray:
    """Zero-one losses of d models on m examples: model 0 wrong on 10%, the others on 30%."""
    rng = np.random.default_rng(seed)
    losses = np.zeros((m, d))
    for h in range(d):
        losses[rng.choice(m, m // 10 if h == 0 else 3 * m // 10, replace=False), h] = 1
    return losses


def test_dirichlet_alpha_past_the_thesis_bound_acts_as_the_bound():
    # α̃N ≤ m (thesis L1383): with m = 50 and d = 20, α̃ = 0.01 gives α̃N ≈ 10486 > 50.
    losses = one_clearly_best(50, 20)
    draw = lambda alpha: sample_risks(  # noqa: E731
        losses, 5, np.random.default_rng(0), sampler="dirichlet", alpha=alpha
    )
    assert np.array_equal(draw(0.01), draw(50 / 2**20))


def test_dirichlet_prior_does_not_drown_a_clearly_best_model():
    losses = one_clearly_best(50, 20)
    shares = win_shares(sample_risks(
        losses, 200, np.random.default_rng(5), sampler="dirichlet", alpha=0.01
    ))
    assert shares.argmax() == 0
    assert shares[0] > 0.3  # uncapped, the prior made it ≈ 0.08, near uniform (0.05)


def test_dirichlet_prior_cost_stays_bounded_in_a_large_pool():
    losses = one_clearly_best(40, 64)  # N = 2^64 states: uncapped, 10·α̃N atoms a sample
    risks = sample_risks(losses, 50, np.random.default_rng(6), sampler="dirichlet", alpha=1.0)
    assert risks.shape == (50, 64)
    assert np.all((risks >= 0) & (risks <= 1))


def test_prior_mass_is_alpha_times_the_states_up_to_the_data_mass():
    assert prior_mass(0.01, 4, 50.0) == pytest.approx(0.16)
    assert prior_mass(0.01, 20, 50.0) == 50.0
    assert prior_mass(0.01, 20, 0.3 * 50) == 15.0  # ρm under k-fold (L1454)
    assert prior_mass(1.0, 5000, 50.0) == 50.0  # no 2^5000 overflow
    assert prior_mass(0.0, 40, 50.0) == 0.0


def test_dirichlet_prior_refuses_losses_other_than_zero_one():
    losses = np.array([[0.0, 0.25], [1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ComponentOptionError,
                       match="needs zero-one losses.*scores a prediction 0.25, not 0 or 1"):
        sample_risks(losses, 10, np.random.default_rng(0), sampler="dirichlet", alpha=0.1)
    plain = sample_risks(losses, 10, np.random.default_rng(0), sampler="dirichlet", alpha=0.0)
    assert plain.shape == (10, 2)  # the Bayesian bootstrap (α̃ = 0) takes any loss


def test_agnostic_bayes_names_the_options_when_its_dirichlet_prior_meets_log_loss(
    make_classification,
):
    history, context = make_classification([{0}, {1}, {2}], 6)
    strategy = AgnosticBayes(sampler="dirichlet", alpha=0.1, loss="log-loss")
    with pytest.raises(ComponentOptionError, match="use loss: zero-one, alpha: 0"):
        strategy.ensemble(history, context)
    assert AgnosticBayes(sampler="dirichlet", alpha=0.1).ensemble(history, context) is not None


@pytest.mark.parametrize(
    ("loss", "ensemble_loss", "task"),
    [("log-loss", None, "classification"), (None, "log-loss", "classification"),
     (None, None, "regression")],  # the regression default, mse
)
def test_a_dirichlet_prior_with_a_loss_beyond_zero_one_is_refused_before_any_trial(
    loss, ensemble_loss, task
):
    """It was accepted, and every tell then raised, leaving its trial recorded complete."""
    from ConfigSpace import ConfigurationSpace

    from ensembo.errors import ExperimentError
    from ensembo.study import Study

    accepted = {"name": "agnostic-bayes", "sampler": "dirichlet", "alpha": 0.5}
    spec = {**accepted, "loss": ensemble_loss} if ensemble_loss else accepted
    targets = np.arange(12) % 3 if task == "classification" else np.linspace(0.0, 1.0, 12)
    space = ConfigurationSpace(space={"x": (0.0, 1.0)})
    with pytest.raises(ExperimentError, match="needs zero-one losses"):
        Study(space, surrogate=None, ensemble=spec, loss=loss, task=task,
              validation_targets=targets)
    Study(space, surrogate=None, ensemble=accepted, loss="zero-one", validation_targets=targets)


@pytest.mark.parametrize(
    "labels", [["b", "a", "c"], [10, 20, 30], [1, 2, 3]], ids=["strings", "tens", "one-based"]
)
def test_a_dirichlet_prior_checks_its_loss_on_class_indices_not_labels(labels):
    """The check scored the raw labels against made-up class probabilities: string
    labels were refused as 'invalid literal for int()', and 1-based or other integer
    labels raised IndexError, so the option worked only on labels 0..k-1."""
    from ConfigSpace import ConfigurationSpace

    from ensembo.errors import ExperimentError
    from ensembo.study import Study

    spec = {"name": "agnostic-bayes", "sampler": "dirichlet", "alpha": 0.5}
    targets = np.array(labels * 4)
    space = ConfigurationSpace(space={"x": (0.0, 1.0)})
    Study(space, surrogate=None, ensemble=spec, loss="zero-one", task="classification",
          validation_targets=targets)
    with pytest.raises(ExperimentError, match="needs zero-one losses"):
        Study(space, surrogate=None, ensemble=spec, loss="log-loss", task="classification",
              validation_targets=targets)


@pytest.mark.parametrize("loss", ["mse", "mae"])
def test_a_dirichlet_prior_refuses_mse_and_mae_on_whole_number_targets(loss):
    """Probed with a prediction off by exactly 1, whose squared and absolute errors are 1,
    they passed on counts or ratings; every tell then raised and kept its trial."""
    from ConfigSpace import ConfigurationSpace

    from ensembo.errors import ExperimentError
    from ensembo.study import Study

    spec = {"name": "agnostic-bayes", "sampler": "dirichlet", "alpha": 0.5}
    targets = np.arange(12) % 5 * 10.0  # whole numbers
    space = ConfigurationSpace(space={"x": (0.0, 1.0)})
    with pytest.raises(ExperimentError, match="needs zero-one losses"):
        Study(space, surrogate=None, ensemble=spec, loss=loss, task="regression",
              validation_targets=targets)


def one_shot_resample_counts(m, draws, n, rng):
    """The resamples as they were drawn before: all at once, as int64."""
    picks = rng.integers(0, m, size=(n, draws)) + m * np.arange(n)[:, None]
    return np.bincount(picks.ravel(), minlength=n * m).reshape(n, m)


@pytest.mark.parametrize(
    ("m", "draws", "n"), [(7, 7, 30), (3000, 1200, 700), (300, 5000, 3), (2, 1000, 5000)]
)
def test_resample_counts_are_the_same_draws_kept_in_small_integers(m, draws, n):
    counts = resample_counts(m, draws, n, np.random.default_rng([5, 11]))
    expected = one_shot_resample_counts(m, draws, n, np.random.default_rng([5, 11]))
    np.testing.assert_array_equal(counts, expected)
    assert counts.dtype == np.min_scalar_type(expected.max())


def test_tuning_rho_keeps_its_resamples_in_a_byte_per_entry(make_classification):
    """Twenty (n_samples, m) float64 weight matrices were kept for the whole study:
    1.5 GiB at m = 10,000 validation rows."""
    m, n_samples = 400, 100
    history, context = make_classification([set(range(i, 400, 3 + i)) for i in range(5)], m)
    strategy = AgnosticBayes(rho="tune", n_samples=n_samples)
    strategy.ensemble(history, context)
    kept = list(strategy._wins.values())
    assert len(kept) == len(RHO_GRID)
    assert all(wins.weights.dtype == np.uint8 for wins in kept)
    assert sum(wins.weights.nbytes for wins in kept) <= len(RHO_GRID) * n_samples * m


@pytest.mark.parametrize("rho", [RHO_GRID[0], RHO_GRID[11], 1.0])
def test_compact_resamples_give_the_posterior_of_the_float_weights_bit_for_bit(
    make_classification, rho
):
    history, context = make_classification([set(range(i, 60, 2 + i)) for i in range(6)], 60)
    strategy = AgnosticBayes(rho=rho, n_samples=200)
    pool = build_pool(history, context, "agnostic-bayes")
    losses = np.stack([np.argmax(p, axis=1) != context.y_true for p in pool.predictions],
                      axis=1).astype(float)
    draws = int(np.ceil(rho * 60))
    counts = one_shot_resample_counts(60, draws, 200, np.random.default_rng([context.seed, 11]))
    expected = BootstrapWins(counts / draws).shares(pool.numbers, losses)
    got = strategy.posterior(pool, losses, rho, context.seed)
    np.testing.assert_array_equal(got, expected)
