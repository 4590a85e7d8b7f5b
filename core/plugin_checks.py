"""Diagnosing plugins: hooks pluggy would silently ignore, and protocol fit.

Both checks exist for plugin authors: a misspelt or undecorated hook registers nothing
without a word from pluggy, and ``isinstance`` against a runtime protocol says only
"no", not which method is missing.
"""

from __future__ import annotations

import difflib
import logging
import typing
from typing import Any

import pluggy

from ensembo import hookspecs
from ensembo.errors import PluginContractError
from ensembo.protocols import PROTOCOLS, Proposer

logger = logging.getLogger(__name__)


def article(word: str) -> str:
    return "an" if word[:1].lower() in tuple("aeiou") else "a"


def new_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


HOOK_PREFIX = f"{hookspecs.PROJECT}_"


def hook_names(manager: pluggy.PluginManager) -> list[str]:
    """Every hook ensembo declares, registration and lifecycle alike."""
    return sorted(
        name for name in dir(hookspecs)
        if name.startswith(HOOK_PREFIX) and manager.parse_hookspec_opts(hookspecs, name)
    )


def find_hook_mistakes(
    plugin: Any, manager: pluggy.PluginManager | None = None
) -> list[tuple[str, str]]:
    """``(attribute, message)`` for each hook of ``plugin`` that pluggy silently ignores.

    Two mistakes do nothing at all: a ``@hookimpl`` function whose name is no hook (a
    typo), and a function named like a hook but not decorated. Both look fine to the
    author, so they are reported. ``plugin`` is looked at as registered on ``manager``
    (entry-point modules, ``Study`` callbacks), or on a throw-away manager if it is not.
    Never raises: it only diagnoses.
    """
    try:
        if manager is None or not manager.is_registered(plugin):
            manager = new_plugin_manager()
            manager.register(plugin)
        specs = hook_names(manager)
        mistakes = [
            (caller.name, _unknown_hook_message(caller.name, specs))
            for caller in manager.get_hookcallers(plugin) or ()
            if not caller.has_spec()
        ]
        for name in specs:
            function = getattr(plugin, name, None)
            if manager.parse_hookspec_opts(plugin, name):
                continue  # the specification itself, e.g. star-imported from hookspecs
            if callable(function) and not _implements(manager, plugin, name):
                mistakes.append(
                    (name, f"defines {name} without @ensembo.hookimpl, so pluggy ignores it")
                )
        return mistakes
    except Exception:  # a diagnosis must never stop plugins from loading
        logger.debug("could not check the hooks of %r", plugin, exc_info=True)
        return []


def _implements(manager: pluggy.PluginManager, plugin: Any, hook_name: str) -> bool:
    caller = getattr(manager.hook, hook_name)
    return any(impl.plugin is plugin for impl in caller.get_hookimpls())


def _unknown_hook_message(name: str, specs: list[str]) -> str:
    """Names the closest hook, comparing without the ``ensembo_`` prefix every hook shares
    (with it, any ``ensembo_*`` name looks close to some hook)."""
    by_suffix = {spec.removeprefix(HOOK_PREFIX): spec for spec in specs}
    close = difflib.get_close_matches(name.removeprefix(HOOK_PREFIX), by_suffix, n=1)
    if close:
        return f"unknown hook {name!r} (did you mean {by_suffix[close[0]]!r}?)"
    return f"unknown hook {name!r}; the hooks are listed in ensembo.hookspecs"


# --- protocols -------------------------------------------------------------------------

_PROTOCOL_MACHINERY = (object, typing.Protocol, typing.Generic)
_SPECIAL_MEMBERS = frozenset({"__call__"})  # the one dunder a protocol here declares


def protocol_members(protocol: type) -> list[str]:
    """Methods and attributes ``protocol`` requires, read from its class bodies.

    (``typing`` keeps this list privately, and differently across Python versions.)
    """
    members: set[str] = set()
    for klass in protocol.__mro__:
        if klass in _PROTOCOL_MACHINERY:
            continue
        names = [*vars(klass), *vars(klass).get("__annotations__", {})]
        members.update(n for n in names if not n.startswith("_") or n in _SPECIAL_MEMBERS)
    return sorted(members)


def _missing(component: Any, protocol: type) -> list[str]:
    return [m for m in protocol_members(protocol) if not hasattr(component, m)]


def check_protocol(kind: str, component: Any, label: str | None = None) -> None:
    """Raise :class:`PluginContractError` unless ``component`` fits the protocol of ``kind``.

    ``label`` names the registered component that built it (``'knn' (from dist)``);
    ``None``, or the component's own type name, means the object was given directly.
    """
    protocol = PROTOCOLS.get(kind)
    if protocol is None:
        return
    accepted = (protocol, Proposer) if kind == "surrogate" else (protocol,)
    if isinstance(component, accepted):
        return
    wanted = " or ".join(p.__name__ for p in accepted)
    missing = [(p.__name__, _missing(component, p)) for p in accepted]
    if len(accepted) == 1:
        lacks = ", ".join(missing[0][1])
    else:
        lacks = " or ".join(f"{', '.join(names)} (for {p})" for p, names in missing if names)
    detail = f": missing {lacks}" if lacks else ""
    kind_name = kind.replace("_", " ")
    type_name = type(component).__name__
    if label is None or label == type_name:  # components.build passes the type name
        found = f"the {type_name} given as the {kind_name} does not implement {wanted}"
    else:
        found = (
            f"{kind_name} {label} built {article(type_name)} {type_name}, "
            f"which does not implement {wanted}"
        )
    raise PluginContractError(f"{found}{detail} (see ensembo.protocols).")
