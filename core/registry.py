"""Plugin discovery and name -> factory lookup.

Entry points in the ``ensembo`` group are loaded one by one, see
:mod:`ensembo.plugin_loading` (which distributions, and the environment switches
``ENSEMBO_DISABLE_PLUGIN_AUTOLOAD`` and ``ENSEMBO_BLOCK_PLUGINS``). Registration hooks
are called implementation by implementation so that every name is attributed to its
distribution. A name claimed twice is a conflict: if one claimant is
ensembo itself, ensembo's component keeps the name and the other is ignored (and
reported); between two other distributions the name is ambiguous and using it is an
error naming both. Mistakes that would otherwise be silent — a misspelt hook, a hook
function without ``@ensembo.hookimpl``, a factory that is not callable — are recorded
as failures and logged.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Iterable, Mapping
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
from ensembo.factory_refusals import refusal_by_declared_source, refusal_message
from ensembo.factory_signatures import options_rejected, rejection
from ensembo.plugin_checks import (
    article,
    check_protocol,
    find_hook_mistakes,
    new_plugin_manager,
)
from ensembo.plugin_loading import (
    PluginLoadFailure,
    autoload_disabled,
    blocked_distributions,
    canonical_distribution,
    load_entry_points,
    one_line,
)

logger = logging.getLogger(__name__)

OWN_DISTRIBUTION = "ensembo"


@attrs.frozen(kw_only=True)
class PluginEntry:
    """One registered component: its kind, name, factory and where it came from."""

    kind: str
    name: str
    distribution: str
    factory: hookspecs.Factory = attrs.field(eq=False)
    #: The pluggy plugin (``distribution:entry point``) whose hook registered it.
    plugin_name: str = attrs.field(default="", eq=False)


@attrs.frozen(kw_only=True)
class PluginConflict:
    """Distributions registering the same name for the same kind.

    ``winner`` is the distribution that keeps the name (ensembo, against a third party:
    one conflict per other claimant); ``None`` means the name is ambiguous, every
    claimant is in ``distributions``, and looking it up raises
    :class:`DuplicatePluginError`.
    """

    kind: str
    name: str
    distributions: tuple[str, ...]
    winner: str | None = None

    @property
    def ignored(self) -> str | None:
        """The distribution whose claim was dropped, if the conflict was resolved."""
        if self.winner is None:
            return None
        first, second = self.distributions
        return second if first == self.winner else first

    def describe(self) -> str:
        """One line for ``ensembo plugins``."""
        kind = self.kind.replace("_", " ")
        if self.winner is not None:
            return (
                f"{self.ignored}'s {kind} {self.name!r} ignored: "
                f"the name belongs to {self.winner}"
            )
        return f"conflict: {kind} {self.name!r} from {_listing(self.distributions)}"


def _listing(names: tuple[str, ...]) -> str:
    """``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


