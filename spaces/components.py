"""Estimator components of executable spaces: reference -> factory, argument checks.

A reference is a dotted path (``sklearn.svm.SVC``) or a name registered under the
registry kind ``estimator`` (hook ``ensembo_add_estimators``), so third parties can add
components without touching ensembo.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import attrs

from ensembo.errors import SpaceError


@attrs.frozen
class LazyEstimator:
    """A factory that imports its class on first call, so registering costs no import."""

    path: str

    def __call__(self, **arguments: Any) -> Any:
        return import_path(self.path)(**arguments)


def import_path(path: str) -> Any:
    """The object at dotted ``path``; raises ``ImportError`` naming what failed."""
    module_name, _, attribute = path.rpartition(".")
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name, attribute_names = ".".join(parts[:cut]), parts[cut:]
        try:
            found: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        try:
            for attribute in attribute_names:
                found = getattr(found, attribute)
        except AttributeError:
            raise ImportError(
                f"module {module_name!r} has no attribute {'.'.join(attribute_names)!r}"
            ) from None
        return found
    raise ImportError(f"cannot import {path!r}: no importable module in it")


def resolve(reference: str) -> Callable[..., Any]:
    """The factory ``reference`` names; raises :class:`SpaceError` when there is none."""
    if "." in reference:
        try:
            found = import_path(reference)
        except ImportError as error:
            raise SpaceError("", f"estimator {reference!r} is not importable: {error}") from None
        _check_callable(reference, found)
        return found
    from ensembo.registry import registry  # the registry imports plugins; keep it lazy

    try:
        return registry().factory("estimator", reference)
    except LookupError as error:
        raise SpaceError("", f"estimator {reference!r}: {error} Or give a dotted path.") from None


def _check_callable(reference: str, found: Any) -> None:
    """Refuse what cannot build an estimator (``sklearn.svm``, a module, or a constant)
    now, at load time, instead of on the first ``build``."""
    if callable(found):
        return
    what = "a module" if inspect.ismodule(found) else f"a {type(found).__name__}"
    raise SpaceError(
        "",
        f"estimator {reference!r} is {what}, not a class or factory; "
        f"name a class in it (e.g. {reference}.ClassName)",
    )


def accepted_arguments(factory: Callable[..., Any]) -> set[str] | None:
    """Keyword arguments ``factory`` accepts; None when it takes ``**kwargs`` (unknown)."""
    target = factory
    if isinstance(factory, LazyEstimator):
        target = import_path(factory.path)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    names = set()
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if parameter.kind in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            names.add(parameter.name)
    return names
