"""The keeper holds a strategy's ``ensemble()`` to its contract."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo import Study
from ensembo.errors import TrialError
from ensembo.plugins.ensembles.best import BestSingle


class ReturnsAnArray(BestSingle):
    def ensemble(self, history, context):
        return np.array([0.5, 0.5]) if history.completed() else None


def test_an_array_in_place_of_an_ensemble_is_refused_naming_the_strategy(flat_space):
    """``==`` on an array raised numpy's "truth value is ambiguous" instead."""
    study = Study(flat_space, surrogate=None, ensemble=ReturnsAnArray())
    with pytest.raises(TrialError, match=r"ReturnsAnArray: ensemble\(\) must return an "
                                         r"ensembo\.Ensemble or None, got ndarray"):
        study.tell(study.ask(), 1.0)
    assert len(study.history.completed()) == 1  # the result is kept
