"""An objective whose return value is no loss fails its trial as loudly as one that
raises: a WARNING naming the trial, and ``ensembo run`` exits 1 when nothing completed."""

from __future__ import annotations

import logging
import math
import re
import textwrap

import numpy as np
import pytest

from ensembo import Study, TrialState
from ensembo.cli import main
from ensembo.objective import InvalidResultError


def forgot_return(config):
    loss = (config["x"] - 0.3) ** 2  # noqa: F841 - the mistake under test: no `return loss`


@pytest.mark.parametrize(
    ("objective", "message"),
    [
        (forgot_return, "the objective returned None; did it forget to `return` its loss?"),
        (lambda config: math.nan, "the objective returned a non-finite loss (nan)"),
        (lambda config: "0.3", "must return a number, an ensembo.Evaluation or a mapping"),
    ],
    ids=["none", "nan", "string"],
)
def test_an_invalid_return_is_logged_at_warning_like_an_exception(
    flat_space, caplog, objective, message
):
    caplog.set_level(logging.WARNING, logger="ensembo.execution.loop")
    study = Study(flat_space, surrogate=None, seed=0).optimize(objective, n_trials=2)
    assert [t.state for t in study.trials] == [TrialState.FAILED] * 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert warnings[0].startswith("trial 0 failed: ") and message in warnings[0]
    assert message in study.trials[0].error


@pytest.mark.parametrize(
    "result",
    [np.array(0.25), np.array([0.25]), np.array([[0.25]]), np.float32(0.25), np.int64(2)],
    ids=["0-d", "size-1", "1x1", "float32", "int64"],
)
def test_tell_accepts_a_numpy_scalar_or_one_element_array(flat_space, result):
    study = Study(flat_space, surrogate=None)
    told = study.tell(study.ask(), result)
    assert told.state is TrialState.COMPLETE, told.error
    assert told.loss == pytest.approx(float(np.asarray(result).item()))


def test_tell_still_refuses_an_array_of_several_losses(flat_space):
    study = Study(flat_space, surrogate=None)
    with pytest.raises(InvalidResultError, match=re.escape("got ndarray: array([0.1, 0.2])")):
        study.tell(study.ask(), np.array([0.1, 0.2]))


EXPERIMENT = """
space:
  params:
    x: {{type: float, low: 0.0, high: 1.0}}
objective: {module}:objective
budget: 3
surrogate: null
seed: 0
"""


def _experiment(tmp_path, module: str, body: str):
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(body))
    path = tmp_path / "experiment.yaml"
    path.write_text(EXPERIMENT.format(module=module))
    return path


def test_run_exits_1_with_the_errors_when_no_trial_completed(tmp_path, capsys):
    path = _experiment(tmp_path, "forgetful_objective", """
        def objective(config):
            loss = config["x"] ** 2
    """)
    assert main(["run", str(path), "--storage", str(tmp_path / "s.db"), "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "trials: 3 (0 complete, 3 failed)" in captured.out
    assert "ensembo: error: no trial completed (3 failed); the objective's errors:" in (
        captured.err
    )
    assert "trials 0, 1, 2: the objective returned None" in captured.err


def test_run_exits_0_when_some_trials_completed(tmp_path, capsys):
    path = _experiment(tmp_path, "half_broken_objective", """
        def objective(config):
            if config["x"] < 0.5:
                raise ValueError("too small")
            return config["x"]
    """)
    path.write_text(path.read_text().replace("budget: 3", "budget: 8"))
    assert main(["run", str(path), "--storage", str(tmp_path / "s.db"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "complete" in out and "ensembo: error" not in out
