"""Which plugin distributions are loaded, and loading their entry points one by one.

Entry points in the ``ensembo`` group are imported one at a time: a distribution that
fails to import is recorded (distribution, entry point, error) and the others still
load. The :class:`~ensembo.registry.Registry` is built from what loaded.

Environment switches: ``ENSEMBO_DISABLE_PLUGIN_AUTOLOAD=1`` loads only ensembo's own
entry points; ``ENSEMBO_BLOCK_PLUGINS=dist1,dist2`` skips the named distributions.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import traceback
from collections.abc import Callable
from typing import Any

import attrs
import pluggy

from ensembo import hookspecs

# The registry's logger: a plugin that fails to load is logged under it, as it always was.
logger = logging.getLogger("ensembo.registry")


@attrs.frozen(kw_only=True)
class PluginLoadFailure:
    """An entry point that could not be imported or registered, or a hook mistake in it
    (``entry_point`` is then ``plugin_name.attribute``)."""

    distribution: str
    entry_point: str
    error: str


def canonical_distribution(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Ens_Foo`` is ``ens-foo``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def blocked_distributions() -> set[str]:
    """The ``ENSEMBO_BLOCK_PLUGINS`` names as written (for messages)."""
    raw = os.environ.get("ENSEMBO_BLOCK_PLUGINS", "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def autoload_disabled() -> bool:
    """Whether ``ENSEMBO_DISABLE_PLUGIN_AUTOLOAD`` limits the loading to ensembo's own."""
    return os.environ.get("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD", "") not in ("", "0", "false")


def load_entry_points(
    manager: pluggy.PluginManager, wanted: Callable[[str], bool]
) -> tuple[dict[str, str], list[PluginLoadFailure]]:
    """Register the entry points of the distributions ``wanted`` accepts, one by one.

    Returns ``{plugin name: distribution}`` and the entry points that failed to import:
    a broken distribution must not take the others down.
    """
    names: dict[str, str] = {}
    failures: list[PluginLoadFailure] = []
    for entry_point in importlib.metadata.entry_points(group=hookspecs.PROJECT):
        distribution = _distribution_name(entry_point)
        if not wanted(distribution):
            continue
        if distribution == UNNAMED_DISTRIBUTION:
            failures.append(_unnamed_failure(entry_point))
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
                    error=one_line(error),
                )
            )
            continue
        names[plugin_name] = distribution
    return names, failures


# What a distribution without a name in its metadata is called in messages.
UNNAMED_DISTRIBUTION = "<unnamed distribution>"


def _distribution_name(entry_point: Any) -> str:
    """The name of the distribution declaring ``entry_point``. While pip writes or
    removes a distribution its metadata can lack the name (read as None, or raising),
    and every ensembo command then failed with a TypeError from the name matching."""
    try:  # importlib_metadata, when installed, raises MetadataNotFound instead
        name = entry_point.dist.name if entry_point.dist is not None else None
    except Exception:
        name = None
    return name or UNNAMED_DISTRIBUTION


def _unnamed_failure(entry_point: Any) -> PluginLoadFailure:
    """Such a distribution is not imported (it may be half-written) but reported."""
    return PluginLoadFailure(
        distribution=UNNAMED_DISTRIBUTION,
        entry_point=f"{entry_point.name} = {entry_point.value}",
        error="its distribution's metadata has no name (being installed or removed, or "
        "damaged); not loaded: reinstall it, or uninstall it",
    )


def one_line(error: BaseException) -> str:
    """The error as a :class:`PluginLoadFailure` records it: type and message, one line."""
    return "".join(traceback.format_exception_only(error)).strip()
