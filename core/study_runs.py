"""Running an objective in a :class:`ensembo.study.Study`: ``optimize``'s arguments
checked before the first trial, the backend it runs on, the observers told the run
began and ended (:mod:`ensembo.execution` runs the trials)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from ensembo import checks, execution, observers
from ensembo.progress import ProgressBar

if TYPE_CHECKING:
    from ensembo.study import Study


def optimize(
    study: Study,
    observer_manager: pluggy.PluginManager,
    objective: Callable[[dict[str, Any]], Any],
    n_trials: int | None,
    *,
    timeout: float | None,
    catch: type[BaseException] | Iterable[type[BaseException]],
    show_progress: bool,
    n_jobs: int | None,
    executor: Any,
    trial_timeout: float | None,
    memory_limit: int | str | None,
    max_retries: int,
) -> None:
    """:meth:`Study.optimize`, whose observers ``observer_manager`` calls."""
    if n_trials is None and timeout is None:
        raise ValueError("give n_trials, timeout or both")
    if n_trials is not None:
        checks.whole_number("n_trials", n_trials, 1)
    if timeout is not None:
        checks.positive_seconds("timeout", timeout)
    if not callable(objective):
        raise TypeError(f"objective must be callable (config -> loss), got {objective!r}")
    # checked before the first trial: a wrong one would fail at the first crash
    max_retries = checks.whole_number("max_retries", max_retries, 0)
    catch = checks.exception_classes("catch", catch)
    limits = execution.trial_limits(trial_timeout, memory_limit)
    backend, owned = execution.resolve_backend(n_jobs, executor)
    progress = ProgressBar(n_trials) if show_progress else None
    with observers.observed_run(observer_manager, study, progress):
        try:
            execution.run_trials(
                study, objective, backend, n_trials=n_trials, timeout=timeout,
                limits=limits, max_retries=max_retries, catch=catch,
                should_stop=lambda: observers.should_stop(observer_manager, study),
            )
        finally:  # before the observers hear that the run ended
            if owned:
                backend.close()

