"""Whether a ``TypeError`` a plugin factory raised refuses the options given, or is a bug
of its own.

Decided by the settings class the factory declares (:func:`~ensembo.declares_options`):
built again with the same options, it refuses them too (an attrs ``instance_of``
validator, a raise in ``__attrs_post_init__``) or it accepts them, and then the factory
failed for another reason ("requires torch"). A refusal counts only if the source builds
without the user's options (the control): one failing either way has a bug of its own,
which the rebuild merely repeated. A factory that declares no source gives nothing to
decide by: where in its code the error was raised cannot tell "k must be an int" from
"requires torch" (both a ``raise`` in ``__init__``), so such a ``TypeError`` is the
plugin's bug, reported with its traceback (docs/plugin-authoring.md §5).
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
    source, a source that needs what the factory supplies itself, one that accepts them,
    or one that fails without them too (the control: a bug, not a refusal).
    """
    function, bound = unwrap_partial(factory)
    source = getattr(function, OPTIONS_SOURCE, None)
    if not options or source is None:
        return None
    given = {**bound, **options}
    signature = inspect.signature(source)
    try:
        signature.bind(**given)
    except (TypeError, ValueError):
        return None  # it needs an argument the factory passes itself (declared ``without``)
    refusal = _build_error(source, given)
    if not isinstance(refusal, (TypeError, ValueError)):
        return None  # accepted, or failed as no option refusal does: the factory's bug
    if _can_bind(signature, bound) and _build_error(source, bound) is not None:
        return None  # it fails without the user's options as well: a bug, whatever they are
    return refusal


def _build_error(source: Any, arguments: Mapping[str, Any]) -> Exception | None:
    """What building ``source`` with ``arguments`` raises, or None. Any ``Exception`` is
    caught: escaping from here, it would replace the factory's own error and its note."""
    try:
        source(**arguments)
    except Exception as error:
        return error
    return None


def _can_bind(signature: inspect.Signature, arguments: Mapping[str, Any]) -> bool:
    """Whether the control can be built: a source requiring an option the user gave cannot
    be built without it, and then its refusal alone decides."""
    try:
        signature.bind(**arguments)
    except TypeError:
        return False
    return True


def signature_only(source: Any) -> Any:
    """A stand-in for ``source`` for :func:`~ensembo.declares_options` that has its
    signature but builds nothing and refuses nothing: for a class that refuses bad options
    with ``ValueError`` itself (so each of its ``TypeError`` is a bug) and whose
    constructor must not run twice (costly, side effects, or the bug would repeat)."""

    def accepts_any(**options: Any) -> None:
        """Refuses nothing: every option error of the class is its own ``ValueError``."""

    accepts_any.__signature__ = inspect.signature(source)  # type: ignore[attr-defined]
    return accepts_any


def refusal_message(refusal: BaseException) -> str:
    """The refusal's message alone: attrs validators raise ``TypeError(message,
    attribute, type, value)``, whose ``str`` is the whole tuple."""
    if len(refusal.args) > 1 and isinstance(refusal.args[0], str):
        return refusal.args[0]
    return str(refusal)
