"""The optimization loop for a :class:`~ensembo.ml.Task`, over the study's ask/tell.

The task needs the trial number (reshuffling draws the splits from it), which a plain
``objective(config)`` never sees, so the loop asks and tells itself. A configuration
that raises, returns a non-finite loss or predicts garbage becomes a failed trial with
the error text and the run goes on; Ctrl-C marks the running trial interrupted (it is
re-run on resume) and re-raises.
"""

from __future__ import annotations

import logging
import time
import traceback

from ensembo.ml.artifacts import ArtifactStore
from ensembo.ml.task import Task
from ensembo.study import Study
from ensembo.trials import TrialState

logger = logging.getLogger(__name__)


def finished_count(study: Study) -> int:
    return len(study.history.in_state(TrialState.COMPLETE, TrialState.FAILED))


def run_task(
    study: Study,
    task: Task,
    n_trials: int,
    *,
    store: ArtifactStore | None = None,
    timeout: float | None = None,
) -> Study:
    """Run ``n_trials`` more trials of ``task`` (or until ``timeout`` seconds)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for _ in range(n_trials):
        if deadline is not None and time.monotonic() >= deadline:
            break
        trial = study.ask()
        try:
            evaluation = task.evaluate(dict(trial.config), iteration=trial.number)
        except KeyboardInterrupt:
            study.tell(trial, state=TrialState.INTERRUPTED, error="KeyboardInterrupt")
            raise
        except Exception as error:  # any learner failure is a failed trial, not a crash
            message = "".join(traceback.format_exception_only(error)).strip()
            logger.warning("trial %d failed: %s", trial.number, message)
            study.tell(trial, state=TrialState.FAILED, error=message)
            continue
        finished = study.tell(trial, evaluation)
        if finished.state is TrialState.COMPLETE and store is not None:
            store.put(trial.number, evaluation.model)
    return study
