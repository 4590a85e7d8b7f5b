"""The acquisition optimizer check 'best first' tells an optimizer returning the
lowest-scoring configurations (plugin audit F5): expected improvement over the best
trial was flat at zero on much of the space, so they tied with the best and passed."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.conformance import ConformanceError, check_acquisition_optimizer


class WorstInOrder:
    """The three lowest-scoring of 200 random configurations, the highest of them first."""

    def maximize(self, surface, space, history, n, rng):
        candidates = space.sample(200, rng)
        scores = surface.score(space.encode(candidates))
        return [candidates[i] for i in np.argsort(scores)[:n][::-1]]


def test_the_lowest_scoring_configurations_fail_even_in_order():
    with pytest.raises(ConformanceError) as caught:
        check_acquisition_optimizer(WorstInOrder)
    failed = dict(caught.value.failures)
    for label in ("flat", "conditional"):
        assert "below the median" in failed[
            f"up to n distinct valid configurations, best first, {label} space"]


@pytest.mark.parametrize("name", ["random", "local-search", "lbfgs"])
def test_builtin_optimizers_pass(name):
    assert len(check_acquisition_optimizer(name)) == 5
