"""Hook specifications: the whole plugin contract in one place.

Plugins implement these with ``@ensembo.hookimpl`` in a module named by an entry point
in the ``ensembo`` group. Hooks are called with keyword arguments; an implementation
may accept a subset of them, so new arguments can be added without breaking plugins.

Registration hooks (``ensembo_add_*``) return a mapping of registry name -> factory.
A factory is a callable taking the user's options as keyword arguments and returning a
component satisfying the matching protocol in :mod:`ensembo.protocols`. Its signature is
what ``ensembo plugins NAME`` and the unknown-option error list; a factory that takes
``**options`` names them with :func:`declares_options`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ensembo.ensemble import Ensemble
    from ensembo.study import Study
    from ensembo.trials import Trial

PROJECT = "ensembo"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Factory = Callable[..., Any]


OPTIONS_SOURCE = "__ensembo_options_source__"
"""The attribute :func:`declares_options` records its ``source`` under."""


def declares_options(source: Any, *, without: tuple[str, ...] = ()) -> Any:
    """Decorate a factory that takes ``**options`` with the options of ``source`` (a
    validation-only settings class, or ``factory_refusals.signature_only(cls)`` for a
    component class that validates its own options), so that ``ensembo plugins NAME``
    and the unknown-option error can list them. When the factory raises a ``TypeError``,
    the registry builds ``source`` with the same options, and without them, to tell
    whether they are refused (an option error) or the factory failed otherwise (a bug),
    so it must be cheap and free of side effects."""
    signature = inspect.signature(source)
    kept = [p for p in signature.parameters.values() if p.name not in without]

    def decorate(factory: Any) -> Any:
        factory.__signature__ = signature.replace(
            parameters=kept, return_annotation=inspect.Signature.empty)
        setattr(factory, OPTIONS_SOURCE, source)
        return factory

    return decorate


# --- registration: one hook per component kind ---------------------------------------


@hookspec
def ensembo_add_surrogates() -> Mapping[str, Factory]:
    """Surrogates: factories returning a ``Surrogate`` or a ``Proposer``."""


@hookspec
def ensembo_add_acquisitions() -> Mapping[str, Factory]:
    """Acquisition functions: factories returning an ``Acquisition``."""


@hookspec
def ensembo_add_acquisition_optimizers() -> Mapping[str, Factory]:
    """Acquisition optimizers: factories returning an ``AcquisitionOptimizer``."""


@hookspec
def ensembo_add_initial_designs() -> Mapping[str, Factory]:
    """Initial designs: factories returning an ``InitialDesign``."""


@hookspec
def ensembo_add_ensemble_strategies() -> Mapping[str, Factory]:
    """Ensemble strategies: factories returning an ``EnsembleStrategy``."""


@hookspec
def ensembo_add_losses() -> Mapping[str, Factory]:
    """Losses: factories returning a ``Loss``."""


@hookspec
def ensembo_add_estimators() -> Mapping[str, Factory]:
    """Estimator components for executable spaces: name -> sklearn estimator class."""


@hookspec
def ensembo_add_spaces() -> Mapping[str, Factory]:
    """Named search spaces: name -> callable returning a space definition (dict or path)."""


# --- lifecycle observers ---------------------------------------------------------------


@hookspec
def ensembo_trial_started(study: Study, trial: Trial) -> None:
    """Called after a trial has been handed out by ``ask``."""


@hookspec
def ensembo_trial_finished(study: Study, trial: Trial) -> None:
    """Called after a trial was told (complete, failed or interrupted) and stored."""


@hookspec
def ensembo_ensemble_updated(study: Study, ensemble: Ensemble) -> None:
    """Called when the ensemble strategy produced a new ensemble."""


@hookspec
def ensembo_study_finished(study: Study) -> None:
    """Called when a run ends, however it ends: ``Study.optimize``, or the trials of a
    ``data:`` run or a scikit-learn estimator's search (before its final models)."""


@hookspec(firstresult=True)
def ensembo_should_stop(study: Study) -> bool | None:
    """Return True to stop a run early (``optimize``, a ``data:`` run, an estimator's
    search), checked before each trial (a ``data:`` run or an estimator's search still
    runs a new study's first trial). Stops at the first non-None result."""


REGISTRATION_HOOKS: Mapping[str, str] = {
    "surrogate": "ensembo_add_surrogates",
    "acquisition": "ensembo_add_acquisitions",
    "acquisition_optimizer": "ensembo_add_acquisition_optimizers",
    "initial_design": "ensembo_add_initial_designs",
    "ensemble_strategy": "ensembo_add_ensemble_strategies",
    "loss": "ensembo_add_losses",
    "estimator": "ensembo_add_estimators",
    "space": "ensembo_add_spaces",
}
"""Component kind -> the registration hook that declares it."""
