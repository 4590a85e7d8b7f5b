"""``clip_upper``: a few losses far above the rest must not blind the GP to the good ones."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ensembo
from ensembo.errors import ComponentOptionError
from ensembo.plugins.surrogates.scaling import clip_upper_tail
from ensembo.registry import registry


def test_targets_above_the_median_plus_spread_interquartile_ranges_are_clipped():
    y = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 100.0, math.inf])
    low, middle, high = np.percentile(y[:-1], [25, 50, 75])
    bound = middle + 5.0 * (high - low)
    assert clip_upper_tail(y, 5.0).tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, bound, bound]
    equal = np.array([1.0, 1.0, 1.0, 1.0, 9.0])  # no interquartile range: nothing to go by
    assert clip_upper_tail(equal, 5.0).tolist() == equal.tolist()
    assert clip_upper_tail(np.array([0.1, 50.0, 99.0]), 5.0).tolist() == [0.1, 50.0, 99.0]


@pytest.mark.parametrize("name", ["gp", "gp-cond"])
def test_the_option_is_checked_by_name(name):
    assert registry().create("surrogate", name, clip_upper=5).clip_upper == 5.0
    with pytest.raises(ComponentOptionError, match=f"{name}: clip_upper must be a finite number"):
        registry().create("surrogate", name, clip_upper=-1)


def test_a_tenth_of_the_box_at_100_no_longer_turns_the_search_into_space_filling():
    space = {"params": {"x": {"type": "float", "low": 0.0, "high": 1.0},
                        "y": {"type": "float", "low": 0.0, "high": 1.0}}}

    def loss(config):  # 0 to 0.85 over the box, and 100 where x > 0.9
        return 100.0 if config["x"] > 0.9 else (config["x"] - 0.3) ** 2 + (config["y"] - 0.6) ** 2

    def best(surrogate):
        return ensembo.Study(space, surrogate=surrogate, seed=0, n_initial=10).optimize(
            loss, n_trials=30).best_trial.loss

    assert best({"name": "gp"}) > 1e-3  # measured 1e-2: expected improvement filled space
    assert best({"name": "gp", "clip_upper": 5}) < 1e-6  # measured 7e-9
