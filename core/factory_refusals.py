"""Whether a ``TypeError`` a plugin factory raised refuses the options given, or is a bug
of its own.

Decided by the settings class the factory declares (:func:`~ensembo.declares_options`):
built again with the same options, it refuses them too (an attrs ``instance_of``
validator, a raise in ``__attrs_post_init__``) or it accepts them, and then the factory
failed for another reason ("requires torch"). A factory that declares no source gives
nothing to decide by: where in its code the error was raised cannot tell "k must be an
int" from "requires torch" (both a ``raise`` in ``__init__``), so such a ``TypeError``
is the plugin's bug, reported with its traceback (docs/plugin-authoring.md §5).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ensembo.factory_signatures import unwrap_partial
from ensembo.hookspecs import OPTIONS_SOURCE


def refusal_by_declared_source(
    factory: Any, options: Mapping[str, Any]
) -> TypeError | ValueError | None:
    """The error the source ``factory`` declares raises when built with ``options`` (and
    the keywords a ``functools.partial`` factory binds), or None: no options, no declared
    source, a source that needs what the factory supplies itself, or one that accepts them.
    """
    function, bound = unwrap_partial(factory)
    source = getattr(function, OPTIONS_SOURCE, None)
    if not options or source is None:
        return None
    given = {**bound, **options}
    try:
        inspect.signature(source).bind(**given)
    except (TypeError, ValueError):
        return None  # it needs an argument the factory passes itself (declared ``without``)
    try:
        source(**given)
    except (TypeError, ValueError) as refusal:
        return refusal
    return None


def refusal_message(refusal: BaseException) -> str:
    """The refusal's message alone: attrs validators raise ``TypeError(message,
    attribute, type, value)``, whose ``str`` is the whole tuple."""
    if len(refusal.args) > 1 and isinstance(refusal.args[0], str):
        return refusal.args[0]
    return str(refusal)