class Registry:
    """Every component ensembo knows, by kind and name.

    Build one with :meth:`from_entry_points` (what :func:`registry` does) or from
    explicit plugin objects with :meth:`from_plugins` (tests, embedding).
    """

    def __init__(
        self,
        manager: pluggy.PluginManager,
        distributions: Mapping[str, str],
        failures: Iterable[PluginLoadFailure] = (),
    ):
        self.manager = manager
        self.failures: list[PluginLoadFailure] = list(failures)
        self.conflicts: list[PluginConflict] = []
        self._entries: dict[str, dict[str, PluginEntry]] = {
            k: {} for k in hookspecs.REGISTRATION_HOOKS
        }
        self._distribution_of = dict(distributions)
        self._collect()
        self._record_hook_mistakes()

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_plugins(cls, plugins: Mapping[str, Any], *, builtins: bool = False) -> Registry:
        """Register ``{distribution name: plugin object}`` without entry points.

        With ``builtins=True`` ensembo's own components are registered first, so that a
        plugin under test can be used by name next to the defaults a study needs.
        """
        manager = new_plugin_manager()
        names: dict[str, str] = {}
        failures: list[PluginLoadFailure] = []
        if builtins:
            names, failures = load_entry_points(manager, lambda d: d == OWN_DISTRIBUTION)
        for distribution, plugin in plugins.items():
            name = manager.register(plugin, name=distribution)
            names[name] = distribution
        return cls(manager, names, failures)

    @classmethod
    def from_entry_points(cls) -> Registry:
        """Every installed distribution's entry points, minus the blocked ones."""
        manager = new_plugin_manager()
        # Compared as pip compares names, so `ens_foo` or `Ens-Foo` blocks `ens-foo`.
        blocked = {canonical_distribution(name) for name in blocked_distributions()}
        own_only = autoload_disabled()

        def wanted(distribution: str) -> bool:
            if canonical_distribution(distribution) in blocked:
                return False
            return distribution == OWN_DISTRIBUTION or not own_only

        names, failures = load_entry_points(manager, wanted)
        return cls(manager, names, failures)

    def _distribution(self, plugin_name: str) -> str:
        return self._distribution_of.get(plugin_name, plugin_name)

    def _fail(self, plugin_name: str, where: str, error: str) -> None:
        """Record a plugin mistake where ``ensembo plugins`` lists it, and log it."""
        distribution = self._distribution(plugin_name)
        logger.warning("plugin %s (%s): %s", plugin_name, distribution, error)
        self.failures.append(
            PluginLoadFailure(
                distribution=distribution, entry_point=f"{plugin_name}.{where}", error=error
            )
        )

    def _collect(self) -> None:
        """Call each registration hook implementation by implementation (so every name is
        attributed), then settle the names claimed more than once."""
        claims: dict[tuple[str, str], list[PluginEntry]] = {}
        for kind, hook_name in hookspecs.REGISTRATION_HOOKS.items():
            caller = getattr(self.manager.hook, hook_name)
            for impl in caller.get_hookimpls():  # registration order
                distribution = self._distribution(impl.plugin_name)
                try:
                    items = _registered_items(impl.function(), hook_name, impl.plugin_name,
                                              distribution)
                except _NotAMapping as refused:
                    self._fail(impl.plugin_name, hook_name, str(refused))
                    continue
                except Exception as error:
                    self._fail(impl.plugin_name, hook_name, one_line(error))
                    continue
                for name, factory in items:
                    if not isinstance(name, str) or not name:
                        # Sorting mixed keys would break every listing and unknown-name
                        # lookup, for every plugin: refuse just this name.
                        self._fail(impl.plugin_name, hook_name, _bad_name(kind, name))
                        continue
                    if not callable(factory):
                        self._fail(impl.plugin_name, hook_name, _not_callable(kind, name, factory))
                        continue
                    entry = PluginEntry(kind=kind, name=name, distribution=distribution,
                                        factory=factory, plugin_name=impl.plugin_name)
                    claims.setdefault((kind, name), []).append(entry)
        for (kind, name), entries in claims.items():
            self._entries[kind][name] = self._settle(entries)

    def _settle(self, claims: list[PluginEntry]) -> PluginEntry:
        """The entry that holds a name, recording a conflict for every other claim.

        ensembo's own component always keeps its name: otherwise any installed plugin
        reusing e.g. 'gp' would break every study that relies on the defaults. Between
        other distributions there is no rightful owner, so the conflict stays unresolved
        (the first claim is listed, but looking the name up raises).
        """
        claims = self._one_claim_per_distribution(claims)
        own = [c for c in claims if c.distribution == OWN_DISTRIBUTION]
        holder = own[0] if len(own) == 1 else claims[0]
        winner = OWN_DISTRIBUTION if len(own) == 1 else None
        if winner is None and len(claims) > 1:  # one conflict naming every claimant
            self.conflicts.append(PluginConflict(
                kind=holder.kind, name=holder.name,
                distributions=tuple(c.distribution for c in claims),
            ))
            return holder
        for other in claims:
            if other is holder:
                continue
            conflict = PluginConflict(
                kind=holder.kind,
                name=holder.name,
                distributions=(holder.distribution, other.distribution),
                winner=winner,
            )
            logger.warning("%s", conflict.describe())
            self.conflicts.append(conflict)
        return holder

    def _one_claim_per_distribution(self, claims: list[PluginEntry]) -> list[PluginEntry]:
        """Drop a distribution's second claim on a name, recording it as that plugin's
        mistake: two of its own entry points clash, which only its author can fix (and
        uninstalling or blocking the distribution would drop both)."""
        kept: dict[str, PluginEntry] = {}
        for claim in claims:
            first = kept.setdefault(claim.distribution, claim)
            if first is claim:
                continue
            hook = hookspecs.REGISTRATION_HOOKS[claim.kind]
            self._fail(claim.plugin_name, hook, (
                f"{claim.kind.replace('_', ' ')} {claim.name!r} is also registered by "
                f"{first.plugin_name}, another entry point of the same distribution "
                f"{claim.distribution!r}; {first.plugin_name}'s is used. Register the name "
                "from one entry point only, or rename one of them"
            ))
        return list(kept.values())

    def _record_hook_mistakes(self) -> None:
        """Misspelt or undecorated hooks register nothing and pluggy says nothing; this is
        where a plugin author learns about them."""
        for plugin in self.manager.get_plugins():
            plugin_name = self.manager.get_name(plugin) or repr(plugin)
            for attribute, message in find_hook_mistakes(plugin, self.manager):
                self._fail(plugin_name, attribute, message)

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
            if conflict.kind == kind and conflict.name == name and conflict.winner is None:
                raise DuplicatePluginError(kind, name, *conflict.distributions)
        try:
            return self._entries[kind][name]
        except KeyError:
            raise UnknownComponentError(
                kind.replace("_", " "), name, self._entries[kind], hint=self._failures_hint()
            ) from None

    def _failures_hint(self) -> str:
        """A name may be unknown only because the plugin providing it is broken, or was
        left out on purpose by the environment."""
        hints = []
        broken = list(dict.fromkeys(f.distribution for f in self.failures))
        if broken:
            plural = "s" if len(broken) > 1 else ""
            hints.append(
                f"{len(broken)} plugin distribution{plural} failed to load: "
                f"{', '.join(broken)} (see `ensembo plugins`)"
            )
        if autoload_disabled():
            hints.append("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD is set: only ensembo's own load")
        elif blocked := sorted(blocked_distributions()):
            hints.append(f"ENSEMBO_BLOCK_PLUGINS skips {', '.join(blocked)}")
        return "; ".join(hints)

    def factory(self, kind: str, name: str) -> hookspecs.Factory:
        return self.entry(kind, name).factory

    def create(self, kind: str, name: str, **options: Any) -> Any:
        """Build component ``name`` of ``kind`` with ``options`` and check its protocol."""
        entry = self.entry(kind, name)
        label = f"{kind.replace('_', ' ')} {name!r} (from {entry.distribution})"
        try:
            component = entry.factory(**options)
        except EnsemboError:
            raise  # the plugin's own error already names it (docs/plugin-authoring.md)
        except TypeError as error:
            if options_rejected(entry.factory, options, error):
                # first: the signature names the options at fault and the valid ones, which
                # a **options factory's own "unexpected options" message does not
                raise PluginContractError(
                    rejection(label, entry.factory, options, error)
                ) from error
            refusal = refusal_by_declared_source(entry.factory, options)
            if refusal is not None:  # its settings class refuses them too ("k must be an int")
                raise ComponentOptionError(
                    f"{label} rejected options {options}: {refusal_message(refusal)}"
                ) from error
            error.add_note(f"while building {label}")
            raise  # a bug inside the factory: keep its traceback
        except ValueError as error:
            if not options:  # nothing was given to refuse: a bug in the factory, not the user's
                error.add_note(f"while building {label}")
                raise
            # a known option with a value the plugin refuses
            raise ComponentOptionError(f"{label} rejected options {options}: {error}") from error
        except Exception as error:  # any other bug in the factory: say whose it is
            error.add_note(f"while building {label}")
            raise
        check_protocol(kind, component, f"{name!r} (from {entry.distribution})")
        return component

    def _check_kind(self, kind: str) -> str:
        if kind not in self._entries:
            raise UnknownComponentError("component kind", kind, self._entries)
        return kind


