"""The asynchronous optimize loop: ask as soon as a slot frees, tell as results arrive.

Whenever fewer than ``backend.slots`` evaluations are in flight the loop asks the study
for a trial and submits it at once, so every suggestion is made from all the results
told so far, with the still-running trials counted as pending (fantasies / constant
liar in the proposer, de-duplication in ``Study.suggest_batch``). Each outcome is
recorded the moment it arrives, one storage transaction per state change, so killing
the driver at any point loses no finished trial.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from ensembo.execution.backend import Backend, Objective
from ensembo.execution.child import NO_LIMITS, TrialLimits
from ensembo.execution.outcome import Outcome, OutcomeKind, matches, with_remote_traceback
from ensembo.trials import Trial, TrialState

if TYPE_CHECKING:
    from ensembo.study import Study

logger = logging.getLogger(__name__)


def run_trials(
    study: Study,
    objective: Objective,
    backend: Backend,
    *,
    n_trials: int | None = None,
    timeout: float | None = None,
    limits: TrialLimits = NO_LIMITS,
    max_retries: int = 2,
    catch: tuple[type[BaseException], ...] = (Exception,),
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Evaluate until ``n_trials`` trials finished (complete or failed), ``timeout``
    seconds passed or ``should_stop()``; running trials are waited for, not abandoned.

    Trials whose evaluation crashed or whose worker was lost are re-queued (state
    INTERRUPTED; ``Study.ask`` hands them out again first) and do not count as finished.
    On Ctrl-C or any other exception every trial this run asked that is still running is
    recorded INTERRUPTED (not those asked by hand or by another thread: they are being
    evaluated elsewhere, and would be handed out and evaluated twice), all of them before
    observers hear of any, the backend is closed with its work stopped, and the exception
    propagates (an observer's error on hearing of the interruptions is noted on it, not
    raised instead). A backend may offer ``check_objective(objective)``, called before
    the first ask, to refuse an objective it cannot run (e.g. one a process pool cannot
    pickle). After a normal end the backend stays open (closing it is its creator's
    job). Returns the number of trials finished.
    """
    check_objective = getattr(backend, "check_objective", None)
    if check_objective is not None:  # before any trial is asked: nothing to interrupt
        check_objective(objective)
    deadline = None if timeout is None else time.monotonic() + timeout
    running: dict[Hashable, Trial] = {}
    asked: set[int] = set()  # trial numbers; an ask that fails hands its trials back itself
    finished = 0
    stopping = False

    def free_slots() -> int:
        free = backend.slots - len(running)
        return free if n_trials is None else min(free, n_trials - finished - len(running))

    def tell_ended(handles: list[Hashable]) -> int:
        told = 0
        for handle in handles:
            trial = running.pop(handle)
            outcome = backend.outcome(handle)
            recorded = record(study, trial, outcome, catch=catch, max_retries=max_retries)
            asked.discard(trial.number)  # re-queued after a crash, it may be another's next
            told += recorded.state.finished
        return told

    try:
        while True:
            while not stopping and free_slots() > 0:
                if (deadline is not None and time.monotonic() >= deadline) or should_stop():
                    stopping = True
                    break
                trial = study.ask()  # submitted at once: a worker waits for one ask only
                asked.add(trial.number)
                running[backend.submit(objective, dict(trial.config), limits)] = trial
                if free_slots() > 0:
                    # Results that ended while this ask ran are told before the next
                    # ask, so no suggestion is made without a result already in hand.
                    finished += tell_ended(backend.wait(list(running), timeout=0))
            if not running:
                break
            finished += tell_ended(backend.wait(list(running)))
    except BaseException as error:
        # Every RUNNING trial this run asked, not only those in ``running``: Ctrl-C may
        # land between taking a result and recording it.
        reason = (
            "KeyboardInterrupt"
            if isinstance(error, KeyboardInterrupt)
            else f"stopped by {type(error).__name__}"
        )
        try:
            interrupt_asked(study, asked, reason, error)
        finally:  # even if recording fails (storage gone), stop the running evaluations
            backend.close(interrupted=True)
        raise
    return finished


def interrupt_asked(study: Study, asked: set[int], reason: str, error: BaseException) -> None:
    """Record every RUNNING trial numbered in ``asked`` INTERRUPTED, all before any
    observer hears of one: an observer that raises (often the very error that stopped the
    run) would otherwise leave the rest running for ever. Each observer error is logged
    and noted on ``error``, which the caller re-raises: it says why the run stopped."""
    with study._lock:
        now = study._clock.now()
        interrupted = [
            trial.with_failure(reason, now, TrialState.INTERRUPTED)
            for trial in study.history.in_state(TrialState.RUNNING)
            if trial.number in asked
        ]
        study._record(*interrupted)
    for trial in interrupted:
        try:
            study._notify("ensembo_trial_finished", study=study, trial=trial)
        except Exception as observer_error:
            notes = "".join(f" ({note})" for note in getattr(observer_error, "__notes__", ()))
            logger.error(
                "an observer raised on interrupted trial %d after the run failed%s",
                trial.number, notes, exc_info=observer_error,
            )
            error.add_note(
                f"then, told that trial {trial.number} was interrupted, an observer raised "
                f"{type(observer_error).__name__}: {observer_error}{notes}"
            )


def record(
    study: Study,
    trial: Trial,
    outcome: Outcome,
    *,
    catch: tuple[type[BaseException], ...] = (Exception,),
    max_retries: int = 2,
) -> Trial:
    """Tell ``study`` what became of ``trial``; re-raise an objective error not in ``catch``.

    The trial's ``error`` is the exception's last line ("Type: message"); the warning
    logged for it carries the traceback too (as Optuna logs it), wherever it was raised.
    """
    kind = outcome.kind
    if kind is OutcomeKind.RETURNED:
        told = study._tell_returned(trial, outcome.value)  # unusable: the trial failed
        if told.state is TrialState.FAILED:  # an unusable return (None, NaN, a string...)
            # is as much a failure of the objective as an exception: say so as loudly.
            logger.warning("trial %d failed: %s", trial.number, told.error)
        return told
    if kind.retried:
        if trial.attempts <= max_retries:
            logger.warning(
                "trial %d re-queued (attempt %d): %s", trial.number, trial.attempts, outcome.message
            )
            return study.tell(trial, state=TrialState.INTERRUPTED, error=outcome.message)
        message = f"{outcome.message} (gave up after {trial.attempts} attempts)"
        logger.warning("trial %d failed: %s", trial.number, message)
        return study.tell(trial, state=TrialState.FAILED, error=message)
    if outcome.traceback:
        logger.warning(
            "trial %d failed: %s\n%s", trial.number, outcome.message, outcome.traceback.rstrip()
        )
    else:
        logger.warning("trial %d failed: %s", trial.number, outcome.message)
    told = study.tell(trial, state=TrialState.FAILED, error=outcome.message)
    if kind is OutcomeKind.RAISED and outcome.error is not None:
        if not matches(outcome.error, catch):
            raise with_remote_traceback(outcome.error, outcome.traceback)
    return told
