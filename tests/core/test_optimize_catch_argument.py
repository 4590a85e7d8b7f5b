"""optimize's ``catch`` is checked before the first trial: a list (Optuna's style) or a
single class works; anything else is refused naming ``catch``, not with isinstance's
own TypeError at the objective's first error."""

from __future__ import annotations

import pytest

from ensembo import Study, TrialState
from ensembo.errors import ExperimentError


def diverging(config):
    if config["x"] > 0.5:
        raise ValueError("diverged")
    return config["x"] ** 2


@pytest.mark.parametrize("catch", [[ValueError], ValueError, (ValueError,), {ValueError}])
def test_catch_as_a_list_or_a_class_catches(flat_space, catch):
    study = Study(flat_space, surrogate=None, seed=0)
    study.optimize(diverging, n_trials=12, catch=catch)
    assert len(study.trials) == 12
    assert any(t.state is TrialState.FAILED for t in study.trials)


@pytest.mark.parametrize(
    "catch", [None, "ValueError", ValueError("x"), 5, [ValueError, 3], (int,)]
)
def test_a_catch_that_is_no_exception_class_is_refused_before_the_first_trial(
    flat_space, catch
):
    study = Study(flat_space, surrogate=None, seed=0)
    with pytest.raises(ExperimentError, match="^catch: "):
        study.optimize(diverging, n_trials=3, catch=catch)
    assert len(study.trials) == 0
