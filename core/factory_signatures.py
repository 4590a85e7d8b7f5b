"""What a component factory's signature says: the options it takes and their
defaults, what a ``functools.partial`` factory binds, and whether a ``TypeError`` from
building it blames the options given or the factory itself."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Mapping
from typing import Any


def options_rejected(factory: Any, options: Mapping[str, Any], error: TypeError) -> bool:
    """Whether ``error``, raised by ``factory(**options)``, means the options do not fit
    the factory's signature — rather than a bug inside the factory, which must surface
    with its traceback instead of being blamed on the user's options."""
    if partial_binding_error(factory) is not None:
        return False  # the partial itself cannot build, whatever the options
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        # No readable signature: only an error raised by the call itself (no frame of
        # the factory's own in the traceback) is about the arguments.
        return error.__traceback__ is None or error.__traceback__.tb_next is None
    try:
        signature.bind(**options)
    except TypeError:
        return True
    return False


NO_DEFAULT = inspect.Parameter.empty


def unwrap_partial(factory: Any) -> tuple[Any, dict[str, Any]]:
    """The callable a (nested) ``functools.partial`` factory calls, and the keywords it
    binds (inner ones overridden by outer ones, as the call does); ``factory, {}`` for
    anything else."""
    bound: dict[str, Any] = {}
    while isinstance(factory, functools.partial):
        bound = {**factory.keywords, **bound}
        factory = factory.func
    return factory, bound


def foreign_bound_keywords(factory: Any) -> list[str]:
    """The keywords a ``functools.partial`` factory binds that its function does not take
    (the factory can never build: a bug of the plugin's, not of the options given)."""
    function, bound = unwrap_partial(factory)
    taken = factory_options(function) if function is not factory else None
    return [] if taken is None else [name for name in bound if name not in taken]


def partial_binding_error(factory: Any) -> str | None:
    """Why a ``functools.partial`` factory can never build: the arguments it binds do not
    fit its function (a keyword it does not take, a parameter bound both by position and
    by keyword); None when they fit, or for no partial or an unreadable signature."""
    function, keywords = unwrap_partial(factory)
    if function is factory:
        return None
    args: tuple[Any, ...] = ()
    while isinstance(factory, functools.partial):
        args = factory.args + args  # an inner partial's come first in the call
        factory = factory.func
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind_partial(*args, **keywords)
    except TypeError as error:
        return str(error)
    return None


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


def rejection(label: str, factory: Any, options: Mapping[str, Any], error: TypeError) -> str:
    """Why ``factory`` refused ``options``, naming only the options at fault: listing
    every option given as rejected sent users looking at the valid ones too."""
    known = factory_options(factory)
    if known is None:  # the signature cannot tell which: all of them, and Python's reason
        return f"{label} rejected options {sorted(options)}: {error}"
    # ``{}`` (a factory that takes no options) is a readable signature; only ``None`` is not.
    its_options = f"its options: {', '.join(known) or 'none'}"
    unknown = sorted(set(options) - set(known))
    if unknown:
        named = []
        for option in unknown:
            close = difflib.get_close_matches(str(option), list(known), n=1)
            named.append(f"{option} (did you mean {close[0]}?)" if close else str(option))
        return f"{label} rejected options {unknown}: unknown: {', '.join(named)}; {its_options}"
    missing = [name for name, default in known.items()
               if default is NO_DEFAULT and name not in options]
    if missing:
        needs = f"option {missing[0]}" if len(missing) == 1 else f"options {', '.join(missing)}"
        return f"{label} needs {needs} (required, not given); {its_options}"
    return f"{label} rejected options {sorted(options)}: {error}; {its_options}"
