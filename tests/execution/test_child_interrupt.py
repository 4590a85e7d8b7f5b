"""An objective raising KeyboardInterrupt in a child process stops the run as in-process.

The serial loop records such a trial INTERRUPTED and runs it again later; in a child
(``trial_timeout``, ``n_jobs``) the interrupt came back as an ordinary error and the
trial was recorded FAILED, never to be retried.
"""

from __future__ import annotations

import pytest

from ensembo import Study
from ensembo.execution import TrialLimits, evaluate, evaluate_in_child
from ensembo.trials import TrialState

CHILD_RUNS = [{"trial_timeout": 30}, {"n_jobs": 2}, {"n_jobs": 2, "trial_timeout": 30}]


def quadratic(config) -> float:
    return (config["x"] - 1.0) ** 2 + config["y"]


def interrupted_on_the_second_call(tmp_path):
    """An objective that raises KeyboardInterrupt the second time it is called; calls
    are counted in files, since each runs in its own process."""

    def objective(config):
        calls = len(list(tmp_path.glob("call-*")))
        (tmp_path / f"call-{calls}").touch()
        if calls == 1:
            raise KeyboardInterrupt
        return quadratic(config)

    return objective


def test_an_interrupt_in_the_child_is_raised_in_the_parent():
    # sys.exit() in the objective is a trial failure instead: test_objective_sys_exit.py
    def objective(config):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate_in_child(objective, {})
    with pytest.raises(KeyboardInterrupt):
        evaluate(objective, {}, TrialLimits(wall_time=30))


@pytest.mark.parametrize("options", CHILD_RUNS, ids=["timeout", "n_jobs", "both"])
def test_ctrl_c_in_a_child_objective_interrupts_the_trial_and_resume_reruns_it(
    flat_space, tmp_path, options
):
    path = tmp_path / "s.db"
    calls = tmp_path / "calls"
    calls.mkdir()
    with pytest.raises(KeyboardInterrupt):
        Study(flat_space, surrogate=None, seed=0, storage=path).optimize(
            interrupted_on_the_second_call(calls), n_trials=4, **options
        )
    with Study.load(path) as resumed:
        interrupted = [t for t in resumed.trials if t.state is TrialState.INTERRUPTED]
        assert interrupted and all(t.error == "KeyboardInterrupt" for t in interrupted)
        assert TrialState.FAILED not in [t.state for t in resumed.trials]
        resumed.optimize(quadratic, n_trials=4, **options)
        assert {t.state for t in resumed.trials} == {TrialState.COMPLETE}
        assert max(t.attempts for t in resumed.trials) == 2
