"""Ctrl-C in a run on a ThreadPoolExecutor with limits kills the evaluation processes its
threads forked: they were not tracked, so the pool's shutdown waited for each to end."""

from __future__ import annotations

import concurrent.futures
import os
import time

import pytest

import ensembo
from ensembo import Study, TrialState


def first_returns_the_others_hang(config, folder):
    """The first evaluation returns once a second one runs; every other hangs 30 s."""
    (folder / "pids" / str(os.getpid())).touch()
    try:
        os.close(os.open(folder / "first", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        time.sleep(30)
        return 1.0
    deadline = time.monotonic() + 20
    while len(list((folder / "pids").iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    return 0.0


class CtrlCAtFirstResult:
    @ensembo.hookimpl
    def ensembo_trial_finished(self, study, trial):
        if trial.state is TrialState.COMPLETE:
            raise KeyboardInterrupt


def test_ctrl_c_kills_the_processes_a_thread_pool_forked_for_limited_evaluations(
    flat_space, tmp_path
):
    (tmp_path / "pids").mkdir()
    study = Study(flat_space, surrogate=None, seed=0, callbacks=[CtrlCAtFirstResult()])
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            study.optimize(
                lambda c: first_returns_the_others_hang(c, tmp_path),
                n_trials=4,
                executor=pool,
                trial_timeout=120,
            )
    assert time.monotonic() - started < 15  # the pool's threads did not wait for the hang
    assert [t.state for t in study.trials] == [TrialState.COMPLETE, TrialState.INTERRUPTED]
    pids = [int(path.name) for path in (tmp_path / "pids").iterdir()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
