"""Every configuration of a small finite space, for a search that must know when it
has tried them all.

Prior draws find the last untried configurations of a small discrete space slowly (a
run of 40 trials over 40 configurations repeated two while two were never drawn);
listing the space finds them at once, and tells an exhausted space from an unlucky one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    IntegerHyperparameter,
    OrdinalHyperparameter,
)

from ensembo.errors import SpaceError
from ensembo.spaces import quantize


def every_config(space: Any, limit: int) -> list[dict[str, Any]] | None:
    """All configurations of ``space`` (forbidden ones left out, each once), or None
    when a hyperparameter takes infinitely many values or they combine in more than
    ``limit`` ways."""
    hyperparameters = [space.hyperparameter(name) for name in space.names]
    counts = [_value_count(hp) for hp in hyperparameters]
    if None in counts or math.prod(counts) > limit:
        return None
    grids = [_vector_grid(hp) for hp in hyperparameters]
    listing: dict[Any, dict[str, Any]] = {}
    for config in _valid_configs(space, itertools.product(*grids)):
        listing.setdefault(_key(config), config)  # inactive values collapse
    return list(listing.values())


def _valid_configs(space: Any, rows: Iterator[tuple[float, ...]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        try:
            yield space.from_vectors(np.array(row))[0]
        except SpaceError:
            continue  # a forbidden clause refuses it


def _value_count(hp: Any) -> int | None:
    """How many values ``hp`` takes (a stepped float counted on its grid), or None."""
    step = quantize.step_of(hp)
    if step is not None and not isinstance(hp, IntegerHyperparameter):
        return quantize.steps_in(hp.lower, hp.upper, step) + 1
    size = hp.size
    return int(size) if math.isfinite(size) else None


def _vector_grid(hp: Any) -> np.ndarray:
    """ConfigSpace vector values of every value ``hp`` takes; stepped values snap in
    ``Space.from_vectors``, and their repeats collapse in the listing."""
    if isinstance(hp, Constant):
        return np.asarray(hp.to_vector(hp.value), dtype=float).reshape(1)
    if isinstance(hp, CategoricalHyperparameter | OrdinalHyperparameter):
        return np.arange(hp.size, dtype=float)
    if isinstance(hp, IntegerHyperparameter):
        values = np.arange(hp.lower, hp.upper + 1)
    else:
        values = np.minimum(hp.lower + quantize.step_of(hp) * np.arange(_value_count(hp)), hp.upper)
    return np.asarray(hp.to_vector(values), dtype=float)


def _key(config: dict[str, Any]) -> tuple:
    return tuple(sorted(config.items()))
