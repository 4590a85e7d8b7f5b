"""``lbfgs`` starts from the trials that are best by the targets the surrogate models.

Ensemble strategies re-label trials (a trial's target need not follow its loss), so the
surface's optimum sits near the best *targets*. A surface that carries its targets (one
per completed trial, attribute ``targets``) has the incumbents chosen by them.
"""

from __future__ import annotations

import numpy as np

from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.spaces import load
from ensembo.trials import Evaluation, History, Trial

LINE = load({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}})
CONFIGS = [{"x": 0.1}, {"x": 0.5}, {"x": 0.9}]
LOSSES = [1.0, 2.0, 3.0]  # best by loss: 0.1, then 0.5
TARGETS = np.array([0.7, 0.2, 0.1])  # best by target: 0.9, then 0.5


class FlatSurface:
    """A differentiable surface that says nothing, so only the starts matter."""

    def __init__(self, targets=None):
        if targets is not None:
            self.targets = targets

    def score(self, batch):
        return np.zeros(len(batch))

    def score_with_gradient(self, batch):
        return np.zeros(len(batch)), np.zeros_like(batch.values)


def history() -> History:
    trials = History()
    for number, (config, loss) in enumerate(zip(CONFIGS, LOSSES, strict=True)):
        trials.put(Trial(number=number, config=config).with_result(Evaluation(loss=loss), 0.0))
    return trials


def incumbent_starts(surface) -> list[float]:
    """The ``x`` of the incumbents among the starts the optimizer ascends."""
    optimizer = LbfgsOptimizer(n_sobol=0, n_random=4, n_starts=1, n_incumbents=2)
    captured = []

    def ascend(surface, space, relaxation, starts):
        captured.append(starts)
        return starts

    optimizer._ascend = ascend
    optimizer.maximize(surface, LINE, history(), 1, np.random.default_rng(0))
    (starts,) = captured
    return [config["x"] for config in LINE.from_vectors(starts[-2:])]


def test_incumbent_starts_follow_the_targets_not_the_losses():
    assert incumbent_starts(FlatSurface(TARGETS)) == [0.9, 0.5]


def test_without_targets_the_incumbents_are_the_lowest_losses():
    assert incumbent_starts(FlatSurface()) == [0.1, 0.5]


def test_the_study_surface_carries_the_targets_the_surrogate_was_fit_to():
    """The proposer built the surface without them, so lbfgs ranked by loss."""
    from ensembo.proposal import ModelBasedProposer
    from ensembo.registry import registry

    seen = []

    class Spy:
        def maximize(self, surface, space, history, n, rng):
            seen.append(surface.targets)
            return [space.sample(1, rng)[0] for _ in range(n)]

    proposer = ModelBasedProposer(registry().create("surrogate", "rf"),
                                  registry().create("acquisition", "ei"), Spy())
    proposer.propose(LINE, history(), TARGETS, 1, np.random.default_rng(0))
    np.testing.assert_array_equal(seen[0], TARGETS)
