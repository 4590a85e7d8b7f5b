"""A study's ``callbacks``: observers with ``@ensembo.hookimpl`` methods, or plain
functions ``(study, trial)`` called when each trial finishes, as Optuna's are."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from ensembo.hookspecs import hookimpl
from ensembo.plugin_checks import find_hook_mistakes

logger = logging.getLogger(__name__)


class TrialFinishedCallback:
    """A plain function ``(study, trial)`` as an ``ensembo_trial_finished`` observer."""

    def __init__(self, function: Callable[[Any, Any], Any]):
        self.function = function

    @hookimpl
    def ensembo_trial_finished(self, study, trial) -> None:
        self.function(study, trial)

    def __repr__(self) -> str:
        return f"TrialFinishedCallback({_name(self.function)})"


def observer_callbacks(callbacks: Iterable[Any]) -> list[Any]:
    """``callbacks`` as a list, refusing a single observer given without its list."""
    if callable(callbacks) or isinstance(callbacks, str | bytes) or not isinstance(
        callbacks, Iterable
    ):
        raise TypeError(
            f"callbacks must be a list of observers or functions, got {_name(callbacks)}; "
            "wrap a single one in a list"
        )
    return list(callbacks)


def register_observer(manager: pluggy.PluginManager, callback: Any) -> None:
    """Register ``callback``: hook methods as they are, a plain callable as a
    trial-finished callback. Mistakes pluggy would ignore are logged."""
    try:
        manager.register(callback)
    except pluggy.PluginValidationError as error:  # pluggy names it by id()
        raise TypeError(f"callback {_name(callback)}: {error}") from None
    if manager.get_hookcallers(callback):
        for hook, mistake in find_hook_mistakes(callback, manager):
            logger.warning("callback %s: %s (%s)", _name(callback), mistake, hook)
        return
    manager.unregister(callback)
    mistakes = find_hook_mistakes(callback)
    if callable(callback) and not mistakes:
        _check_callable_as_study_trial(callback)
        manager.register(TrialFinishedCallback(callback))
        return
    for hook, mistake in mistakes:
        logger.warning("callback %s: %s (%s)", _name(callback), mistake, hook)
    if not mistakes:
        raise TypeError(
            f"callback {_name(callback)} is neither callable as (study, trial) nor has "
            "@ensembo.hookimpl methods such as ensembo_trial_finished(study, trial)"
        )


def _check_callable_as_study_trial(callback: Callable[..., Any]) -> None:
    """Refuse a function that cannot take ``(study, trial)`` now, rather than with a
    TypeError after the first trial was spent. A callable whose signature Python cannot
    tell (some builtins) is taken on trust."""
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):
        return
    try:
        signature.bind("study", "trial")
    except TypeError as error:
        raise TypeError(
            f"callback {_name(callback)} must be callable as (study, trial), as it is called "
            f"when each trial finishes; its signature {signature} does not fit ({error})"
        ) from None


def _name(thing: Any) -> str:
    name = getattr(thing, "__qualname__", None) or type(thing).__qualname__
    return name if getattr(thing, "__qualname__", None) else f"{name} object"


def notify(manager: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> Any:
    """Call every observer's ``hook_name``. An exception propagates (the trial it
    concerns is already recorded) with a note naming the observer that raised it: an
    installed plugin's hook runs in every study, and its traceback alone reads like an
    ensembo bug."""
    caller = getattr(manager.hook, hook_name)
    try:
        return caller(**kwargs)
    except Exception as error:
        raising = _raising_implementation(caller.get_hookimpls(), error)
        if raising is not None:
            error.add_note(f"in the {hook_name} hook of {_observer_name(raising)}")
        raise


def _raising_implementation(implementations: list[Any], error: BaseException) -> Any:
    """The hook implementation whose function is on ``error``'s traceback, if any."""
    by_code = {impl.function.__code__: impl for impl in implementations}
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code in by_code:
            return by_code[frame.tb_frame.f_code]
        frame = frame.tb_next
    return None


def _observer_name(implementation: Any) -> str:
    """An installed plugin by its distribution; a study's own callback by its name."""
    observer = implementation.plugin
    if isinstance(observer, TrialFinishedCallback):
        return f"callback {_name(observer.function)}"
    if implementation.plugin_name != str(id(observer)):  # registered under a name
        return f"plugin {implementation.plugin_name}"
    return f"callback {_name(observer)}"
