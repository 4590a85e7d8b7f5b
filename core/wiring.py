"""Building a study's proposer and observers from what the user gave.

The study stores component *specs* (names and options) so that a resume rebuilds the
same search; this module turns those specs into the live objects. It is separate from
:mod:`ensembo.study` so that the facade reads as ask/tell/record only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import pluggy

from ensembo import components, defaults
from ensembo.observers import observer_callbacks, register_observer
from ensembo.plugin_checks import new_plugin_manager
from ensembo.proposal import ModelBasedProposer, RandomProposer
from ensembo.protocols import Proposer
from ensembo.registry import Registry, registry


@attrs.frozen
class BuiltProposer:
    """The proposer, and the acquisition optimizer spec it uses: ``"auto"`` resolved
    from the surrogate, so that storage records the choice a resume must repeat."""

    proposer: Proposer
    acquisition_optimizer: Any


def build_proposer(specs: Mapping[str, Any], reg: Registry | None) -> BuiltProposer:
    """The proposer ``specs`` (keys ``surrogate``, ``acquisition``,
    ``acquisition_optimizer``) describe. ``surrogate=None`` is random search; a
    surrogate that proposes by itself (TPE) is its own proposer."""
    optimizer_spec = specs["acquisition_optimizer"]
    if specs["surrogate"] is None:
        _check_unused_acquisition(specs, reg)
        return BuiltProposer(RandomProposer(), optimizer_spec)
    surrogate = components.build("surrogate", specs["surrogate"], reg)
    if isinstance(surrogate, Proposer):
        _check_unused_acquisition(specs, reg)
        return BuiltProposer(surrogate, optimizer_spec)
    if _is_auto("acquisition_optimizer", optimizer_spec):  # as given, or as stored
        optimizer_spec = defaults.default_acquisition_optimizer(surrogate)
    proposer = ModelBasedProposer(
        surrogate,
        components.build("acquisition", specs["acquisition"], reg),
        components.build("acquisition_optimizer", optimizer_spec, reg),
        fantasy=defaults.default_fantasy(),
    )
    return BuiltProposer(proposer, optimizer_spec)


def _check_unused_acquisition(specs: Mapping[str, Any], reg: Registry | None) -> None:
    """Build the acquisition parts a proposer without a model will not use, so a
    misspelt name or a bad option is still refused rather than silently ignored."""
    for kind in ("acquisition", "acquisition_optimizer"):
        if not _is_auto(kind, specs[kind]):
            components.build(kind, specs[kind], reg)


def _is_auto(kind: str, spec: Any) -> bool:
    """``"auto"`` as given, or as a stored study holds it (``{"name": "auto"}``)."""
    parts = components.split_spec(kind, spec)
    return parts is not None and parts[0] == defaults.AUTO


def observer_manager(reg: Registry | None, callbacks: Iterable[Any]) -> pluggy.PluginManager:
    """A plugin manager holding the installed plugins' observer hooks and the study's
    own ``callbacks``: the study calls its hooks, and a progress bar may join later."""
    manager = new_plugin_manager()
    for name, plugin in (reg or registry()).manager.list_name_plugin():
        manager.register(plugin, name=name)
    for callback in observer_callbacks(callbacks):
        register_observer(manager, callback)
    return manager
