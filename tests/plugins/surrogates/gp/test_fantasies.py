"""Pending points: constant liar and kriging believer with the GP."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisition_optimizers.random_search import RandomSearchOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.surrogates.gp.posterior import Posterior
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.proposal import ModelBasedProposer, SurrogateAcquisition
from ensembo.spaces import Space
from ensembo.trials import Evaluation, History, Trial


def _loss(config):
    return (config["x"] - 0.3) ** 2 + (config["y"] - 0.6) ** 2


def _history(space, n_done, n_pending, rng):
    history = History()
    configs = space.sample(n_done + n_pending, rng)
    for number, config in enumerate(configs):
        trial = Trial(number=number, config=config)
        if number < n_done:
            trial = trial.with_result(Evaluation(loss=_loss(config)), finished_at=0.0)
        history.put(trial)
    return history


@pytest.fixture
def space():
    return Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))


class RecordingGP(GaussianProcessSurrogate):
    """Counts hyperparameter fits and remembers what pending points were told."""

    fits = 0

    def fit(self, batch, y, rng):
        self.fits += 1
        super().fit(batch, y, rng)

    def conditioned(self, batch, y):
        self.last_lies = np.array(y)
        return super().conditioned(batch, y)


def _proposer(surrogate, fantasy="kriging-believer"):
    optimizer = LbfgsOptimizer(n_sobol=64, n_random=64)
    return ModelBasedProposer(surrogate, ExpectedImprovement(), optimizer, fantasy)


@pytest.mark.parametrize("fantasy", ["constant-liar", "kriging-believer"])
def test_pending_points_enter_the_surrogate_with_their_lie(space, fantasy):
    rng = np.random.default_rng(0)
    history = _history(space, 12, 3, rng)
    targets = np.array([t.loss for t in history.completed()])
    surrogate = RecordingGP()
    (config,) = _proposer(surrogate, fantasy).propose(space, history, targets, 1, rng)
    lies = surrogate.last_lies
    assert len(lies) == 3
    if fantasy == "constant-liar":
        np.testing.assert_allclose(lies, targets.min())
    else:  # the believer's lies are the model's predictions, not one constant
        assert np.ptp(lies) > 0 and np.all(lies >= targets.min() - 0.5)
    assert config not in [t.config for t in history.pending()]


def test_hyperparameters_are_fitted_once_per_set_of_results(space):
    rng = np.random.default_rng(1)
    history = _history(space, 12, 4, rng)
    targets = np.array([t.loss for t in history.completed()])
    surrogate = RecordingGP()
    proposer = _proposer(surrogate)
    proposer.propose(space, history, targets, 1, rng)
    fitted = surrogate.hyperparameters[0].to_vector()
    proposer.propose(space, history, targets, 1, rng)  # another ask, no new result
    assert surrogate.fits == 1
    np.testing.assert_array_equal(surrogate.hyperparameters[0].to_vector(), fitted)
    # a pending trial finishes: the next ask refits
    pending = history.pending()[0]
    history.put(pending.with_result(Evaluation(loss=_loss(pending.config)), finished_at=0.0))
    targets = np.array([t.loss for t in history.completed()])
    proposer.propose(space, history, targets, 1, rng)
    assert surrogate.fits == 2


def test_conditioning_keeps_hyperparameters_and_the_original_fit(space):
    rng = np.random.default_rng(2)
    history = _history(space, 15, 0, rng)
    batch = space.encode([t.config for t in history.completed()])
    y = np.array([t.loss for t in history.completed()])
    surrogate = GaussianProcessSurrogate()
    surrogate.fit(batch, y, rng)
    extra = space.encode(space.sample(3, rng))
    believed = surrogate.predict(extra)[0]
    probe = space.encode(space.sample(20, rng))
    before = surrogate.predict(probe)

    copy = surrogate.conditioned(extra, believed)

    np.testing.assert_allclose(surrogate.predict(probe), before)  # the original is untouched
    fitted = surrogate.hyperparameters[0]
    np.testing.assert_array_equal(copy.hyperparameters[0].to_vector(), fitted.to_vector())
    # same as a posterior built from scratch on all rows with these hyperparameters
    x = np.vstack([batch.values, extra.values])
    standardized = (np.concatenate([y, believed]) - surrogate._location) / surrogate._scale
    direct = Posterior(surrogate.kernel, fitted, x, standardized, np.zeros(18, dtype=np.int64))
    mean, variance = direct.predict(probe.values, np.zeros(20, dtype=np.int64))
    expected_mean = mean * surrogate._scale + surrogate._location
    np.testing.assert_allclose(copy.predict(probe)[0], expected_mean, atol=1e-9)
    np.testing.assert_allclose(copy.predict(probe)[1], variance * surrogate._scale**2, atol=1e-9)
    # believing the model's own mean leaves the mean alone and removes the uncertainty there
    np.testing.assert_allclose(copy.predict(probe)[0], before[0], atol=1e-6)
    assert np.all(copy.predict(extra)[1] < 1e-3 * surrogate.predict(extra)[1])


def test_without_pending_trials_the_proposal_is_a_plain_fit_and_maximize(space):
    """The serial path: one fit on the completed trials, EI against the best target."""
    history = _history(space, 12, 0, np.random.default_rng(3))
    targets = np.array([t.loss for t in history.completed()])
    proposer = _proposer(GaussianProcessSurrogate())
    proposed = proposer.propose(space, history, targets, 2, np.random.default_rng(4))

    rng = np.random.default_rng(4)
    surrogate = GaussianProcessSurrogate()
    surrogate.fit(space.encode([t.config for t in history.completed()]), targets, rng)
    surface = SurrogateAcquisition(surrogate, ExpectedImprovement(), float(targets.min()))
    optimizer = LbfgsOptimizer(n_sobol=64, n_random=64)
    assert proposed == optimizer.maximize(surface, space, history, 2, rng)


def test_unknown_fantasy_is_rejected_with_valid_ones():
    with pytest.raises(ValueError, match="kriging-believer"):
        ModelBasedProposer(
            GaussianProcessSurrogate(), ExpectedImprovement(), LbfgsOptimizer(), "believer"
        )


class PlainSurrogate:
    """No ``conditioned``: predicts the mean of what it was fitted on; records fits."""

    def __init__(self):
        self.fitted = []

    def fit(self, batch, y, rng):
        self.fitted.append(np.array(y))

    def predict(self, batch):
        return np.full(len(batch), self.fitted[-1].mean()), np.ones(len(batch))


def test_a_surrogate_without_conditioning_is_refitted_with_the_fantasies(space):
    rng = np.random.default_rng(5)
    history = _history(space, 10, 2, rng)
    targets = np.array([t.loss for t in history.completed()])
    surrogate = PlainSurrogate()
    optimizer = RandomSearchOptimizer()
    proposer = ModelBasedProposer(surrogate, ExpectedImprovement(), optimizer, "kriging-believer")
    proposer.propose(space, history, targets, 1, rng)
    on_completed, with_fantasies = surrogate.fitted
    np.testing.assert_allclose(on_completed, targets)
    np.testing.assert_allclose(with_fantasies, np.concatenate([targets, [targets.mean()] * 2]))
    # its last fit included the fantasies, so the next ask fits on the results again
    proposer.propose(space, history, targets, 1, rng)
    assert len(surrogate.fitted) == 4
    np.testing.assert_allclose(surrogate.fitted[2], targets)
