"""Saying whose code failed when a plugin method raises.

A surrogate or ensemble strategy from a third-party distribution is called deep inside
the study loop, so its traceback alone reads like an ensembo bug. :func:`calling` adds
a note naming the component kind, the method and the class (with its module, which
names the distribution) to any exception that passes through, and keeps the traceback.
"""

from __future__ import annotations

from typing import Any


def describe_component(kind: str, component: Any) -> str:
    """``"surrogate mypkg.models.KNNSurrogate"``: the kind and where the class lives."""
    cls = type(component)
    return f"{kind} {cls.__module__}.{cls.__qualname__}"


#: How a :class:`calling` note begins, for readers of notes (the CLI tells a plugin's
#: broken contract from a user's mistake by it).
CALL_NOTE = "while calling "


class calling:  # noqa: N801 - used like a function: ``with calling(...):``
    """Note on any exception raised in the block that it came from ``component.method``.

    ``expects`` says what the caller needed back (e.g. ``"(mean, variance)"``), because
    a wrong return value fails in ensembo's code, one line after the plugin returned.
    A class rather than a generator: acquisition scoring enters it thousands of times.
    """

    __slots__ = ("kind", "component", "method", "expects")

    def __init__(self, kind: str, component: Any, method: str, expects: str = ""):
        self.kind = kind
        self.component = component
        self.method = method
        self.expects = expects

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> bool:
        if isinstance(error, Exception):
            needed = f"; it must return {self.expects}" if self.expects else ""
            error.add_note(
                f"{CALL_NOTE}{self.method}() of "
                f"{describe_component(self.kind, self.component)}{needed}"
            )
        return False
