"""An objective that calls ``sys.exit()`` fails its trial; it does not end the run.

A library the objective uses may exit on its own (argparse or click on an argument it
refuses). The SystemExit went through the loop: the run ended, often with status 0,
the trial was left INTERRUPTED ("stopped by SystemExit"), and every resume ran it first
and exited again, so the study never moved on. In a child process (``trial_timeout``)
the child's SystemExit was raised again in the driver.
"""

from __future__ import annotations

import sys

import pytest

from ensembo import Study
from ensembo.execution import ObjectiveExit, OutcomeKind, TrialLimits, evaluate
from ensembo.trials import TrialState

RUNS = [{}, {"trial_timeout": 30}, {"n_jobs": 2}]
RUN_IDS = ["in-process", "child", "n_jobs"]


def exits_on_the_second_call(calls, code):
    """An objective that calls ``sys.exit(code)`` the second time it is called; calls
    are counted in files, since in a child each runs in its own process."""

    def objective(config):
        number = len(list(calls.glob("call-*")))
        (calls / f"call-{number}").touch()
        if number == 1:
            sys.exit(code)
        return config["x"] ** 2

    return objective


def always_exits(config):
    sys.exit(3)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
@pytest.mark.parametrize("code", [0, 3])
def test_sys_exit_fails_its_trial_and_the_run_goes_on(flat_space, tmp_path, options, code):
    study = Study(flat_space, surrogate=None, seed=0)
    study.optimize(exits_on_the_second_call(tmp_path, code), n_trials=4, **options)
    failed = [t for t in study.trials if t.state is TrialState.FAILED]
    text = f"the objective called sys.exit({code}) (SystemExit: {code})"
    assert [t.error for t in failed] == [text]
    assert [t.state for t in study.trials].count(TrialState.COMPLETE) == 3
    assert [t.attempts for t in study.trials] == [1, 1, 1, 1]


@pytest.mark.parametrize("options", RUNS[:2], ids=RUN_IDS[:2])
def test_a_resume_does_not_run_an_exiting_trial_again(flat_space, tmp_path, options):
    path = tmp_path / "s.db"
    Study(flat_space, surrogate=None, seed=0, storage=path).optimize(
        always_exits, n_trials=2, **options
    )
    with Study.load(path) as resumed:
        resumed.optimize(always_exits, n_trials=2, **options)
        assert [(t.number, t.state, t.attempts) for t in resumed.trials] == [
            (n, TrialState.FAILED, 1) for n in range(4)
        ]


@pytest.mark.parametrize("options", RUNS[:2], ids=RUN_IDS[:2])
def test_an_exit_not_in_catch_fails_the_trial_and_propagates(flat_space, options):
    study = Study(flat_space, surrogate=None, seed=0)
    with pytest.raises(ObjectiveExit, match=r"sys\.exit\(3\) \(SystemExit: 3\)") as raised:
        study.optimize(always_exits, n_trials=2, catch=(), **options)
    assert raised.value.code == 3
    assert [(t.state, t.attempts) for t in study.trials] == [(TrialState.FAILED, 1)]


@pytest.mark.parametrize(
    "limits", [TrialLimits(), TrialLimits(wall_time=30)], ids=["here", "child"]
)
@pytest.mark.parametrize(
    ("argument", "text"),
    [
        ((), "sys.exit() (SystemExit)"),
        (("bad option",), "sys.exit('bad option') (SystemExit: bad option)"),
    ],
    ids=["no-code", "message"],
)
def test_the_failure_names_the_exit_and_keeps_where_it_was_called(limits, argument, text):
    def objective(config):
        sys.exit(*argument)

    outcome = evaluate(objective, {}, limits)
    assert outcome.kind is OutcomeKind.RAISED
    assert outcome.message == f"the objective called {text}"
    assert isinstance(outcome.error, ObjectiveExit)
    assert "sys.exit(*argument)" in outcome.traceback


def test_a_system_exit_of_the_driver_still_ends_the_run(flat_space):
    """Only the objective's exit is a trial failure: one raised outside it (here by
    ``ask``, as a program's SIGTERM handler could) stops the run as before."""
    study = Study(flat_space, surrogate=None, seed=0)
    ask = study.ask

    def ask_then_exit():
        if study.trials:
            raise SystemExit(143)
        return ask()

    study.ask = ask_then_exit
    with pytest.raises(SystemExit):
        study.optimize(lambda config: config["x"], n_trials=3)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE]
