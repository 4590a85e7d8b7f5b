"""Ensemble members are integer trial numbers: a float such as 4.0 is refused when the
ensemble is built, and by the study's keeper (plugin audit F3)."""

from __future__ import annotations

import re

import attrs
import numpy as np
import pytest

from ensembo import Ensemble, Study
from ensembo.errors import PluginContractError
from ensembo.plugins.ensembles.best import BestSingle


def test_numpy_integers_become_ints():
    ensemble = Ensemble(members=np.array([3, 1]), weights=(1.0, 1.0))
    assert ensemble.members == (3, 1)
    assert all(type(m) is int for m in ensemble.members)


@pytest.mark.parametrize("member", [4.0, np.float64(4.0), "4", True])
def test_other_members_are_refused_naming_them(member):
    with pytest.raises(ValueError, match=r"trial numbers \(int\), got " + re.escape(repr(member))):
        Ensemble(members=(2, member), weights=(1.0, 1.0))


def test_from_weights_refuses_a_float_trial_number():
    with pytest.raises(ValueError, match=r"got 4\.0 \(float\)"):
        Ensemble.from_weights({4.0: 1.0})


@attrs.frozen(kw_only=True)
class LooseEnsemble(Ensemble):
    """A subclass that drops the members' conversion."""

    members: tuple = attrs.field(converter=tuple)


class FloatMembers(BestSingle):
    def ensemble(self, history, context):
        best = history.best()
        return None if best is None else LooseEnsemble(members=(float(best.number),),
                                                       weights=(1.0,), size=1.0)


def test_the_keeper_refuses_float_members_naming_the_strategy(flat_space):
    study = Study(flat_space, surrogate=None, ensemble=FloatMembers())
    with pytest.raises(PluginContractError,
                       match=r"FloatMembers built an ensemble of members \[0\.0\], but \[0\.0\] "
                             r"are not trial numbers"):
        study.tell(study.ask(), 1.0)
    assert study.ensemble is None
