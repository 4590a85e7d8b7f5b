"""Surrogates and proposals do not depend on the unit of the targets.

Rescaling the targets by a positive constant must rescale the predictions (mean by c,
variance by c^2) and leave the proposals alone; constants written in target units
(a 1e-12 threshold on the spread, a 1e-10 variance floor) broke that for small targets.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
from ensembo.plugins.surrogates.rf import RandomForestSurrogate
from ensembo.plugins.surrogates.scaling import standardize
from ensembo.spaces import load
from ensembo.trials import History, Trial, TrialState
from ensembo.wiring import build_proposer

SCALES = [1e-13, 1.0, 1e6]
LINE = load({"params": {"x": {"type": "float", "low": 0.0, "high": 1.0}}})


def observed(n: int = 12):
    configs = LINE.sample(n, np.random.default_rng(0))
    x = np.array([c["x"] for c in configs])
    return configs, np.sin(6 * x)


def fitted_posterior(surrogate, configs, y, scale):
    """Mean and variance at probe points, in the units of the unscaled targets."""
    surrogate.fit(LINE.encode(configs), y * scale, np.random.default_rng(1))
    probe = LINE.encode([{"x": x} for x in np.linspace(0.0, 1.0, 41)])
    mean, variance = surrogate.predict(probe)
    return mean / scale, variance / scale**2


@pytest.mark.parametrize(
    "make", [GaussianProcessSurrogate, RandomForestSurrogate], ids=["gp", "rf"]
)
def test_the_posterior_scales_with_the_targets(make):
    configs, y = observed()
    reference = fitted_posterior(make(), configs, y, 1.0)
    for scale in SCALES:
        mean, variance = fitted_posterior(make(), configs, y, scale)
        np.testing.assert_allclose(mean, reference[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(variance, reference[1], rtol=1e-4, atol=1e-8)


def test_a_gp_learns_targets_of_order_1e_13():
    configs, y = observed()
    mean, _ = fitted_posterior(GaussianProcessSurrogate(), configs, y, 1e-13)
    probe = np.linspace(0.0, 1.0, 41)
    seen = [c["x"] for c in configs]
    inside = (probe >= min(seen)) & (probe <= max(seen))  # no extrapolation
    assert np.max(np.abs(mean - np.sin(6 * probe))[inside]) < 0.1


def history_of(configs, losses) -> History:
    return History(
        [
            Trial(number=i, config=c, state=TrialState.COMPLETE, loss=float(loss))
            for i, (c, loss) in enumerate(zip(configs, losses, strict=True))
        ]
    )


@pytest.mark.parametrize(
    ("surrogate", "acquisition", "optimizer"),
    [
        ("gp", "ei", "lbfgs"),
        ("gp", "lcb", "lbfgs"),
        ("rf", "ei", "local-search"),
        ("rf", "log-ei", "random"),
    ],
)
def test_proposals_do_not_depend_on_the_unit_of_the_targets(surrogate, acquisition, optimizer):
    configs, y = observed()
    proposals = []
    for scale in SCALES:
        specs = {
            "surrogate": surrogate,
            "acquisition": acquisition,
            "acquisition_optimizer": optimizer,
        }
        proposer = build_proposer(specs, None).proposer
        history = history_of(configs, y * scale)
        proposed = proposer.propose(LINE, history, y * scale, 3, np.random.default_rng(2))
        proposals.append([c["x"] for c in proposed])
    np.testing.assert_allclose(proposals[0], proposals[1], atol=1e-6)
    np.testing.assert_allclose(proposals[2], proposals[1], atol=1e-6)


TOO_SMALL_TO_SQUARE = 1e-170
"""Its square underflows to 0: ``np.std`` of such targets was 0."""


def test_targets_too_small_to_square_keep_their_spread():
    """A scale of 0 standardized distinct targets to -inf, nan and inf."""
    y = np.array([1.0, 2.0, 3.0])
    standardized, _, scale = standardize(y * TOO_SMALL_TO_SQUARE)
    np.testing.assert_allclose(standardized, standardize(y)[0])
    assert scale == pytest.approx(np.std(y) * TOO_SMALL_TO_SQUARE)


@pytest.mark.parametrize(("surrogate", "optimizer"), [("gp", "lbfgs"), ("rf", "local-search")])
def test_proposals_follow_losses_too_small_to_square(surrogate, optimizer):
    """Every model-based ask failed with "predict returned NaN or infinite means"."""
    configs, y = observed()
    specs = {"surrogate": surrogate, "acquisition": "ei", "acquisition_optimizer": optimizer}
    proposer = build_proposer(specs, None).proposer
    targets = (y + 2.0) * TOO_SMALL_TO_SQUARE
    proposed = proposer.propose(
        LINE, history_of(configs, targets), targets, 2, np.random.default_rng(3)
    )
    assert len(proposed) == 2 and all(LINE.is_valid(c) for c in proposed)
    mean, _ = proposer.surrogate.predict(LINE.encode(proposed))
    assert np.all(np.isfinite(mean))
