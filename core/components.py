"""Turning a user's component spec into a component.

A spec is a registry name (``"gp"``), a mapping with a ``name`` and options
(``{"name": "gp", "kernel": "laplace"}``), or an object that already satisfies the
protocol. Only the first two can be written to storage and rebuilt on resume.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ensembo.errors import ComponentOptionError, ExperimentError, PluginContractError
from ensembo.registry import Registry, check_protocol, registry
from ensembo.trials import unwritable

# The experiment-file key of each component kind, where the two differ.
EXPERIMENT_KEYS = {"ensemble_strategy": "ensemble"}
# How storage records a component given as a live object: ``{"live": "ClassName"}``.
LIVE = "live"


def split_spec(kind: str, spec: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, options)`` for a name or mapping spec, ``None`` for an object."""
    key = EXPERIMENT_KEYS.get(kind, kind)
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping):
        if "name" not in spec:
            raise ExperimentError(key, f"a component mapping needs a 'name' key, got {dict(spec)}")
        options = {k: v for k, v in spec.items() if k != "name"}
        return str(spec["name"]), options
    if isinstance(spec, int | float | list | tuple | set):  # never a component object
        raise ExperimentError(
            key, f"expected a plugin name or a mapping with a 'name' key, got {spec!r}"
        )
    return None


def build(kind: str, spec: Any, reg: Registry | None = None) -> Any:
    """Build the component of ``kind`` described by ``spec``."""
    parts = split_spec(kind, spec)
    if parts is None:
        check_protocol(kind, spec, type(spec).__name__)
        return spec
    name, options = parts
    try:
        return (reg or registry()).create(kind, name, **options)
    except (ComponentOptionError, PluginContractError) as error:
        key = EXPERIMENT_KEYS.get(kind, kind)  # the experiment key, also the Study argument
        raise type(error)(f"{key}: {error}") from error


def describe(kind: str, spec: Any) -> dict[str, Any] | None:
    """JSON form of a spec for storage; ``None`` if the spec is a live object."""
    parts = split_spec(kind, spec)
    if parts is None:
        return None
    name, options = parts
    return {"name": name, **options}


def spec_text(spec: Mapping[str, Any]) -> str:
    """A stored ``{"name": ..., **options}`` as one line: ``gp {"kernel": "laplace"}``."""
    options = {k: v for k, v in spec.items() if k != "name"}
    return str(spec["name"]) + (f" {json.dumps(options, sort_keys=True)}" if options else "")


def describe_for_storage(kind: str, spec: Any) -> dict[str, Any] | None:
    """:func:`describe`, with a live object recorded as ``{"live": "ClassName"}``: a
    resume must be given it again, and a stored ``None`` surrogate means random search."""
    described = describe(kind, spec)
    if described is None and spec is not None:
        return {LIVE: type(spec).__qualname__}
    return described


def check_storable_specs(specs: Mapping[str, Any]) -> None:
    """A study file records each component spec, so an option it cannot write (a loss
    object as ``ensemble.loss``) is refused, named, before the file is made: it failed
    in the JSON encoder as 'cannot store LogLoss in a trial record', leaving an empty
    study file behind."""
    for kind, spec in specs.items():
        key = EXPERIMENT_KEYS.get(kind, kind)
        for option, value in (describe(kind, spec) or {}).items():
            place = unwritable(value, "its value")
            if place is not None:
                raise ExperimentError(
                    f"{key}.{option}", f"a study file cannot keep {place}: give components "
                    "and losses by registry name or as a mapping with a 'name' key and its "
                    "options, or keep the study in memory"
                )


def live_object_name(spec: Any) -> str | None:
    """The class name a stored spec records for a live object; ``None`` otherwise."""
    if isinstance(spec, Mapping) and set(spec) == {LIVE}:
        return str(spec[LIVE])
    return None
