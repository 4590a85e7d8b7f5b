"""A surrogate refitted with its pending points (``rf``) proposes the same whether or not
this process fitted the previous ask: a study resumed with a trial pending repeats the
uninterrupted one."""

from __future__ import annotations

import numpy as np
from ConfigSpace import ConfigurationSpace

from ensembo import Study
from ensembo.plugins.acquisition_optimizers.local_search import LocalSearchOptimizer
from ensembo.plugins.acquisitions.expected_improvement import ExpectedImprovement
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.proposal import ModelBasedProposer
from ensembo.spaces import Space
from ensembo.trials import Evaluation, History, Trial


def _loss(config):
    return (config["x"] - 0.3) ** 2 + (config["y"] - 0.7) ** 2


def _space() -> ConfigurationSpace:
    return ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)})


def _proposer() -> ModelBasedProposer:
    return ModelBasedProposer(
        RandomForestSurrogate(),
        ExpectedImprovement(),
        LocalSearchOptimizer(n_random=100),
        fantasy="kriging-believer",
    )


def test_the_believer_fit_does_not_depend_on_an_earlier_ask():
    space = Space(_space())
    history = History()
    for number, config in enumerate(space.sample(12, seed=0)):
        trial = Trial(number=number, config=config)
        history.put(trial.with_result(Evaluation(loss=_loss(config)), finished_at=0.0))
    targets = np.array([t.loss for t in history.completed()])
    uninterrupted = _proposer()
    (pending,) = uninterrupted.propose(space, history, targets, 1, np.random.default_rng(12))
    history.put(Trial(number=12, config=pending))
    after_an_ask = uninterrupted.propose(space, history, targets, 1, np.random.default_rng(13))
    fresh = _proposer().propose(space, history, targets, 1, np.random.default_rng(13))
    assert after_an_ask == fresh


def test_a_study_resumed_with_a_trial_pending_proposes_as_the_uninterrupted_one(tmp_path):
    uninterrupted = Study(_space(), surrogate="rf", seed=0, storage=tmp_path / "a.db")
    uninterrupted.optimize(_loss, n_trials=12)
    uninterrupted.ask()
    expected = uninterrupted.ask().config  # trial 12 is pending

    interrupted = Study(_space(), surrogate="rf", seed=0, storage=tmp_path / "b.db")
    interrupted.optimize(_loss, n_trials=12)
    interrupted.ask()
    interrupted.close()
    resumed = Study.load(tmp_path / "b.db")
    resumed.ask()  # trial 12 again
    assert resumed.ask().config == expected
