"""Whether a plugin factory refused its options itself: a ``TypeError`` it raised with a
``raise`` statement in its own code ("k must be an int, got str"), rather than one an
operation inside it raised (a bug, whose traceback the author needs)."""

from __future__ import annotations

import dis
from types import CodeType, TracebackType
from typing import Any

from ensembo.factory_signatures import unwrap_partial

_OWN_METHODS = ("__init__", "__new__", "__post_init__", "__attrs_post_init__")
"""A class factory's code that runs when it is called: its validation lives there."""


def raised_by_factory(factory: Any, error: BaseException) -> bool:
    """Whether ``error`` was raised by a ``raise`` statement in ``factory``'s own code
    (the function a ``functools.partial`` calls, a class's ``__init__``, ``__new__``,
    ``__post_init__`` or ``__attrs_post_init__``, a callable object's ``__call__``)."""
    innermost = _innermost(error.__traceback__)
    if innermost is None or innermost.tb_frame.f_code not in _own_code(factory):
        return False
    return any(
        instruction.offset == innermost.tb_lasti and instruction.opname == "RAISE_VARARGS"
        for instruction in dis.get_instructions(innermost.tb_frame.f_code)
    )


def _innermost(traceback: TracebackType | None) -> TracebackType | None:
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback


def _own_code(factory: Any) -> set[CodeType]:
    function, _ = unwrap_partial(factory)
    if isinstance(function, type):
        methods = [getattr(function, name, None) for name in _OWN_METHODS]
    elif hasattr(function, "__code__"):
        methods = [function]
    else:
        methods = [type(function).__call__] if callable(function) else []
    codes = (getattr(method, "__code__", None) for method in methods)
    return {code for code in codes if isinstance(code, CodeType)}
