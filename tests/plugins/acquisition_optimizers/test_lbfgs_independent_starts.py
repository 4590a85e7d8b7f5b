"""``lbfgs`` ascends every start on its own: neither a start with an extreme value nor
an offset of the acquisition stops the others.

The starts used to be ascended as one summed L-BFGS-B problem divided by the largest
|value|. L-BFGS-B's stopping tests are absolute, so one incumbent with log-EI -3.7e8, or
LCB under a target offset of 1e6, scaled every gradient below ``pgtol``: no start moved.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace

from ensembo.plugins.acquisition_optimizers.lbfgs import LbfgsOptimizer
from ensembo.plugins.acquisitions.log_expected_improvement import LogExpectedImprovement
from ensembo.plugins.acquisitions.lower_confidence_bound import LowerConfidenceBound
from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.proposal import SurrogateAcquisition
from ensembo.spaces import EncodedBatch, Space
from ensembo.trials import Evaluation, History, Trial

CUBE = Space(ConfigurationSpace(space={"a": (0.0, 1.0), "b": (0.0, 1.0), "c": (0.0, 1.0)}))


def _history(configs, losses) -> History:
    history = History()
    for number, (config, loss) in enumerate(zip(configs, losses, strict=True)):
        history.put(
            Trial(number=number, config=config).with_result(
                Evaluation(loss=float(loss)), finished_at=0.0
            )
        )
    return history


def _noise_free_problem(offset: float = 0.0):
    """15 noise-free observations in 3-D: the GP's noise fits to its floor, and log-EI at
    an observed non-best point is about -1e8."""
    configs = CUBE.sample(15, np.random.default_rng(7))
    x = CUBE.encode(configs).values
    y = offset + np.sum((x - 0.4) ** 2, 1) + 0.2 * np.sin(9 * x[:, 0])
    surrogate = GaussianProcessSurrogate()
    surrogate.fit(CUBE.encode(configs), y, np.random.default_rng(0))
    return surrogate, configs, y


class ShiftedQuadratic:
    """``offset - sum_j (x_j - target_j)^2``, with its gradient."""

    def __init__(self, target: np.ndarray, offset: float):
        self.target, self.offset = target, offset

    def score(self, batch: EncodedBatch) -> np.ndarray:
        return self.score_with_gradient(batch)[0]

    def score_with_gradient(self, batch: EncodedBatch):
        diff = batch.values - self.target
        return self.offset - (diff**2).sum(1), -2.0 * diff


@pytest.mark.parametrize("offset", [0.0, 1e6, -1e8])
def test_the_optimum_is_found_whatever_the_offset(offset):
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    surface = ShiftedQuadratic(np.array([0.3123, 0.8765]), offset)
    (best,) = LbfgsOptimizer().maximize(surface, space, History(), 1, np.random.default_rng(0))
    assert best["x"] == pytest.approx(0.3123, abs=1e-4)
    assert best["y"] == pytest.approx(0.8765, abs=1e-4)


def test_an_incumbent_with_an_extreme_log_ei_does_not_stop_the_other_starts():
    surrogate, configs, y = _noise_free_problem()
    surface = SurrogateAcquisition(surrogate, LogExpectedImprovement(), float(y.min()), targets=y)
    second_best = CUBE.encode([configs[int(np.argsort(y)[1])]])
    assert surface.score(second_best)[0] < -1e6
    history = _history(configs, y)
    for seed in range(3):
        (alone,) = LbfgsOptimizer(n_incumbents=0).maximize(
            surface, CUBE, history, 1, np.random.default_rng(seed)
        )
        (with_incumbents,) = LbfgsOptimizer().maximize(  # two incumbents by default
            surface, CUBE, history, 1, np.random.default_rng(seed)
        )
        best_alone = surface.score(CUBE.encode([alone]))[0]
        assert surface.score(CUBE.encode([with_incumbents]))[0] >= best_alone - 1e-9


def test_lcb_proposals_ignore_a_target_offset():
    """LCB shifted by the targets' offset has the same maximizer."""
    proposals = []
    for offset in (0.0, 1e6):
        surrogate, configs, y = _noise_free_problem(offset)
        surface = SurrogateAcquisition(surrogate, LowerConfidenceBound(2.0), float(y.min()))
        (best,) = LbfgsOptimizer().maximize(
            surface, CUBE, _history(configs, y), 1, np.random.default_rng(0)
        )
        proposals.append([best[name] for name in CUBE.names])
    np.testing.assert_allclose(proposals[1], proposals[0], atol=1e-4)


class Bump:
    """``exp(-k |x - target|^2)``: far from the target its gradient is subnormal."""

    def __init__(self, target: np.ndarray, k: float):
        self.target, self.k = target, k

    def score(self, batch: EncodedBatch) -> np.ndarray:
        return self.score_with_gradient(batch)[0]

    def score_with_gradient(self, batch: EncodedBatch):
        diff = batch.values - self.target
        value = np.exp(-self.k * (diff**2).sum(1))
        return value, -2.0 * self.k * diff * value[:, None]


def test_a_start_with_a_subnormal_gradient_does_not_overflow():
    """Its gain was divided by its gradient of ~1e-318 and overflowed to inf."""
    space = Space(ConfigurationSpace(space={"x": (0.0, 1.0), "y": (0.0, 1.0)}))
    optimizer = LbfgsOptimizer()
    surface = Bump(np.array([0.5, 0.5]), k=1465.0)
    far = space.vectors([{"x": 1.0, "y": 1.0}])
    assert 0 < np.abs(surface.score_with_gradient(space.encode_vectors(far))[1]).max() < 1e-300
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ascended = optimizer._ascend(surface, space, optimizer._relaxation(space), far)
    assert np.all(np.isfinite(ascended))
