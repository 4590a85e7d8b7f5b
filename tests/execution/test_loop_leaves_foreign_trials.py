"""An optimize run stopped by Ctrl-C or an error interrupts only the trials it asked:
one asked by hand (evaluated elsewhere) stays running, and is not handed out twice."""

from __future__ import annotations

import pytest

from ensembo import Study, TrialState


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_stopped_optimize_leaves_a_trial_asked_by_hand_running(flat_space, error):
    study = Study(flat_space, surrogate=None, seed=0)
    remote = study.ask()

    def objective(config):
        raise error("stop")

    with pytest.raises(error):
        study.optimize(objective, n_trials=1, catch=())
    assert study.trials[remote.number].state is TrialState.RUNNING
    assert study.trials[1].state in (TrialState.INTERRUPTED, TrialState.FAILED)
    assert study.ask().number != remote.number
