"""Values a stored configuration holds for hyperparameters its space makes inactive.

Until 8 Dec 2026 (759a049) ensembo compiled ``ne`` to ConfigSpace's
``NotEqualsCondition``, which holds on an inactive parent: ``not_poly`` with ``when:
{model:svm:kernel: {ne: poly}}`` was sampled under ``model: lr``. Studies stored then
hold such values, which the space now refuses (a surrogate's encoding fails on them,
random search and TPE would learn from them). :func:`inactive_values` finds them, so
that a study can read its trials without them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ensembo.spaces.activity import deactivate
from ensembo.spaces.spec import Compare, Condition, Junction

_UNSET = object()  # a parent the configuration has no value for


@attrs.frozen
class InactiveValues:
    """The configurations (by position) that are valid once their values for inactive
    hyperparameters are left out, as they then are, and the names left out.
    ``ne_written``: the space's document has an ``ne`` condition, so the values may date
    from before ``ne`` required its parent active (a warning names that change only then)."""

    positions: tuple[int, ...] = ()
    configs: tuple[dict[str, Any], ...] = ()
    names: tuple[str, ...] = ()
    ne_written: bool = False


def inactive_values(space: Any, configs: Sequence[Mapping[str, Any]]) -> InactiveValues:
    """The ``configs`` whose only problem in ``space`` is values of hyperparameters that
    their own values make inactive; any other invalid configuration is left out.

    Activity depends only on the values of the conditions' parents, so it is decided
    once per distinct combination of them, on ConfigSpace vectors, and the few
    configurations with such values are checked together (:meth:`Space.valid_rows`):
    a stored study of 2,000 trials is read in milliseconds more, not seconds."""
    parents = _parent_names(space)
    if not parents:
        return InactiveValues()
    keys = [tuple(config.get(name, _UNSET) for name in parents) for config in configs]
    active_by_key = _active_names(space, parents, keys)
    known = set(space.names)
    found: list[tuple[int, dict[str, Any], list[str]]] = []
    for position, (config, key) in enumerate(zip(configs, keys, strict=True)):
        active = _lookup(active_by_key, key)
        if active is None:
            continue
        inactive = [name for name in config if name in known and name not in active]
        if inactive:
            kept = {name: value for name, value in config.items() if name not in inactive}
            found.append((position, kept, inactive))
    if not found:
        return InactiveValues()
    valid = space.valid_rows([kept for _, kept, _ in found])
    found = [entry for entry, ok in zip(found, valid, strict=True) if ok]
    return InactiveValues(
        positions=tuple(position for position, _, _ in found),
        configs=tuple(kept for _, kept, _ in found),
        names=tuple(sorted({name for _, _, inactive in found for name in inactive})),
        ne_written=_ne_written(space),
    )


def _ne_written(space: Any) -> bool:
    """Whether a ``when`` of the space's document uses ``ne`` (a loaded ConfigSpace has
    no document: its NotEqualsCondition kept its own meaning)."""
    spec = getattr(space, "spec", None)
    return spec is not None and any(_uses_ne(param.when) for param in spec.params)


def _uses_ne(condition: Condition | None) -> bool:
    if isinstance(condition, Junction):
        return any(_uses_ne(item) for item in condition.items)
    return isinstance(condition, Compare) and condition.op == "ne"


def _parent_names(space: Any) -> tuple[str, ...]:
    """The hyperparameters some condition reads, in the space's order."""
    parents_of = space.configspace.parents_of
    read = {parent.name for name in space.names for parent in parents_of[name]}
    return tuple(name for name in space.names if name in read)


def _lookup(table: dict[Hashable, Any], key: tuple[Any, ...]) -> Any:
    try:
        return table.get(key)
    except TypeError:  # an unhashable (damaged) value: not a problem of activity
        return None


def _active_names(
    space: Any, parents: tuple[str, ...], keys: Sequence[tuple[Any, ...]]
) -> dict[Hashable, frozenset[str]]:
    """The hyperparameters active when the ``parents`` take the values of each key
    (the other hyperparameters' values do not matter), decided for every distinct key
    at once; a key with a value its parent does not take is left out."""
    columns = [space.names.index(name) for name in parents]
    rows: dict[Hashable, np.ndarray] = {}
    for key in keys:
        try:
            if key in rows:
                continue
        except TypeError:
            continue
        vector = _parent_vector(space, parents, columns, key)
        if vector is not None:
            rows[key] = vector
    if not rows:
        return {}
    active = ~np.isnan(deactivate(space.configspace, np.array(list(rows.values()))))
    names = np.array(space.names, dtype=object)
    return {key: frozenset(names[on]) for key, on in zip(rows, active, strict=True)}


def _parent_vector(
    space: Any, parents: tuple[str, ...], columns: list[int], values: tuple[Any, ...]
) -> np.ndarray | None:
    """A ConfigSpace vector with the parents' ``values`` (NaN for one unset) and 0 for
    every other hyperparameter; None when a value is not one its parent takes."""
    vector = np.zeros(space.dimension)
    for name, column, value in zip(parents, columns, values, strict=True):
        if value is _UNSET:
            vector[column] = np.nan
            continue
        try:
            vector[column] = float(space.configspace[name].to_vector(value))
        except (KeyError, ValueError, TypeError):
            return None
    return vector
