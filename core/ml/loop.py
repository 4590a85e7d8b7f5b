"""The optimization loop for a :class:`~ensembo.ml.Task`, over the study's ask/tell.

The task needs the trial number (reshuffling draws the splits from it), which a plain
``objective(config)`` never sees, so the loop asks and tells itself. A configuration
that raises, returns a non-finite loss or predicts garbage becomes a failed trial with
the error text and the run goes on, as does one whose learner calls ``sys.exit()``
(:mod:`ensembo.ml.learner_exit`); Ctrl-C marks the running trials interrupted (they
are re-run on resume) and re-raises, also when the learner catches it in its ``fit``
(scikit-learn's MLP does): :class:`~ensembo.ml.Task` raises it again once the fit returns.

With ``n_jobs`` > 1 the loop asks ``n_jobs`` trials at once — the study's proposer sees
the others as pending (fantasies, kriging believer by default), so they differ —
evaluates them in parallel processes (joblib) and tells each result.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import attrs
import joblib

from ensembo import observers
from ensembo.execution import NO_LIMITS, OutcomeKind, TrialLimits, evaluate_in_child
from ensembo.execution.loop import interrupt_asked
from ensembo.execution.outcome import describe_exception
from ensembo.ml.artifacts import ArtifactStore
from ensembo.ml.task import Task
from ensembo.study import Study
from ensembo.trials import Evaluation, Trial, TrialState

logger = logging.getLogger(__name__)


def finished_count(study: Study) -> int:
    return len(study.history.in_state(TrialState.COMPLETE, TrialState.FAILED))


def _attempt(
    task: Task, config: dict, number: int, limits: TrialLimits = NO_LIMITS
) -> Evaluation | str:
    """The evaluation, or the error text of a configuration that failed. With
    ``limits``, the evaluation runs in a child process killed at the limit (one SVC
    with a large C can otherwise hold a search for hours)."""
    if limits.any:
        outcome = evaluate_in_child(functools.partial(_evaluate, task, number), config, limits)
        return outcome.value if outcome.kind is OutcomeKind.RETURNED else outcome.message
    try:
        return _evaluate(task, number, config)
    except Exception as error:  # any learner failure is a failed trial, not a crash
        return describe_exception(error)  # a learner's sys.exit() included (LearnerExit)


def _evaluate(task: Task, number: int, config: dict) -> Evaluation:
    return task.evaluate(config, iteration=number)


def run_task(
    study: Study,
    task: Task,
    n_trials: int,
    *,
    store: ArtifactStore | None = None,
    timeout: float | None = None,
    n_jobs: int | None = None,
    limits: TrialLimits = NO_LIMITS,
) -> Study:
    """Run ``n_trials`` more trials of ``task``, or fewer: no batch starts after
    ``timeout`` seconds, except the first, so that a search always has a model, and no
    trial once a plugin's ``ensembo_should_stop`` says so, except a study's first.
    ``limits`` (wall time, memory) fail a trial that exceeds them. The observers hear
    the run end, as after ``optimize``."""
    manager = study._observer_manager  # the study's observers, as optimize hands them on
    with observers.observed_run(manager, study):
        _run_batches(study, task, n_trials, store, timeout, n_jobs, limits,
                     should_stop=lambda: observers.should_stop(manager, study))
    return study


def _run_batches(study: Study, task: Task, n_trials: int, store: ArtifactStore | None,
                 timeout: float | None, n_jobs: int | None, limits: TrialLimits,
                 should_stop: Callable[[], bool]) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    workers = max(1, joblib.effective_n_jobs(n_jobs))
    done = 0
    while done < n_trials and (done == 0 or deadline is None or time.monotonic() < deadline):
        batch = []
        for _ in range(min(workers, n_trials - done)):
            if study.trials and should_stop():
                break
            batch.append(study.ask())
        if not batch:
            return
        try:
            if len(batch) == 1:
                outcomes = [_attempt(task, dict(batch[0].config), batch[0].number, limits)]
            else:
                outcomes = joblib.Parallel(n_jobs=len(batch))(
                    joblib.delayed(_attempt)(task, dict(t.config), t.number, limits)
                    for t in batch
                )
        except KeyboardInterrupt as interrupt:  # all recorded before an observer hears
            interrupt_asked(study, {t.number for t in batch}, "KeyboardInterrupt", interrupt)
            raise
        for trial, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, str):
                logger.warning("trial %d failed: %s", trial.number, outcome)
                study.tell(trial, state=TrialState.FAILED, error=outcome)
                continue
            _record(study, trial, outcome, store)
        done += len(batch)


def _record(study: Study, trial: Trial, outcome: Evaluation, store: ArtifactStore | None) -> None:
    """Keep the trial's model, then tell the study. In this order a run killed in
    between leaves a model of a trial still marked running (re-run on resume), never a
    complete trial without its model (a final model that cannot be loaded).

    As in Study.optimize, a result the study cannot use (e.g. its predictions) fails
    its trial with the reason instead of stopping the search; its model is dropped.

    With a store, the study is told the evaluation without its model: ``study.models``
    would otherwise hold every trial's model for as long as the study lives (an
    estimator's ``study_``), on top of the store, which is where the final models are
    taken from (on disk with a storage path, so memory grew by a model per trial for
    models already written). Without one, ``study.models`` is where the model is."""
    if store is not None:
        store.put(trial.number, outcome.model)
        outcome = attrs.evolve(outcome, model=None)
    finished = study._tell_returned(trial, outcome)
    if finished.state is TrialState.FAILED:
        logger.warning("trial %d failed: %s", trial.number, finished.error)
        if store is not None:
            store.discard(trial.number)
