"""A study's ``callbacks``: observers with ``@ensembo.hookimpl`` methods, or plain
functions ``(study, trial)`` called when each trial finishes, as Optuna's are."""

from __future__ import annotations

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
        manager.register(TrialFinishedCallback(callback))
        return
    for hook, mistake in mistakes:
        logger.warning("callback %s: %s (%s)", _name(callback), mistake, hook)
    if not mistakes:
        raise TypeError(
            f"callback {_name(callback)} is neither callable as (study, trial) nor has "
            "@ensembo.hookimpl methods such as ensembo_trial_finished(study, trial)"
        )


def _name(thing: Any) -> str:
    name = getattr(thing, "__qualname__", None) or type(thing).__qualname__
    return name if getattr(thing, "__qualname__", None) else f"{name} object"
