"""A study's ``callbacks``: observers with ``@ensembo.hookimpl`` methods, or plain
functions ``(study, trial)`` called when each trial finishes, as Optuna's are."""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
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
    trial-finished callback. A hook method pluggy would ignore is refused (a callable's
    undecorated one is logged: its ``__call__`` still runs)."""
    _refuse_class_or_repeat(manager, callback)
    mistakes = find_hook_mistakes(callback)
    _refuse_hook_mistakes(manager, callback, mistakes)
    try:
        manager.register(callback)
    except pluggy.PluginValidationError as error:  # pluggy names it by id()
        raise TypeError(f"callback {_name(callback)}: {error}") from None
    hooked = bool(manager.get_hookcallers(callback))
    also = "" if hooked else "; only its __call__(study, trial) is used"
    for hook, mistake in mistakes:  # left only to a callable by the refusal above
        logger.warning("callback %s: %s (%s)%s", _name(callback), mistake, hook, also)
    if hooked:
        return
    manager.unregister(callback)
    if callable(callback):
        _check_callable_as_study_trial(callback)
        manager.register(TrialFinishedCallback(callback))
        return
    raise TypeError(
        f"callback {_name(callback)} is neither callable as (study, trial) nor has "
        "@ensembo.hookimpl methods such as ensembo_trial_finished(study, trial)"
    )


def _refuse_hook_mistakes(
    manager: pluggy.PluginManager, callback: Any, mistakes: list[tuple[str, str]]
) -> None:
    """A misspelt or undecorated hook method never runs, and the warning pluggy does not
    give would only reach the ``ensembo`` logger, silent by default: an early-stopping
    observer would just never stop. A callable keeps its undecorated methods' warning,
    as its ``__call__`` still runs; a decorated misspelling is refused (pluggy registers
    it, and only its ``check_pending`` would object)."""
    refused = [
        (hook, mistake) for hook, mistake in mistakes
        if not callable(callback) or _is_decorated(manager, callback, hook)
    ]
    if refused:
        owner = type(callback).__qualname__
        raise TypeError(f"callback {_name(callback)}: " + "; ".join(
            f"{owner}.{hook} would never run: {mistake}{_remedy(manager, callback, hook)}"
            for hook, mistake in refused
        ))


def _is_decorated(manager: pluggy.PluginManager, callback: Any, name: str) -> bool:
    return manager.parse_hookimpl_opts(callback, name) is not None


def _remedy(manager: pluggy.PluginManager, callback: Any, hook: str) -> str:
    """What to do about an undecorated hook method (a misspelling's message names the
    hook it probably means)."""
    return "" if _is_decorated(manager, callback, hook) else "; add @ensembo.hookimpl above it"


def _refuse_class_or_repeat(manager: pluggy.PluginManager, callback: Any) -> None:
    """An observer class registers, but pluggy would call its methods without ``self``
    and fail at the first trial; one object listed twice would make pluggy's error dump
    every registered plugin."""
    if inspect.isclass(callback) and (
        find_hook_mistakes(callback) or _hookimpl_names(manager, callback)
    ):
        raise TypeError(
            f"callback {_name(callback)} is a class with hook methods; pass an instance: "
            f"{callback.__qualname__}()"
        )
    if manager.is_registered(callback):
        raise TypeError(
            f"callback {_name(callback)} is listed twice (or is an installed plugin, "
            "which observes every study already)"
        )


def _hookimpl_names(manager: pluggy.PluginManager, plugin: Any) -> list[str]:
    return [name for name in dir(plugin) if manager.parse_hookimpl_opts(plugin, name)]


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
    """The hook implementation whose call is on ``error``'s traceback, if any. A frame
    is matched by its code and, for a method, by its ``self``: every plain-function
    callback's wrapper, and every instance of one observer class, share one code."""
    frame = error.__traceback__
    while frame is not None:
        for implementation in implementations:
            if _runs(frame.tb_frame, implementation.function):
                return implementation
        frame = frame.tb_next
    return None


def _runs(frame: Any, function: Any) -> bool:
    """Whether ``frame`` is a call of ``function`` (for a bound method: on its object)."""
    if frame.f_code is not getattr(function, "__code__", None):
        return False
    bound_to = getattr(function, "__self__", None)
    if bound_to is None or not frame.f_code.co_argcount:
        return True
    return frame.f_locals.get(frame.f_code.co_varnames[0]) is bound_to


def _observer_name(implementation: Any) -> str:
    """An installed plugin by its distribution; a study's own callback by its name."""
    observer = implementation.plugin
    if isinstance(observer, TrialFinishedCallback):
        return f"callback {_name(observer.function)}"
    if implementation.plugin_name != str(id(observer)):  # registered under a name
        return f"plugin {implementation.plugin_name}"
    return f"callback {_name(observer)}"


@contextlib.contextmanager
def observed_run(manager: pluggy.PluginManager, study: Any, progress: Any = None) -> Iterator[None]:
    """One ``optimize`` run as the observers see it: ``progress`` (a progress bar
    observer, or None) is registered for the run alone, and ``ensembo_study_finished``
    is called when it ends, however it ends, without hiding the run's own error."""
    if progress is not None:
        manager.register(progress)
    failed = None
    try:
        yield
    except BaseException as error:
        failed = error
        raise
    finally:
        try:
            notify_finished(manager, failed, study=study)
        finally:
            if progress is not None:  # closed even if an observer raised first
                progress.close()
                manager.unregister(progress)


def should_stop(manager: pluggy.PluginManager, study: Any) -> bool:
    """Whether an observer's ``ensembo_should_stop`` stops the run before its next trial
    (``optimize`` and the data runs' task loop ask the same way)."""
    return bool(notify(manager, "ensembo_should_stop", study=study))


def notify_finished(manager: pluggy.PluginManager, run_error: BaseException | None,
                    **kwargs: Any) -> None:
    """``ensembo_study_finished``, called as the run ends. If the run itself already
    failed (``run_error``), an observer's error is noted on that one and logged, rather
    than replacing the error that says why the run stopped."""
    try:
        notify(manager, "ensembo_study_finished", **kwargs)
    except Exception as error:
        if run_error is None:
            raise
        notes = "".join(f" ({note})" for note in getattr(error, "__notes__", ()))
        logger.error("ensembo_study_finished raised after the run failed%s", notes,
                     exc_info=error)
        run_error.add_note(f"then ensembo_study_finished raised {type(error).__name__}: "
                           f"{error}{notes}")
