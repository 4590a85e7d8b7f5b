"""Negative, NaN and all-zero weights and counts are refused, and so is an ensemble of
no members (plugin audit F2)."""

from __future__ import annotations

import math

import pytest

from ensembo import Ensemble, Study
from ensembo.errors import PluginContractError
from ensembo.ml.final import final_ensemble
from ensembo.plugins.ensembles.best import BestSingle


@pytest.mark.parametrize("build", [Ensemble.from_weights, Ensemble.from_counts])
def test_zeros_are_dropped(build):
    ensemble = build({3: 2.0, 1: 0.0, 2: 1.0})
    assert ensemble.members == (2, 3)
    assert ensemble.weights == pytest.approx((1 / 3, 2 / 3))


@pytest.mark.parametrize("build", [Ensemble.from_weights, Ensemble.from_counts])
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_negative_and_non_finite_values_are_refused_naming_them(build, bad):
    with pytest.raises(ValueError, match=r"finite and non-negative, got \w+ \{4: "):
        build({2: 1.0, 4: bad})


@pytest.mark.parametrize("build", [Ensemble.from_weights, Ensemble.from_counts])
@pytest.mark.parametrize("given", [{}, {1: 0.0, 2: 0}])
def test_no_member_left_is_refused(build, given):
    with pytest.raises(ValueError, match="at least one member"):
        build(given)


class NoMembers(BestSingle):
    def ensemble(self, history, context):
        return Ensemble(members=(), weights=()) if history.completed() else None


def test_the_keeper_refuses_an_ensemble_of_no_members_naming_the_strategy(flat_space):
    study = Study(flat_space, surrogate=None, ensemble=NoMembers())
    with pytest.raises(PluginContractError, match="NoMembers built an ensemble with no members"):
        study.tell(study.ask(), 1.0)
    assert study.ensemble is None


class _Study:
    strategy, ensemble = object(), None


def test_the_final_ensemble_stands_in_the_best_trial_only_without_an_ensemble(flat_space):
    best = Study(flat_space).ask()
    assert final_ensemble(_Study(), best) == Ensemble.single(best.number)
    study = _Study()
    study.ensemble = Ensemble.from_weights({7: 1.0})
    assert final_ensemble(study, best) == study.ensemble