def _bad_name(kind: str, name: Any) -> str:
    return (
        f"{kind.replace('_', ' ')} name {name!r} is not a non-empty string; "
        "a component is looked up by its name, so register it under a str"
    )


class _NotAMapping(Exception):
    """A registration hook returned something other than a mapping."""


def _registered_items(
    provided: Any, hook_name: str, plugin_name: str, distribution: str
) -> list[tuple[Any, Any]]:
    """The ``(name, factory)`` pairs a registration hook returned (``None``: none).

    A list of names, or of pairs, was read by ``dict()`` as pairs of characters or taken
    silently; the hook's contract is a mapping, so anything else is refused whole.
    """
    if provided is None:
        return []
    if not isinstance(provided, Mapping):
        where = plugin_name if plugin_name == distribution else f"{plugin_name} ({distribution})"
        raise _NotAMapping(
            f"{hook_name} of {where} must return a mapping name -> factory, "
            f"got {type(provided).__name__}; e.g. return {{'my-name': MyClass}}"
        )
    return list(provided.items())


def _not_callable(kind: str, name: str, factory: Any) -> str:
    """Registering an instance instead of its class is an easy slip; ensembo calls the
    factory with the options, so the instance could never be used."""
    return (
        f"factory for {kind.replace('_', ' ')} {name!r} is "
        f"{article(type(factory).__name__)} {type(factory).__name__} "
        "instance, not a callable; return the class or a function"
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
