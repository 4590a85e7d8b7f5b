"""Plugin discovery and name -> factory lookup.

Entry points in the ``ensembo`` group are loaded one by one: a distribution that fails
to import is recorded (distribution, entry point, error) and the others still load.
Registration hooks are called implementation by implementation so that every name is
attributed to its distribution; a name claimed twice is a conflict that names both.

Environment switches: ``ENSEMBO_DISABLE_PLUGIN_AUTOLOAD=1`` loads only ensembo's own
entry points; ``ENSEMBO_BLOCK_PLUGINS=dist1,dist2`` skips the named distributions.
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import logging
import os
import traceback
from collections.abc import Mapping
from typing import Any

import attrs
import pluggy

from ensembo import hookspecs
from ensembo.errors import (
    ComponentOptionError,
    DuplicatePluginError,
    EnsemboError,
    PluginContractError,
    UnknownComponentError,
)
from ensembo.protocols import PROTOCOLS, Proposer

logger = logging.getLogger(__name__)

OWN_DISTRIBUTION = "ensembo"


@attrs.frozen(kw_only=True)
class PluginEntry:
    """One registered component: its kind, name, factory and where it came from."""

    kind: str
    name: str
    distribution: str
    factory: hookspecs.Factory = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class PluginLoadFailure:
    """An entry point that could not be imported or registered."""

    distribution: str
    entry_point: str
    error: str


@attrs.frozen(kw_only=True)
class PluginConflict:
    kind: str
    name: str
    distributions: tuple[str, str]


def new_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def _blocked_distributions() -> set[str]:
    raw = os.environ.get("ENSEMBO_BLOCK_PLUGINS", "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def _autoload_disabled() -> bool:
    return os.environ.get("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD", "") not in ("", "0", "false")


class Registry:
    """Every component ensembo knows, by kind and name.

    Build one with :meth:`from_entry_points` (what :func:`registry` does) or from
    explicit plugin objects with :meth:`from_plugins` (tests, embedding).
    """

    def __init__(self, manager: pluggy.PluginManager, distributions: Mapping[str, str]):
        self.manager = manager
        self.failures: list[PluginLoadFailure] = []
        self.conflicts: list[PluginConflict] = []
        self._entries: dict[str, dict[str, PluginEntry]] = {
            k: {} for k in hookspecs.REGISTRATION_HOOKS
        }
        self._distribution_of = dict(distributions)
        self._collect()

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_plugins(cls, plugins: Mapping[str, Any]) -> Registry:
        """Register ``{distribution name: plugin object}`` without entry points."""
        manager = new_plugin_manager()
        names = {}
        for distribution, plugin in plugins.items():
            name = manager.register(plugin, name=distribution)
            names[name] = distribution
        return cls(manager, names)

    @classmethod
    def from_entry_points(cls) -> Registry:
        manager = new_plugin_manager()
        blocked = _blocked_distributions()
        own_only = _autoload_disabled()
        names: dict[str, str] = {}
        failures: list[PluginLoadFailure] = []
        for entry_point in importlib.metadata.entry_points(group=hookspecs.PROJECT):
            distribution = entry_point.dist.name if entry_point.dist else "<unknown>"
            if distribution in blocked or (own_only and distribution != OWN_DISTRIBUTION):
                continue
            plugin_name = f"{distribution}:{entry_point.name}"
            if manager.has_plugin(plugin_name):
                continue  # the same distribution seen twice on sys.path
            try:
                plugin = entry_point.load()
                manager.register(plugin, name=plugin_name)
            except Exception as error:  # a broken plugin must not take the others down
                logger.warning("plugin %s failed to load: %s", plugin_name, error)
                failures.append(
                    PluginLoadFailure(
                        distribution=distribution,
                        entry_point=f"{entry_point.name} = {entry_point.value}",
                        error="".join(traceback.format_exception_only(error)).strip(),
                    )
                )
                continue
            names[plugin_name] = distribution
        registry = cls(manager, names)
        registry.failures.extend(failures)
        return registry

    def _collect(self) -> None:
        for kind, hook_name in hookspecs.REGISTRATION_HOOKS.items():
            caller = getattr(self.manager.hook, hook_name)
            for impl in caller.get_hookimpls():  # registration order
                distribution = self._distribution_of.get(impl.plugin_name, impl.plugin_name)
                try:
                    provided = impl.function() or {}
                    items = dict(provided).items()
                except Exception as error:
                    self.failures.append(
                        PluginLoadFailure(
                            distribution=distribution,
                            entry_point=f"{impl.plugin_name}.{hook_name}",
                            error="".join(traceback.format_exception_only(error)).strip(),
                        )
                    )
                    continue
                for name, factory in items:
                    self._add(
                        PluginEntry(
                            kind=kind, name=name, distribution=distribution, factory=factory
                        )
                    )

    def _add(self, entry: PluginEntry) -> None:
        existing = self._entries[entry.kind].get(entry.name)
        if existing is not None:
            self.conflicts.append(
                PluginConflict(
                    kind=entry.kind,
                    name=entry.name,
                    distributions=(existing.distribution, entry.distribution),
                )
            )
            return
        self._entries[entry.kind][entry.name] = entry

    # --- lookup -----------------------------------------------------------------------

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def names(self, kind: str) -> list[str]:
        return sorted(self._entries[self._check_kind(kind)])

    def entries(self, kind: str | None = None) -> list[PluginEntry]:
        kinds = [self._check_kind(kind)] if kind else list(self._entries)
        return [e for k in kinds for _, e in sorted(self._entries[k].items())]

    def entry(self, kind: str, name: str) -> PluginEntry:
        kind = self._check_kind(kind)
        for conflict in self.conflicts:
            if conflict.kind == kind and conflict.name == name:
                raise DuplicatePluginError(kind, name, *conflict.distributions)
        try:
            return self._entries[kind][name]
        except KeyError:
            raise UnknownComponentError(kind.replace("_", " "), name, self._entries[kind]) from None

    def factory(self, kind: str, name: str) -> hookspecs.Factory:
        return self.entry(kind, name).factory

    def create(self, kind: str, name: str, **options: Any) -> Any:
        """Build component ``name`` of ``kind`` with ``options`` and check its protocol."""
        entry = self.entry(kind, name)
        label = f"{kind.replace('_', ' ')} {name!r} (from {entry.distribution})"
        try:
            component = entry.factory(**options)
        except TypeError as error:
            raise PluginContractError(
                f"{label} rejected options {sorted(options)}: {error}"
                + _valid_options_hint(entry.factory, options)
            ) from error
        except EnsemboError:
            raise  # the plugin's own error already names it (docs/plugin-authoring.md)
        except ValueError as error:  # a known option with a value the plugin refuses
            raise ComponentOptionError(f"{label} rejected options {options}: {error}") from error
        check_protocol(kind, component, f"{name!r} (from {entry.distribution})")
        return component

    def _check_kind(self, kind: str) -> str:
        if kind not in self._entries:
            raise UnknownComponentError("component kind", kind, self._entries)
        return kind


def check_protocol(kind: str, component: Any, label: str) -> None:
    """Raise :class:`PluginContractError` unless ``component`` fits the protocol of ``kind``."""
    protocol = PROTOCOLS.get(kind)
    if protocol is None:
        return
    accepted = (protocol, Proposer) if kind == "surrogate" else (protocol,)
    if not isinstance(component, accepted):
        wanted = " or ".join(p.__name__ for p in accepted)
        raise PluginContractError(
            f"{kind.replace('_', ' ')} {label} built a {type(component).__name__}, "
            f"which does not implement {wanted} (see ensembo.protocols)."
        )


@functools.cache
def registry() -> Registry:
    """The registry of every installed plugin (loaded once per process)."""
    return Registry.from_entry_points()


def reload_registry() -> Registry:
    """Forget the cached registry, e.g. after installing a plugin in this process."""
    registry.cache_clear()
    importlib.invalidate_caches()
    return registry()


NO_DEFAULT = inspect.Parameter.empty


def factory_options(factory: Any) -> dict[str, Any] | None:
    """Keyword options of a component factory and their defaults (``NO_DEFAULT`` if
    required); ``None`` when the signature cannot tell (``**kwargs``, builtins)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return {p.name: p.default for p in parameters
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}


def _valid_options_hint(factory: Any, options: Mapping[str, Any]) -> str:
    """'; unknown: …; its options: …' when the factory's signature tells them, else ''."""
    known = factory_options(factory)
    unknown = sorted(set(options) - set(known or options))
    if not unknown:
        return ""
    return f"; unknown: {', '.join(unknown)}; its options: {', '.join(known) or 'none'}"
