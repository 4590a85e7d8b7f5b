"""An observer that raises stops the study with a note naming it; what was recorded
before stays."""

from __future__ import annotations

import pytest

from ensembo import Study, TrialState, hookimpl
from ensembo.registry import Registry


class BrokenObserver:
    @hookimpl
    def ensembo_trial_finished(self, study, trial):
        raise RuntimeError("observer boom")


def broken_callback(study, trial):
    raise RuntimeError("callback boom")


def _raised_notes(study):
    with pytest.raises(RuntimeError) as raised:
        study.optimize(lambda config: config["x"] ** 2, n_trials=3)
    return raised.value.__notes__


def test_an_installed_observer_that_raises_is_named_by_its_distribution(flat_space):
    registry = Registry.from_plugins({"acme-telemetry": BrokenObserver()}, builtins=True)
    study = Study(flat_space, surrogate=None, registry=registry)
    notes = _raised_notes(study)
    assert "in the ensembo_trial_finished hook of plugin acme-telemetry" in notes
    assert [t.state for t in study.trials] == [TrialState.COMPLETE]


@pytest.mark.parametrize(
    ("callback", "named"),
    [(BrokenObserver(), "callback BrokenObserver object"), (broken_callback,
                                                            "callback broken_callback")],
)
def test_a_callback_that_raises_is_named(flat_space, callback, named):
    notes = _raised_notes(Study(flat_space, surrogate=None, callbacks=[callback]))
    assert f"in the ensembo_trial_finished hook of {named}" in notes
