"""Pending points: constant liar and kriging believer with the GP."""

from __future__ import annotations

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.proposal import ModelBasedProposer
from ensembo.spaces import Space
from ensembo.trials import Evaluation, History, Trial


def _history(space, n_done, n_pending, rng):
    history = History()
    configs = space.sample(n_done + n_pending, rng)
    for number, config in enumerate(configs):
        trial = Trial(number=number, config=config)
        if number < n_done:
            loss = (config["x"] - 0.3) ** 2 + (config["y"] - 0.6) ** 2
            trial = trial.with_result(Evaluation(loss=loss), finished_at=0.0)
        history.put(trial)
    return history


class RecordingGP(GaussianProcessSurrogate):
    def fit(self, batch, y, rng):
        self.last_targets = np.array(y)
        super().fit(batch, y, rng)


@pytest.mark.parametrize("fantasy", ["constant-liar", "kriging-believer"])
def test_pending_points_enter_the_fit_with_their_lie(fantasy):
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    rng = np.random.default_rng(0)
    history = _history(space, 12, 3, rng)
    targets = np.array([t.loss for t in history.completed()])
    surrogate = RecordingGP()
    proposer = ModelBasedProposer(surrogate, ExpectedImprovement(), LbfgsOptimizer(n_sobol=64, n_random=64), fantasy)
    (config,) = proposer.propose(space, history, targets, 1, rng)
    lies = surrogate.last_targets[12:]
    assert len(lies) == 3
    if fantasy == "constant-liar":
        np.testing.assert_allclose(lies, targets.min())
    else:  # the believer's lies are the model's predictions, not one constant
        assert np.ptp(lies) > 0 and np.all(lies >= targets.min() - 0.5)
    pending = [t.config for t in history.pending()]
    assert config not in pending


def test_unknown_fantasy_is_rejected_with_valid_ones():
    with pytest.raises(ValueError, match="kriging-believer"):
        ModelBasedProposer(GaussianProcessSurrogate(), ExpectedImprovement(), LbfgsOptimizer(), "believer")
